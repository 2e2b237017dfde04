"""`cachelab search SPEC --slo p99<=2ms`: the highest load of one configuration meeting an SLO.

An open-loop spec (`workload.rate_ops > 0`) is searched on its offered rate, starting there; a
closed-loop spec on `topology.clients_per_thread`. `settings_for` checks everything before a
process starts; `run_local` runs the search locally into a results folder (spec.yaml,
metadata.json, raw/p<step>-r<attempt>/, search.json, search.csv, search.png, answer.txt).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

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
from cachelab.search.steps import PROBE
from cachelab.slo import parse_slo
from cachelab.spec import LOADGEN_MAX_RATE_PER_THREAD, Spec, load_spec

if TYPE_CHECKING:
    from cachelab.experiment import Executor
    from cachelab.results import ResultsDir

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
    "run_k8s",
    "run_local",
    "settings_for",
]

RATE_AXIS = "workload.rate_ops"
CLIENTS_AXIS = "topology.clients_per_thread"
MAX_CLIENTS_PER_THREAD = 1024
ANSWER_FILE = "answer.txt"


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


def _check_resume(resume: Path, settings: SearchSettings, full: Spec) -> None:
    from cachelab.results import ResultsDir

    saved = SearchSettings.load(resume)
    if saved != settings:
        raise SearchError(
            f"--resume {resume}: it searched {saved.slo} on {saved.axis} with tolerance "
            f"{saved.tolerance_pct:g} %, not this search"
        )
    if load_spec(ResultsDir(resume).spec_file) != full:
        raise SearchError(f"--resume {resume}: its spec.yaml is not this spec")


def run_local(
    spec_path: Path,
    settings: SearchSettings,
    point: int | None,
    base: Path | None,
    resume: Path | None,
    console: Console,
) -> tuple[Path, Answer]:
    """The search on the local target (new folder under `base`, or `resume`'s)."""
    from cachelab.local.runner import LocalRunner, prepare_results
    from cachelab.local.tools import Toolchain
    from cachelab.paths import repo_root
    from cachelab.results import ResultsDir

    full = load_spec(spec_path)
    spec = choose_point(full, point)
    root = repo_root()
    tools = Toolchain.discover(root, need_middleware=spec.topology.middlewares > 0)
    if resume is not None:
        _check_resume(resume, settings, full)
        results = ResultsDir(resume)
    else:
        results = prepare_results(
            full, spec_path, base or root / "results", tools, {"target": "local", "search": True}
        )
        settings.save(results.path)
    return _drive(spec, settings, results, LocalRunner(spec, spec_path, results, tools), console)


def k8s_problem(spec: Spec, settings: SearchSettings, options: RunOptions) -> str | None:
    """Why this search cannot run on Kubernetes (one line), or None; nothing is installed."""
    from cachelab.k8s import plan
    from cachelab.k8s.runner import target_of, values_files

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


def run_k8s(
    spec_path: Path,
    settings: SearchSettings,
    point: int | None,
    options: RunOptions,
    console: Console,
) -> tuple[Path, Answer]:
    """The search on Kubernetes: every step is a run of the benchmark Jobs (new folder under
    `options.results`, or `options.resume`'s)."""
    from cachelab.k8s.runner import connect
    from cachelab.results import ResultsDir

    full = load_spec(spec_path)
    spec = choose_point(full, point)
    problem = k8s_problem(spec, settings, options)
    if problem is not None:
        raise SearchError(problem)
    session = connect(options, [spec])
    if options.resume is not None:
        _check_resume(options.resume, settings, full)
        results = ResultsDir(options.resume)
    else:
        results = session.new_results(full, options)
        settings.save(results.path)
    return _drive(spec, settings, results, session.runner(spec, results, console), console)


def _drive(
    spec: Spec,
    settings: SearchSettings,
    results: ResultsDir,
    runner: Executor,
    console: Console,
) -> tuple[Path, Answer]:
    """The search's steps run by `runner` into `results`; the answer, the figure and the model
    written beside them."""
    from cachelab.experiment import _signals_as_interrupt, shielded
    from cachelab.report.search_plots import write_search_figure
    from cachelab.results import finish_metadata
    from cachelab.results.metadata import read_metadata
    from cachelab.results.noise import load_warning
    from cachelab.search.measure import RunnerSteps
    from cachelab.search.model import beside_model
    from cachelab.search.steps import Step
    from cachelab.terminal import RunLines

    console.print(f"results: {results.path}", highlight=False)
    warning = load_warning(os.getloadavg()[0], os.cpu_count(), "at the start")
    if warning:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    slo = parse_slo(settings.slo)
    reporter = RunLines(console, spec.run.duration_s)
    runner.live = reporter.live  # type: ignore[attr-defined]
    steps = RunnerSteps(
        spec, settings.axis, slo, results, runner, reporter, steps_estimate(settings)
    )

    def show(step: Step) -> None:
        load = "closed loop" if step.verdict == PROBE else f"{step.load:g}"
        console.print(
            f"  step {step.step} attempt {step.attempt}: {load} -> {step.verdict} ({step.note})",
            highlight=False,
        )

    driver = SearchDriver(settings, results.path, steps, on_step=show)
    label = load_label(settings, spec)
    try:
        with _signals_as_interrupt():
            answer = driver.run()
    finally:
        with shielded():
            write_search_figure(results.path, driver.steps, slo, driver.answer().load, label)
            finish_metadata(results.metadata_file)
    unit = "requests/s" if settings.open_loop else "clients per thread"
    text = answer.text(slo, unit)
    host = read_metadata(results.metadata_file).get("host") or {}
    cores = int(host.get("cpu_count") or os.cpu_count() or 0) if isinstance(host, dict) else 0
    model = beside_model(results.path, driver.steps, answer.load, cores)
    if model is not None:
        model.save(results.path)
        text += "\n" + model.text()
    (results.path / ANSWER_FILE).write_text(text + "\n")
    return results.path, answer
