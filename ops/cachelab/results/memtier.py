"""Reader of memtier's `--json-out-file` layout (real memtier's and cachelab's loadgen's).

``ALL STATS`` (or ``AGGREGATED AVERAGE RESULTS (<n> runs)`` for ``--run-count`` > 1) holds
``Gets``/``Sets``/``Totals`` with counts, rates, latencies in milliseconds, ``Percentile
Latencies`` and a per-second ``Time-Serie``; ``GET``/``SET`` hold the cumulative latency histogram
unless ``--hide-histogram`` was given. memtier prints ``-nan``, ``inf`` and the int64 maximum for
empty buckets: they are read as 0 (as PerfKitBenchmarker sanitises them).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachelab.results.errors import ResultsError
from cachelab.results.trim import MeasuredInterval

_BAD_NUMBERS = re.compile(r"(?<![\w.\"])(-?nan|-?inf|9223372036854776\.000)(?![\w\"])")
_SECTIONS = ("ALL STATS", "AGGREGATED AVERAGE RESULTS")
OP_BLOCKS = ("Gets", "Sets", "Totals")


def number(value: Any) -> float:
    """A JSON value as a finite float (anything else is 0)."""
    try:
        result = float(value)
    except (TypeError, ValueError):
        return 0.0
    return result if math.isfinite(result) else 0.0


def optional_number(row: dict[str, str], column: str) -> float:
    """A number from an optional CSV column: NaN when the file predates the column or the cell
    is empty."""
    text = row.get(column)
    return number(text) if text not in (None, "") else math.nan


def load_memtier_json(path: Path) -> dict[str, Any]:
    """Parse memtier's JSON with its bad numbers cleaned."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ResultsError(f"{path}: cannot read ({error.strerror})") from None
    try:
        data = json.loads(_BAD_NUMBERS.sub("0.000", text))
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: top level is not an object")
    return data


def stats_section(data: Mapping[str, Any], source: Path | str) -> dict[str, Any]:
    """The `ALL STATS` block (or the aggregated average when memtier ran several times)."""
    for key, value in data.items():
        if key.startswith(_SECTIONS) and isinstance(value, dict):
            return value
    raise ResultsError(f"{source}: no 'ALL STATS' section (not memtier JSON layout)")


@dataclass(frozen=True)
class SecondBucket:
    """One 1 s bucket of memtier's ``Time-Serie`` (latencies in ms). The cachelab loadgen also
    says when its sampler cut the bucket (`Cut At ms` since the start of the run): on a busy
    machine the sampler wakes late, so a bucket may hold 1.3 s of requests and the next 0.7 s."""

    count: int
    average_latency_ms: float
    cut_at_ms: float | None = None


@dataclass(frozen=True)
class OpStats:
    """``Gets``, ``Sets`` or ``Totals`` of one loadgen instance over its whole run."""

    count: int
    ops_per_s: float
    average_latency_ms: float
    percentiles_ms: dict[float, float]
    time_series: dict[int, SecondBucket]
    hits_per_s: float = 0.0
    misses_per_s: float = 0.0
    errors: float = 0.0
    compressed_histogram: str | None = None


@dataclass(frozen=True)
class SeriesWindow:
    """Requests and latency of one op type summed over the measured seconds, and the time those
    requests completed in (the measured seconds, or the time between their buckets' cuts)."""

    count: float = 0.0
    latency_sum_ms: float = 0.0
    seconds: float = 0.0

    @property
    def ops_per_s(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    @property
    def mean_latency_ms(self) -> float:
        return self.latency_sum_ms / self.count if self.count else 0.0


@dataclass(frozen=True)
class LoadgenRun:
    """One loadgen instance's JSON output."""

    path: Path
    stats: dict[str, OpStats]
    start_epoch_ms: float | None = None
    duration_ms: float | None = None
    # cumulative histograms: op ("GET"/"SET") -> [(upper bound ms, cumulative percent)]
    histograms: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    # the cachelab loadgen's "Key Counts" (None from memtier): keys of all requests, and the most
    # requested keys with their counts (each at most its overcount above the truth)
    keys_requested: int | None = None
    top_keys: dict[str, int] = field(default_factory=dict)

    @property
    def totals(self) -> OpStats:
        return self.stats["Totals"]

    @property
    def run_seconds(self) -> int | None:
        """Whole seconds the run lasted (memtier's series ends with a partial second)."""
        if not self.duration_ms:
            return None
        return math.ceil(self.duration_ms / 1000.0 - 1e-6)

    def measured(self, op: str, interval: MeasuredInterval) -> SeriesWindow:
        """An op block's per-second series summed over the measured interval. Its length is the
        time between the cuts of the buckets around it when the loadgen recorded them (so that
        a late sampler does not put requests of 1.3 s into "one second"), else whole seconds."""
        block = self.stats.get(op)
        if block is None:
            return SeriesWindow()
        count, latency_sum = 0.0, 0.0
        present = set()
        for second, bucket in block.time_series.items():
            if interval.contains_second(second):
                present.add(second)
                count += bucket.count
                latency_sum += bucket.count * bucket.average_latency_ms
        if not block.time_series:
            return SeriesWindow()
        last = max(block.time_series)
        lasted = self.run_seconds if self.run_seconds is not None else last + 1
        end_s = min(interval.end_s, lasted)
        seconds: float = max(0, end_s - interval.start_s)
        if seconds == 0 and present:
            seconds = len(present)
        elif seconds > 0:
            seconds = _cut_span_s(block.time_series, interval.start_s, end_s) or seconds
        return SeriesWindow(count, latency_sum, seconds)


def _cut_span_s(series: Mapping[int, SecondBucket], start_s: int, end_s: int) -> float | None:
    """Seconds between the cut before bucket `start_s` (the run's start for 0) and the cut of
    bucket `end_s - 1`, if both are recorded."""
    last = series.get(end_s - 1)
    first = series.get(start_s - 1) if start_s > 0 else SecondBucket(0, 0.0, 0.0)
    if last is None or first is None or last.cut_at_ms is None or first.cut_at_ms is None:
        return None
    span_s = (last.cut_at_ms - first.cut_at_ms) / 1000.0
    return span_s if span_s > 0 else None


def _percentile_key(key: str) -> float | None:
    if not key.startswith("p"):
        return None
    try:
        return float(key[1:])
    except ValueError:
        return None


def _op_stats(block: Mapping[str, Any], where: str) -> OpStats:
    percentiles: dict[float, float] = {}
    table = block.get("Percentile Latencies") or {}
    for key, value in table.items():
        p = _percentile_key(key)
        if p is not None and isinstance(value, int | float):
            percentiles[p] = float(value)
    series: dict[int, SecondBucket] = {}
    for second, bucket in (block.get("Time-Serie") or {}).items():
        if not isinstance(bucket, dict):
            continue
        try:
            index = int(second)
        except ValueError:
            continue
        count = int(number(bucket.get("Count")))
        latency = number(bucket.get("Average Latency")) if count else 0.0
        cut = bucket.get("Cut At ms")
        series[index] = SecondBucket(
            count=count,
            average_latency_ms=latency,
            cut_at_ms=number(cut) if isinstance(cut, int | float) else None,
        )
    average = block.get("Average Latency", block.get("Latency"))
    if average is None:
        raise ResultsError(f"{where}: missing field 'Average Latency'")
    if "Count" not in block or "Ops/sec" not in block:
        missing = "Count" if "Count" not in block else "Ops/sec"
        raise ResultsError(f"{where}: missing field {missing!r}")
    log_format = table.get("Histogram log format") if isinstance(table, dict) else None
    payload = log_format.get("Compressed Histogram") if isinstance(log_format, dict) else None
    return OpStats(
        count=int(number(block["Count"])),
        ops_per_s=number(block["Ops/sec"]),
        average_latency_ms=number(average),
        percentiles_ms=percentiles,
        time_series=series,
        hits_per_s=number(block.get("Hits/sec")),
        misses_per_s=number(block.get("Misses/sec")),
        errors=number(block.get("Connection Errors")) + number(block.get("Error Replies")),
        compressed_histogram=str(payload) if payload else None,
    )


def read_loadgen_json(path: Path) -> LoadgenRun:
    """Parse one ``loadgen-<i>.json`` (memtier layout)."""
    document = load_memtier_json(path)
    section = stats_section(document, path)
    stats: dict[str, OpStats] = {}
    for name in OP_BLOCKS:
        if isinstance(section.get(name), dict) and section[name]:
            stats[name] = _op_stats(section[name], f"{path.name}: {name}")
    if "Totals" not in stats:
        raise ResultsError(f"{path}: 'ALL STATS' has no 'Totals'")
    histograms: dict[str, list[tuple[float, float]]] = {}
    for op in ("GET", "SET"):
        rows = section.get(op)
        if isinstance(rows, list) and rows:
            histograms[op] = [(number(r["<=msec"]), number(r["percent"])) for r in rows]
    runtime = section.get("Runtime") or {}
    start_ms = number(runtime.get("Start time")) or None
    duration_ms = number(runtime.get("Total duration")) or None
    keys = section.get("Key Counts")
    keys_requested: int | None = None
    top_keys: dict[str, int] = {}
    if isinstance(keys, dict):
        keys_requested = int(number(keys.get("Keys Requested")))
        for entry in keys.get("Top Keys") or []:
            top_keys[str(entry["Key"])] = int(number(entry["Count"]))
    return LoadgenRun(path, stats, start_ms, duration_ms, histograms, keys_requested, top_keys)
