"""Per-point inputs of the operational analysis and the models, from the aggregated points and
the runs read by `cachelab.results` (data, not paths)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from cachelab.analysis import models as model_lib
from cachelab.analysis.links import NO_LINKS, LinkDelay, LinkDelays, achieved_delays
from cachelab.analysis.operational import OperationalAnalysis, PointMeasurement, analyse, combine
from cachelab.columns import (
    MW_QUEUE_LENGTH,
    MW_QUEUE_TIME_MS,
    MW_RESPONSE_TIME_MS,
    MW_SERVICE_TIME_MS,
    MW_STAGING_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    OFFERED_OPS_PER_S,
    RESPONSE_TIME_MS,
    THINK_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
)
from cachelab.results.experiment import Experiment
from cachelab.results.run import RunData
from cachelab.spec import Network


def _value(row: pd.Series, column: str, default: float = math.nan) -> float:
    value = row.get(column, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def process_cpu(runs: Sequence[RunData]) -> dict[str, tuple[str, float]]:
    """Per process name, its role and CPU seconds per second averaged over the runs that
    sampled it."""
    found: dict[str, list[float]] = {}
    roles: dict[str, str] = {}
    for run in runs:
        for cpu in run.cpu:
            found.setdefault(cpu.name, []).append(cpu.cores)
            roles[cpu.name] = cpu.role
    return {name: (roles[name], sum(v) / len(v)) for name, v in found.items()}


def process_cpu_limit(runs: Sequence[RunData]) -> dict[str, float]:
    """Per pod name, its CPU cap in cores, as a Kubernetes run recorded it (point.json's
    `usage.cpu_limit_cores`; empty for a local run)."""
    found: dict[str, float] = {}
    for run in runs:
        usage = run.record.extra.get("usage") or {}
        for name, cores in (usage.get("cpu_limit_cores") or {}).items():
            found[str(name)] = float(cores)
    return found


def process_wait(runs: Sequence[RunData]) -> dict[str, float]:
    """Per process name, its threads' run-queue wait seconds per second averaged over the runs
    (NaN when a run did not measure it)."""
    found: dict[str, list[float]] = {}
    for run in runs:
        for cpu in run.cpu:
            found.setdefault(cpu.name, []).append(cpu.wait_cores)
    return {name: sum(v) / len(v) for name, v in found.items()}


def process_path(runs: Sequence[RunData]) -> dict[str, tuple[float, float]]:
    """Per process name, its request-path threads' CPU and run-queue wait seconds per second
    averaged over the runs (NaN when a run did not measure them)."""
    found: dict[str, list[tuple[float, float]]] = {}
    for run in runs:
        for cpu in run.cpu:
            found.setdefault(cpu.name, []).append((cpu.path_cores, cpu.path_wait_cores))
    return {
        name: (sum(c for c, _ in v) / len(v), sum(w for _, w in v) / len(v))
        for name, v in found.items()
    }


def pool_threads(runs: Sequence[RunData]) -> tuple[float, float]:
    """CPU and run-queue wait seconds per second of the middlewares' worker-pool threads,
    summed over the middlewares and averaged over the runs (NaN when not measured)."""
    cpu, wait = [], []
    for run in runs:
        rows = [c for c in run.cpu if c.role == "middleware"]
        if rows:
            cpu.append(sum(c.pool_cores for c in rows))
            wait.append(sum(c.pool_wait_cores for c in rows))
    if not cpu:
        return math.nan, math.nan
    return sum(cpu) / len(cpu), sum(wait) / len(wait)


def pool_slices(runs: Sequence[RunData]) -> float:
    """Times per second the middlewares' worker-pool threads were put on a CPU, summed over
    the middlewares and averaged over the runs (NaN when not measured)."""
    found = []
    for run in runs:
        rows = [c for c in run.cpu if c.role == "middleware"]
        if rows:
            found.append(sum(c.pool_slices_per_s for c in rows))
    return sum(found) / len(found) if found else math.nan


def link_loads(runs: Sequence[RunData]) -> dict[str, tuple[float, float]]:
    """Per shaped link (local `--bandwidth`; on Kubernetes each pod's egress limit), the bytes
    it carried per loadgen request and its rate in Mbit/s: the class's (pod's) bytes sent while
    shaped (point.json `bandwidth.links`) over the
    requests the loadgens completed in their whole run, averaged over the runs that counted
    them (empty when none did: unshaped, or recorded before the counters were)."""
    found: dict[str, list[float]] = {}
    mbit: dict[str, float] = {}
    for run in runs:
        requests = sum(c.run.totals.count for c in run.clients)
        shaping = run.record.extra.get("bandwidth")
        links = shaping.get("links") if isinstance(shaping, dict) else None
        for link in links if isinstance(links, list) else []:
            sent, rate = link.get("sent_bytes"), link.get("mbit")
            if requests > 0 and isinstance(sent, int) and rate:
                found.setdefault(str(link["name"]), []).append(sent / requests)
                mbit[str(link["name"])] = float(rate)
    return {name: (sum(v) / len(v), mbit[name]) for name, v in found.items()}


def measurement(
    row: pd.Series,
    runs: Sequence[RunData],
    host_cores: int,
    server_threads: int = 4,
    suffix: str = "",
) -> PointMeasurement:
    """One summary row (one repetition; ``suffix=""``) or one aggregated point
    (``suffix="_mean"``) and its run(s) as a PointMeasurement."""

    def metric(name: str) -> float:
        return _value(row, f"{name}{suffix}")

    pool_cores, pool_wait_cores = pool_threads(runs)
    middlewares = int(_value(row, "middlewares", 0.0))
    spec_links = spec_delays(runs[0].record.spec, middlewares) if runs else NO_LINKS
    return PointMeasurement(
        point=int(row["point"]),
        clients=int(row[TOTAL_CLIENTS]),
        think_time_ms=_value(row, THINK_TIME_MS, 0.0),
        throughput_ops_per_s=metric(THROUGHPUT_OPS_PER_S),
        response_time_ms=metric(RESPONSE_TIME_MS),
        middlewares=middlewares,
        workers=int(_value(row, "workers", 0.0)),
        servers=int(_value(row, "servers", 0.0)),
        mw_throughput_ops_per_s=metric(MW_THROUGHPUT_OPS_PER_S),
        mw_response_time_ms=metric(MW_RESPONSE_TIME_MS),
        mw_queue_time_ms=metric(MW_QUEUE_TIME_MS),
        mw_service_time_ms=metric(MW_SERVICE_TIME_MS),
        mw_queue_length=metric(MW_QUEUE_LENGTH),
        host_cores=host_cores,
        process_cpu=process_cpu(runs),
        server_threads=server_threads,
        process_wait=process_wait(runs),
        pool_cores=pool_cores,
        pool_wait_cores=pool_wait_cores,
        process_path=process_path(runs),
        mw_staging_time_ms=metric(MW_STAGING_TIME_MS),
        pool_slices_per_s=pool_slices(runs),
        process_cpu_limit=process_cpu_limit(runs),
        pipelined=any(
            math.isfinite(_value(row, c))
            for c in (OFFERED_OPS_PER_S, f"{OFFERED_OPS_PER_S}{suffix}")
        ),
        event_loops=max((event_loops_of(run.record.spec) for run in runs), default=0),
        links=achieved_delays(row, suffix).merged_over(spec_links),
        spec_links=spec_links,
        link_loads=link_loads(runs),
    )


def spec_delays(spec_dump: dict[str, Any] | None, middlewares: int) -> LinkDelays:
    """The RTTs a resolved spec asks for on the topology's links: `network.rtt_ms.<link>`
    (configured), else its `network.profile`'s (the seed report's number); none when the spec
    predates the `network` section or sets no RTT."""
    network = (spec_dump or {}).get("network")
    if not isinstance(network, dict):
        return NO_LINKS
    given = network.get("rtt_ms") or {}
    return LinkDelays(
        tuple(
            LinkDelay(
                link.name,
                link.rtt_ms,
                "configured" if given.get(link.name) is not None else "profile",
                link.source,
            )
            for link in Network.model_validate(network).links(middlewares)
        )
    )


def event_loops_of(spec_dump: dict[str, Any] | None) -> int:
    """The middlewares' --event-loops from a resolved spec (0 when it predates the setting)."""
    loops = ((spec_dump or {}).get("topology") or {}).get("event_loops")
    return loops if isinstance(loops, int) and loops > 0 else 0


def server_threads_of(spec_dump: dict[str, Any]) -> int:
    """Worker threads of one backend server from a resolved spec: memcached -t (memcached's own
    default, 4, when the spec predates the setting), 1 for redis."""
    topology = spec_dump.get("topology") or {}
    if topology.get("backend") == "redis":
        return 1
    server = spec_dump.get("server")
    threads = ((server or {}).get("memcached") or {}).get("threads") if server else None
    return int(threads) if isinstance(threads, int) and threads > 0 else 4


def analyse_point(
    point: int, summary: pd.DataFrame, experiment: Experiment, host_cores: int
) -> tuple[OperationalAnalysis, list[model_lib.ModelRow], list[PointMeasurement]]:
    """A point's analysis and model rows, each repetition calibrated and solved with its own
    measured demands and then averaged (the means of noisy repetitions do not obey the
    interactive law, their own numbers do). Returns the repetitions' measurements too."""
    analyses, rows = [], []
    measurements = []
    for _, rep in summary[summary["point"] == point].iterrows():
        run = experiment.run(point, int(rep["repetition"]))
        runs = [run] if run is not None else []
        threads = server_threads_of(run.record.spec) if run is not None else 4
        m = measurement(rep, runs, host_cores, threads)
        measurements.append(m)
        analyses.append(analyse(m))
        rows.append(model_lib.model_rows(m, analyses[-1]))
    return combine(analyses), model_lib.combine_rows(rows), measurements
