"""`cachelab search SPEC --slo p99<=2ms`: the highest load of one configuration meeting an SLO.

An open-loop spec (`workload.rate_ops > 0`) is searched on its offered rate, starting there; a
closed-loop spec on `topology.clients_per_thread`. `settings_for` checks everything before a
process starts; `SearchRun` (cachelab.search.run) runs it on a target into a results folder
(spec.yaml, metadata.json, raw/p<step>-r<attempt>/, search.json, search.csv, answer.txt; the
command adds search.png).
"""

from __future__ import annotations

import math

from cachelab.options import RunOptions
from cachelab.search.bisection import Bisection, Bracket
from cachelab.search.driver import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_TOLERANCE_PCT,
    Answer,
    SearchDriver,
    SearchError,
    SearchSettings,
)
from cachelab.slo import parse_slo
from cachelab.spec import LOADGEN_MAX_RATE_PER_THREAD, Spec

__all__ = [
    "Answer",
    "Bisection",
    "Bracket",
    "SearchDriver",
    "SearchError",
    "SearchSettings",
    "choose_point",
    "k8s_problem",
    "load_label",
    "settings_for",
    "steps_estimate",
]

RATE_AXIS = "workload.rate_ops"
CLIENTS_AXIS = "topology.clients_per_thread"
MAX_CLIENTS_PER_THREAD = 1024


def choose_point(spec: Spec, point: int | None) -> Spec:
    """The one configuration searched: the spec itself, or point `point` of its sweep."""
    points = spec.points()
    if point is None:
        if spec.sweep:
            raise SearchError(
                f"the spec sweeps {', '.join(spec.sweep)}; a search takes one configuration: "
                f"choose one with --point 0..{len(points) - 1}"
            )
        return spec
    if not 0 <= point < len(points):
        raise SearchError(f"--point {point}: the spec's points are numbered 0..{len(points) - 1}")
    return points[point].spec


def settings_for(
    spec: Spec,
    slo: str,
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    max_load: float | None = None,
    probe: bool = True,
) -> SearchSettings:
    """The search of one configuration (up to `max_load` if given; an open-loop one starting
    from a closed-loop capacity probe unless `probe` is False); every problem is a SloError or
    SearchError."""
    parse_slo(slo)
    if not 0 < tolerance_pct < 100:
        raise SearchError(f"--tolerance {tolerance_pct:g}: must be between 0 and 100 (percent)")
    if max_attempts < 1:
        raise SearchError(f"--attempts {max_attempts}: must be >= 1")
    topology = spec.topology
    if spec.workload.open_loop:
        axis, start = RATE_AXIS, spec.workload.rate_ops
        lowest = max(1.0, topology.total_clients / spec.run.measured_s)
        highest = topology.instances * topology.threads * LOADGEN_MAX_RATE_PER_THREAD
    else:
        axis, start = CLIENTS_AXIS, float(topology.clients_per_thread)
        lowest, highest = 1.0, float(MAX_CLIENTS_PER_THREAD)
    if max_load is not None:
        if not start <= max_load <= highest:
            raise SearchError(
                f"--max-load {max_load:g}: must be between the spec's start ({start:g}) and "
                f"{highest:g}"
            )
        highest = max_load
    probing = probe and spec.workload.open_loop
    return SearchSettings(slo, axis, start, lowest, highest, tolerance_pct, max_attempts, probing)


def load_label(settings: SearchSettings, spec: Spec) -> str:
    if settings.open_loop:
        return "offered load (requests/s, open loop)"
    per = spec.topology.instances * spec.topology.threads
    return f"clients per loadgen thread ({per} threads, closed loop)"


def steps_estimate(settings: SearchSettings) -> int:
    """Roughly how many runs a search takes: a guided open-loop one its probe and about four
    steps; otherwise a few to bracket, then halvings to the tolerance."""
    if settings.open_loop:
        return int(settings.probe) + 4
    return 3 + max(1, math.ceil(math.log2(100.0 / settings.tolerance_pct)))


def k8s_problem(spec: Spec, settings: SearchSettings, options: RunOptions) -> str | None:
    """Why this search cannot run on Kubernetes (one line), or None; nothing is installed."""
    from cachelab.k8s import plan
    from cachelab.k8s.target import target_of, values_files

    extra, _ = values_files(options)
    if not extra:
        return (
            "--target k8s: each step installs the release with the point's values over your "
            "cluster's: name them with --values FILE or $CACHELAB_K8S_VALUES (e.g. "
            "charts/testbed/examples/local-values.yaml on the local cluster)"
        )
    loads = {settings.start, settings.highest} | ({0.0} if settings.probe else set())
    try:
        target = target_of(options)
        for load in sorted(loads):
            value: float | int = load if settings.open_loop else int(load)
            stepped = spec.with_values({settings.axis: value})
            plan.check(stepped)
            plan.job_config(stepped, target)
    except plan.PlanError as error:
        return str(error)
    return None
