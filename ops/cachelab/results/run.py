"""Everything of one run, read and trimmed: `read_run(RunDir) -> RunData`.

The summary row, the report and every analysis take their numbers from a `RunData`; nothing
else opens the raw files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hdrh.histogram import HdrHistogram

from cachelab.results.cpu import ProcessCpu, measured_cpu, read_cpu_samples
from cachelab.results.errors import ResultsError
from cachelab.results.hdr import decode_histogram, merge_histograms, read_hdr_log
from cachelab.results.layout import RunDir
from cachelab.results.memtier import LoadgenRun, SeriesWindow, read_loadgen_json
from cachelab.results.middleware import (
    MiddlewareStats,
    MiddlewareWindow,
    measured_windows,
    read_middleware_config,
    read_middleware_summary,
    read_server_requests,
    read_windows,
)
from cachelab.results.records import PointRecord
from cachelab.results.trim import MeasuredInterval

PERCENTILES = (50.0, 90.0, 99.0)
OP_TYPES = ("get", "multiget", "set")


@dataclass
class ClientStats:
    """One loadgen instance's numbers over the measured interval."""

    source: Path
    run: LoadgenRun
    totals: SeriesWindow
    gets: SeriesWindow
    sets: SeriesWindow
    hits: float
    misses: float
    errors: float
    percentiles_ms: dict[float, float]
    histogram: HdrHistogram | None  # µs, measured interval (HDR logs) or whole run (JSON)
    histogram_source: str  # "interval-log", "json" or ""
    start_epoch_ms: float | None

    @property
    def throughput(self) -> float:
        return self.totals.ops_per_s


def client_stats(
    path: Path, interval: MeasuredInterval, hdr_logs: Iterable[Path] = ()
) -> ClientStats:
    """Read one loadgen JSON (and its HDR interval logs) trimmed to the measured interval."""
    run = read_loadgen_json(path)
    totals = run.measured("Totals", interval)
    gets = run.measured("Gets", interval)
    sets = run.measured("Sets", interval)
    if not run.totals.time_series and ("Gets" in run.stats or "Sets" in run.stats):
        totals = SeriesWindow(
            gets.count + sets.count,
            gets.latency_sum_ms + sets.latency_sum_ms,
            max(gets.seconds, sets.seconds),
        )
    logs = [read_hdr_log(p) for p in hdr_logs]
    histogram = merge_histograms(log.measured(interval) for log in logs)
    source = "interval-log" if histogram is not None else ""
    if histogram is None:
        histogram = decode_histogram(run.totals.compressed_histogram)
        source = "json" if histogram is not None else ""
    elapsed_s = (run.duration_ms or 0.0) / 1000.0 or float(interval.end_s)
    gets_block = run.stats.get("Gets")
    return ClientStats(
        source=path,
        run=run,
        totals=totals,
        gets=gets,
        sets=sets,
        hits=round((gets_block.hits_per_s if gets_block else 0.0) * elapsed_s),
        misses=round((gets_block.misses_per_s if gets_block else 0.0) * elapsed_s),
        errors=run.totals.errors,
        percentiles_ms=dict(run.totals.percentiles_ms),
        histogram=histogram,
        histogram_source=source,
        start_epoch_ms=run.start_epoch_ms,
    )


@dataclass
class MiddlewareData:
    """One middleware of a run: measured totals, per op type, and every window (the trace)."""

    name: str
    all: MiddlewareStats
    by_op: dict[str, MiddlewareStats]
    windows: list[MiddlewareWindow]
    workers: int | None
    server_requests: dict[str, int] = field(default_factory=dict)  # whole run, per server


@dataclass
class RunData:
    """One point and repetition, read through the results package."""

    run: RunDir
    record: PointRecord
    interval: MeasuredInterval
    clients: list[ClientStats]
    missing_loadgens: int
    middlewares: list[MiddlewareData]
    cpu: list[ProcessCpu]
    origin_epoch_ms: float | None
    problems: list[str] = field(default_factory=list)

    @property
    def point(self) -> int:
        return self.record.point

    @property
    def repetition(self) -> int:
        return self.record.repetition

    @property
    def status(self) -> str:
        if self.record.status == "ok" and self.missing_loadgens:
            return "partial"
        return self.record.status

    def histogram(self) -> HdrHistogram | None:
        """The clients' latency histogram (µs) merged over instances; None unless every
        instance has one."""
        found = [c.histogram for c in self.clients]
        if not found or any(h is None for h in found):
            return None
        return merge_histograms(found)


def interval_of(spec: dict[str, object]) -> MeasuredInterval:
    """The measured interval of a resolved spec (point.json's `spec`)."""
    run = spec.get("run")
    if not isinstance(run, dict):
        raise ResultsError("point.json: spec has no 'run' block")
    return MeasuredInterval.of_run(
        int(run["warmup_s"]), int(run["cooldown_s"]), int(run["duration_s"])
    )


def _loadgen_inputs(
    run: RunDir, record: PointRecord
) -> list[tuple[Path, list[Path], float | None]]:
    if record.loadgens:
        found = []
        for entry in record.loadgens:
            prefix = entry.get("hdr_prefix")
            logs = run.hdr_logs(str(prefix)) if prefix else []
            found.append((run.path / str(entry["json"]), logs, entry.get("launch_epoch_ms")))
        return found
    return [(p, run.hdr_logs(f"{p.stem}-hdr"), None) for p in run.loadgen_files()]


def _middlewares(
    run: RunDir, record: PointRecord, origin: float | None, interval: MeasuredInterval
) -> list[MiddlewareData]:
    names = [str(m["stats_dir"]) for m in record.middlewares] or [
        p.name for p in run.middleware_dirs()
    ]
    found = []
    for name in names:
        folder = run.path / name
        windows = read_windows(folder / "windows.csv")
        by_op: dict[str, MiddlewareStats] = {}
        total = None
        if origin is not None and windows:
            total = measured_windows(windows, origin, interval)
            for op in OP_TYPES:
                stats = measured_windows(windows, origin, interval, op)
                if stats is not None and stats.count > 0:
                    by_op[op] = stats
        total = total or read_middleware_summary(folder / "summary.json")
        if total is None:
            continue
        if not by_op:
            for op in OP_TYPES:
                try:
                    stats = read_middleware_summary(folder / "summary.json", op)
                except ResultsError:
                    stats = None
                if stats is not None and stats.count > 0:
                    by_op[op] = stats
        workers = read_middleware_config(folder / "summary.json").get("workers")
        found.append(
            MiddlewareData(
                name,
                total,
                by_op,
                windows,
                int(workers) if workers else None,
                read_server_requests(folder / "summary.json"),
            )
        )
    return found


def read_run(run: RunDir) -> RunData:
    """Read one run's point.json and every raw file it names, trimmed by the one rule."""
    record = PointRecord.load(run.point_file)
    interval = interval_of(record.spec)
    clients: list[ClientStats] = []
    missing = 0
    for json_path, logs, launch_ms in _loadgen_inputs(run, record):
        if not json_path.is_file():
            missing += 1
            continue
        stats = client_stats(json_path, interval, logs)
        if stats.start_epoch_ms is None and launch_ms is not None:
            stats.start_epoch_ms = float(launch_ms)
        clients.append(stats)
    starts = [c.start_epoch_ms for c in clients if c.start_epoch_ms]
    origin = min(starts) if starts else None
    cpu = measured_cpu(read_cpu_samples(run.cpu_file), origin, interval) if origin else []
    return RunData(
        run=run,
        record=record,
        interval=interval,
        clients=clients,
        missing_loadgens=missing,
        middlewares=_middlewares(run, record, origin, interval),
        cpu=cpu,
        origin_epoch_ms=origin,
    )


def window_series(
    clients: Sequence[LoadgenRun], interval: MeasuredInterval
) -> list[tuple[int, float, float]]:
    """Per measured second: (second, requests summed over instances, mean latency ms weighted
    by counts; NaN for an idle second). Every second of the interval is a row."""
    counts = {s: 0.0 for s in range(interval.start_s, interval.end_s)}
    sums = dict.fromkeys(counts, 0.0)
    for client in clients:
        for second, bucket in client.totals.time_series.items():
            if second in counts:
                counts[second] += bucket.count
                sums[second] += bucket.count * bucket.average_latency_ms
    return [
        (s, counts[s], sums[s] / counts[s] if counts[s] else float("nan")) for s in sorted(counts)
    ]
