"""Turn the raw outputs of a run into one `summary.csv` row (docs/interfaces.md §4).

Inputs, per `raw/p<point>-r<rep>/`:

- `loadgen-<i>.json`: memtier's `--json-out-file` layout (real memtier's and our loadgen's).
- `loadgen-<i>-hdr*` (optional): HdrHistogram interval logs written with `--hdr-file-prefix`.
- `middleware-<j>/windows.csv` and `middleware-<j>/summary.json`: the middleware's statistics.
- `point.json`: what the runner started (resolved spec, start times, exit codes).

Trimming. The client numbers cover the seconds `s` of memtier's per-second `Time-Serie` with
`warmup_s <= s < duration_s - cooldown_s`: throughput is the requests counted in those seconds
divided by their number, the mean response time is the count-weighted mean of the per-second
averages. Percentiles come from the instances' HdrHistogram interval logs merged over the same
seconds; without logs, from the JSON's compressed whole-run histograms merged; without those, the
count-weighted mean of the instances' JSON percentiles (an approximation). Hits and misses are
whole-run counts (`Hits/sec` and `Misses/sec` times the run time): the Time-Serie does not carry
them. Errors are memtier's `Connection Errors` plus our loadgen's `Error Replies` (absent from
memtier's output). The middleware numbers come from its 1-second `windows.csv` rows that fall
inside the clients' measured interval (wall-clock aligned with the loadgens'
`Start time`), falling back to its own trimmed `summary.json`.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hdrh.histogram import HdrHistogram

BASE_COLUMNS = ["point", "repetition"]
CONFIG_COLUMNS = ["total_clients", "workers", "middlewares", "servers", "think_time_ms"]
METRIC_COLUMNS = [
    "throughput_ops_per_s",
    "get_ops_per_s",
    "set_ops_per_s",
    "response_time_ms",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "hits",
    "misses",
    "miss_ratio",
    "errors",
    "mw_throughput_ops_per_s",
    "mw_response_time_ms",
    "mw_queue_time_ms",
    "mw_service_time_ms",
    "mw_queue_length",
    "status",
]

_STATS_SECTIONS = ("ALL STATS", "AGGREGATED AVERAGE RESULTS")
_PERCENTILES = {"p50_ms": 50.0, "p90_ms": 90.0, "p99_ms": 99.0}


class SummaryError(ValueError):
    """A raw output that cannot be read; the message names the file and what is wrong."""


def summary_columns(axes: Sequence[str]) -> list[str]:
    """The summary.csv header for a spec with these sweep axes."""
    extra = [a for a in axes if a not in BASE_COLUMNS + CONFIG_COLUMNS + METRIC_COLUMNS]
    return BASE_COLUMNS + extra + CONFIG_COLUMNS + METRIC_COLUMNS


# --- memtier JSON -----------------------------------------------------------------------------

_BAD_NUMBERS = re.compile(r"(?<![\w.\"])(-?nan|-?inf|9223372036854776\.000)(?![\w\"])")


def load_memtier_json(path: Path) -> dict[str, Any]:
    """Parse memtier's JSON; `-nan`, `inf` and the int64-max sentinel become 0 (as PKB does)."""
    try:
        text = path.read_text()
    except OSError as error:
        raise SummaryError(f"{path}: cannot read ({error.strerror})") from None
    try:
        data = json.loads(_BAD_NUMBERS.sub("0.000", text))
    except json.JSONDecodeError as error:
        raise SummaryError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise SummaryError(f"{path}: top level is not an object")
    return data


def stats_section(data: dict[str, Any], source: Path | str) -> dict[str, Any]:
    """The `ALL STATS` block (or the aggregated average when memtier ran several times)."""
    for key, value in data.items():
        if key.startswith(_STATS_SECTIONS) and isinstance(value, dict):
            return value
    raise SummaryError(f"{source}: no 'ALL STATS' section (keys: {sorted(data)})")


def _num(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


@dataclass
class SeriesWindow:
    """Requests and latency of one op type summed over the measured seconds."""

    count: float = 0.0
    latency_sum_ms: float = 0.0
    seconds: int = 0

    @property
    def ops_per_s(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    @property
    def mean_latency_ms(self) -> float:
        return self.latency_sum_ms / self.count if self.count else 0.0


def trimmed_series(
    op_block: dict[str, Any], start_s: float, end_s: float, run_seconds: int | None = None
) -> SeriesWindow:
    """Sum a `Time-Serie` over the seconds in [start_s, end_s).

    The divisor is the number of whole seconds in the interval that the run lasted (a second
    without requests still counts), so an idle client lowers the throughput as it should.
    """
    series = op_block.get("Time-Serie") or {}
    window = SeriesWindow()
    present = set()
    for key, entry in series.items():
        try:
            second = int(key)
        except ValueError:
            continue
        if not start_s <= second < end_s or not isinstance(entry, dict):
            continue
        present.add(second)
        count = _num(entry.get("Count"))
        window.count += count
        window.latency_sum_ms += count * _num(entry.get("Average Latency"))
    last = max((int(k) for k in series if k.isdigit()), default=-1)
    lasted = run_seconds if run_seconds is not None else last + 1
    window.seconds = max(0, min(int(end_s), lasted) - int(start_s)) if series else 0
    if window.seconds == 0 and present:
        window.seconds = len(present)
    return window


@dataclass
class ClientStats:
    """One loadgen instance's numbers over the measured interval."""

    source: Path
    totals: SeriesWindow
    gets: SeriesWindow
    sets: SeriesWindow
    hits: float
    misses: float
    errors: float
    percentiles_ms: dict[str, float]
    histogram: HdrHistogram | None
    start_epoch_ms: float | None

    @property
    def throughput(self) -> float:
        return self.totals.ops_per_s


def _op_block(stats: dict[str, Any], name: str) -> dict[str, Any]:
    block = stats.get(name)
    return block if isinstance(block, dict) else {}


def _json_percentiles(block: dict[str, Any]) -> dict[str, float]:
    found = {}
    table = block.get("Percentile Latencies") or {}
    for column, p in _PERCENTILES.items():
        key = f"p{p:.2f}"
        if key in table:
            found[column] = _num(table[key])
    return found


def _json_histogram(block: dict[str, Any]) -> HdrHistogram | None:
    table = block.get("Percentile Latencies") or {}
    log_format = table.get("Histogram log format") or {}
    payload = log_format.get("Compressed Histogram")
    if not payload:
        return None
    try:
        return HdrHistogram.decode(payload)
    except Exception:  # a payload hdrh cannot decode: fall back to the JSON percentiles
        return None


def client_stats(
    path: Path,
    warmup_s: int,
    cooldown_s: int,
    duration_s: int,
    hdr_logs: Iterable[Path] = (),
) -> ClientStats:
    """Read one loadgen JSON and trim it to [warmup_s, duration_s - cooldown_s)."""
    data = load_memtier_json(path)
    stats = stats_section(data, path)
    totals_block = _op_block(stats, "Totals")
    gets_block = _op_block(stats, "Gets")
    sets_block = _op_block(stats, "Sets")
    if not totals_block:
        raise SummaryError(f"{path}: 'ALL STATS' has no 'Totals'")
    runtime = stats.get("Runtime") or {}
    run_ms = _num(runtime.get("Total duration"))
    run_seconds = math.ceil(run_ms / 1000.0 - 1e-6) if run_ms > 0 else None
    start, end = warmup_s, duration_s - cooldown_s
    totals = trimmed_series(totals_block, start, end, run_seconds)
    gets = trimmed_series(gets_block, start, end, run_seconds)
    sets = trimmed_series(sets_block, start, end, run_seconds)
    if not totals_block.get("Time-Serie") and (gets_block or sets_block):
        totals = SeriesWindow(
            gets.count + sets.count,
            gets.latency_sum_ms + sets.latency_sum_ms,
            max(gets.seconds, sets.seconds),
        )
    elapsed_s = run_ms / 1000.0 if run_ms > 0 else float(duration_s)
    histogram = merge_histograms(read_hdr_interval_log(p, start, end) for p in hdr_logs)
    if histogram is None:
        histogram = _json_histogram(totals_block)
    start_ms = _num(runtime.get("Start time")) or None
    return ClientStats(
        source=path,
        totals=totals,
        gets=gets,
        sets=sets,
        hits=round(_num(gets_block.get("Hits/sec")) * elapsed_s),
        misses=round(_num(gets_block.get("Misses/sec")) * elapsed_s),
        errors=_num(totals_block.get("Connection Errors"))
        + _num(totals_block.get("Error Replies")),
        percentiles_ms=_json_percentiles(totals_block),
        histogram=histogram,
        start_epoch_ms=start_ms,
    )


# --- HdrHistogram logs ------------------------------------------------------------------------

_INTERVAL = re.compile(r"^(?:Tag=[^,]*,)?([\d.]+),([\d.]+),([\d.]+),(\S+)\s*$")
_START_TIME = re.compile(r"^#\[StartTime: ([\d.]+)")
_BASE_TIME = re.compile(r"^#\[BaseTime: ([\d.]+)")


def read_hdr_interval_log(path: Path, start_s: float, end_s: float) -> HdrHistogram | None:
    """Merge the intervals of an HdrHistogram log that start in [start_s, end_s) of the run.

    Interval start times are taken relative to the log's first interval (or its `StartTime`).
    A log with a single interval (a whole-run histogram, as memtier writes) is used whole.
    """
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    start_time: float | None = None
    base_time: float | None = None
    intervals: list[tuple[float, str]] = []
    for line in lines:
        if line.startswith("#"):
            if match := _START_TIME.match(line):
                start_time = float(match.group(1))
            elif match := _BASE_TIME.match(line):
                base_time = float(match.group(1))
            continue
        if match := _INTERVAL.match(line):
            intervals.append((float(match.group(1)), match.group(4)))
    if not intervals:
        return None
    first = intervals[0][0]
    if start_time is None:
        start_time = first
    if base_time is None:  # timestamps more than a year before StartTime are relative
        base_time = start_time if first < start_time - 365 * 24 * 3600 else 0.0
    origin = min(start_time, first + base_time)
    chosen = [
        payload
        for stamp, payload in intervals
        if len(intervals) == 1 or start_s - 0.5 <= stamp + base_time - origin < end_s - 0.5
    ]
    histograms = []
    for payload in chosen:
        try:
            histograms.append(HdrHistogram.decode(payload))
        except Exception as error:  # hdrh raises several types on a corrupt payload
            raise SummaryError(f"{path}: cannot decode an interval histogram ({error})") from None
    return merge_histograms(histograms)


def merge_histograms(histograms: Iterable[HdrHistogram | None]) -> HdrHistogram | None:
    """Sum histograms (None entries are skipped); None when there is none."""
    present = [h for h in histograms if h is not None]
    if not present:
        return None
    merged = HdrHistogram(
        min(h.lowest_trackable_value for h in present),
        max(h.highest_trackable_value for h in present),
        max(h.significant_figures for h in present),
    )
    for histogram in present:
        merged.add(histogram)
    return merged


# --- middleware -------------------------------------------------------------------------------


@dataclass
class MiddlewareStats:
    """One middleware's numbers over the measured interval."""

    throughput: float
    count: float
    response_time_ms: float
    queue_time_ms: float
    service_time_ms: float
    queue_length: float
    source: str


def middleware_from_windows(
    path: Path, start_epoch_ms: float, end_epoch_ms: float
) -> MiddlewareStats | None:
    """Aggregate the `op=all` rows of windows.csv whose midpoint lies in [start, end)."""
    if not path.is_file():
        return None
    rows = []
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("op") != "all":
                continue
            middle = _num(row.get("start_epoch_ms")) + _num(row.get("duration_ms")) / 2.0
            if start_epoch_ms <= middle < end_epoch_ms:
                rows.append(row)
    if not rows:
        return None
    count = sum(_num(r["count"]) for r in rows)
    seconds = sum(_num(r["duration_ms"]) for r in rows) / 1000.0

    def weighted(column: str) -> float:
        if count == 0:
            return 0.0
        return sum(_num(r["count"]) * _num(r[column]) for r in rows) / count / 1000.0

    return MiddlewareStats(
        throughput=count / seconds if seconds else 0.0,
        count=count,
        response_time_ms=weighted("response_time_mean_us"),
        queue_time_ms=weighted("queue_time_mean_us"),
        service_time_ms=weighted("service_time_mean_us"),
        queue_length=(
            sum(_num(r["queue_length_mean"]) * _num(r["duration_ms"]) for r in rows)
            / (seconds * 1000.0)
            if seconds
            else 0.0
        ),
        source="windows.csv",
    )


def middleware_from_summary(path: Path) -> MiddlewareStats | None:
    """The middleware's own trimmed summary.json (its `ops.all` block)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        block = data["ops"]["all"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise SummaryError(f"{path}: not a middleware summary ({error})") from None
    return MiddlewareStats(
        throughput=_num(block.get("throughput_ops_per_s")),
        count=_num(block.get("count")),
        response_time_ms=_num((block.get("response_time_us") or {}).get("mean")) / 1000.0,
        queue_time_ms=_num((block.get("queue_time_us") or {}).get("mean")) / 1000.0,
        service_time_ms=_num((block.get("service_time_us") or {}).get("mean")) / 1000.0,
        queue_length=_num((data.get("queue_length") or {}).get("mean")),
        source="summary.json",
    )


# --- one run ----------------------------------------------------------------------------------


@dataclass
class RunInputs:
    """What summarising one run needs (read from point.json)."""

    point: int
    repetition: int
    values: dict[str, Any]
    spec: dict[str, Any]
    status: str
    loadgens: list[dict[str, Any]] = field(default_factory=list)
    middlewares: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, run_dir: Path) -> RunInputs:
        path = run_dir / "point.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise SummaryError(f"{path}: cannot read ({error})") from None
        return cls(
            point=int(data["point"]),
            repetition=int(data["repetition"]),
            values=dict(data.get("values", {})),
            spec=dict(data["spec"]),
            status=str(data.get("status", "ok")),
            loadgens=list(data.get("loadgens", [])),
            middlewares=list(data.get("middlewares", [])),
        )


def _weighted_mean(pairs: Iterable[tuple[float, float]]) -> float | None:
    pairs = list(pairs)
    weight = sum(w for w, _ in pairs)
    if weight <= 0:
        return None
    return sum(w * v for w, v in pairs) / weight


def _loadgen_files(run_dir: Path, inputs: RunInputs) -> list[tuple[Path, list[Path], float | None]]:
    found = []
    if inputs.loadgens:
        for entry in inputs.loadgens:
            json_path = run_dir / entry["json"]
            prefix = entry.get("hdr_prefix")
            logs = sorted(run_dir.glob(f"{prefix}*FULL_RUN*.txt")) if prefix else []
            found.append((json_path, logs, entry.get("launch_epoch_ms")))
    else:
        for json_path in sorted(run_dir.glob("loadgen-*.json")):
            stem = json_path.stem
            found.append((json_path, sorted(run_dir.glob(f"{stem}-hdr*FULL_RUN*.txt")), None))
    return found


def summarize_run(run_dir: Path) -> dict[str, Any]:
    """One summary.csv row for `raw/p<point>-r<rep>/`."""
    inputs = RunInputs.load(run_dir)
    spec = inputs.spec
    topology, workload, run = spec["topology"], spec["workload"], spec["run"]
    warmup, cooldown, duration = (
        int(run["warmup_s"]),
        int(run["cooldown_s"]),
        int(run["duration_s"]),
    )
    total_clients = (
        topology["client_machines"]
        * topology["instances_per_machine"]
        * topology["threads"]
        * topology["clients_per_thread"]
    )
    row: dict[str, Any] = {
        "point": inputs.point,
        "repetition": inputs.repetition,
        **inputs.values,
        "total_clients": total_clients,
        "workers": topology["workers"],
        "middlewares": topology["middlewares"],
        "servers": topology["servers"],
        "think_time_ms": workload["think_time_ms"],
        "status": inputs.status,
    }
    clients = []
    for json_path, logs, launch_ms in _loadgen_files(run_dir, inputs):
        if not json_path.is_file():
            row["status"] = "partial" if inputs.status == "ok" else inputs.status
            continue
        stats = client_stats(json_path, warmup, cooldown, duration, logs)
        if stats.start_epoch_ms is None and launch_ms is not None:
            stats.start_epoch_ms = float(launch_ms)
        clients.append(stats)
    row.update(_client_columns(clients))
    starts = [c.start_epoch_ms for c in clients if c.start_epoch_ms]
    mws = _middleware_stats(run_dir, inputs, starts, warmup, duration - cooldown)
    row.update(_middleware_columns(mws))
    return row


def _client_columns(clients: list[ClientStats]) -> dict[str, Any]:
    if not clients:
        return {}
    hits = sum(c.hits for c in clients)
    misses = sum(c.misses for c in clients)
    columns: dict[str, Any] = {
        "throughput_ops_per_s": sum(c.throughput for c in clients),
        "get_ops_per_s": sum(c.gets.ops_per_s for c in clients),
        "set_ops_per_s": sum(c.sets.ops_per_s for c in clients),
        "response_time_ms": _weighted_mean(
            (c.totals.count, c.totals.mean_latency_ms) for c in clients
        ),
        "hits": int(hits),
        "misses": int(misses),
        "miss_ratio": misses / (hits + misses) if hits + misses else 0.0,
        "errors": int(sum(c.errors for c in clients)),
    }
    histograms = [c.histogram for c in clients]
    merged = merge_histograms(histograms) if all(h is not None for h in histograms) else None
    if merged is not None and merged.get_total_count() > 0:
        for column, p in _PERCENTILES.items():
            columns[column] = merged.get_value_at_percentile(p) / 1000.0  # µs -> ms
    else:
        for column in _PERCENTILES:
            columns[column] = _weighted_mean(
                (c.totals.count, c.percentiles_ms[column])
                for c in clients
                if column in c.percentiles_ms
            )
    return columns


def _middleware_stats(
    run_dir: Path, inputs: RunInputs, starts: list[float], from_s: int, to_s: int
) -> list[MiddlewareStats]:
    names = [m["stats_dir"] for m in inputs.middlewares] or sorted(
        p.name for p in run_dir.glob("middleware-*") if p.is_dir()
    )
    found = []
    for name in names:
        folder = run_dir / name
        stats = None
        if starts:
            origin = min(starts)
            stats = middleware_from_windows(
                folder / "windows.csv", origin + from_s * 1000.0, origin + to_s * 1000.0
            )
        stats = stats or middleware_from_summary(folder / "summary.json")
        if stats is not None:
            found.append(stats)
    return found


def _middleware_columns(mws: list[MiddlewareStats]) -> dict[str, Any]:
    if not mws:
        return {}
    # summaries without counts (the k8s runner's scrapes) weigh every middleware the same
    counted = any(m.count > 0 for m in mws)
    weights = [m.count if counted else 1.0 for m in mws]
    return {
        "mw_throughput_ops_per_s": sum(m.throughput for m in mws),
        "mw_response_time_ms": _weighted_mean(
            (w, m.response_time_ms) for w, m in zip(weights, mws, strict=True)
        ),
        "mw_queue_time_ms": _weighted_mean(
            (w, m.queue_time_ms) for w, m in zip(weights, mws, strict=True)
        ),
        "mw_service_time_ms": _weighted_mean(
            (w, m.service_time_ms) for w, m in zip(weights, mws, strict=True)
        ),
        "mw_queue_length": sum(m.queue_length for m in mws),
    }


# --- the whole experiment ---------------------------------------------------------------------


def _format(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.1f}"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def add_summary_row(
    rows: list[dict[str, Any]], run_dir: Path, axes: Sequence[str], path: Path
) -> str | None:
    """Summarise one run into `rows` (replacing an older row of the same point and repetition)
    and rewrite summary.csv; returns why there is no row, or None. Called from a runner's thread.
    """
    try:
        row = summarize_run(run_dir)
    except (SummaryError, KeyError, ValueError) as error:
        return str(error)
    key = (row["point"], row["repetition"])
    rows[:] = [r for r in rows if (r["point"], r["repetition"]) != key]
    rows.append(row)
    write_summary_csv(rows, axes, path)
    return None


def write_summary_csv(rows: Sequence[dict[str, Any]], axes: Sequence[str], path: Path) -> Path:
    """Write rows (missing columns empty) in the documented column order."""
    columns = summary_columns(axes)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_format(row.get(c)) for c in columns])
    tmp.replace(path)
    return path


def sweep_axes(results_dir: Path) -> list[str]:
    """The sweep axes of the spec saved in a results folder."""
    raw = yaml.safe_load((results_dir / "spec.yaml").read_text()) or {}
    return list((raw.get("sweep") or {}).keys())


def build_summary(results_dir: Path) -> Path:
    """(Re)build `summary.csv` from every `raw/p*-r*/` of a results folder."""
    from cachelab.results import ResultsDir

    results = ResultsDir(results_dir)
    rows = [summarize_run(d) for d in results.run_dirs() if (d / "point.json").is_file()]
    return write_summary_csv(rows, sweep_axes(results_dir), results.summary_file)
