"""Reader of HdrHistogram interval logs (`--hdr-file-prefix`, values in microseconds).

cachelab's loadgen writes one interval per second with timestamps relative to `#[StartTime]`
(or absolute, with a `#[BaseTime]`); real memtier writes one whole-run interval. The report and
the summary take latency percentiles and distributions from these logs, merged over the measured
interval (`cachelab.results.trim`) and pooled over instances and repetitions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hdrh.histogram import HdrHistogram

from cachelab.results.errors import ResultsError
from cachelab.results.trim import MeasuredInterval

_INTERVAL = re.compile(r"^(?:Tag=[^,]*,)?([\d.]+),([\d.]+),([\d.]+),(\S+)\s*$")
_START_TIME = re.compile(r"^#\[StartTime: ([\d.]+)")
_BASE_TIME = re.compile(r"^#\[BaseTime: ([\d.]+)")
_YEAR_S = 365 * 24 * 3600


@dataclass(frozen=True)
class HdrLog:
    """The intervals of one log: (seconds after the log's start, histogram)."""

    path: Path
    intervals: list[tuple[float, HdrHistogram]]

    def measured(self, interval: MeasuredInterval) -> HdrHistogram | None:
        """The intervals that start in the measured interval, merged; a log with a single
        interval (a whole-run histogram, as memtier writes) is used whole."""
        if len(self.intervals) == 1:
            return self.intervals[0][1]
        return merge_histograms(h for t, h in self.intervals if interval.contains_offset(t))


def read_hdr_log(path: Path) -> HdrLog:
    """Parse one interval log; a corrupt payload raises ResultsError naming the file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ResultsError(f"{path}: cannot read ({error.strerror})") from None
    start_time: float | None = None
    base_time: float | None = None
    raw: list[tuple[float, str]] = []
    for line in lines:
        if line.startswith("#"):
            if match := _START_TIME.match(line):
                start_time = float(match.group(1))
            elif match := _BASE_TIME.match(line):
                base_time = float(match.group(1))
            continue
        if match := _INTERVAL.match(line):
            raw.append((float(match.group(1)), match.group(4)))
    if not raw:
        return HdrLog(path, [])
    first = raw[0][0]
    if start_time is None:
        start_time = first
    if base_time is None:  # timestamps more than a year before StartTime are relative
        base_time = start_time if first < start_time - _YEAR_S else 0.0
    origin = min(start_time, first + base_time)
    intervals = []
    for stamp, payload in raw:
        try:
            histogram = HdrHistogram.decode(payload)
        except Exception as error:  # hdrh raises several types on a corrupt payload
            raise ResultsError(f"{path}: cannot decode an interval histogram ({error})") from None
        intervals.append((stamp + base_time - origin, histogram))
    return HdrLog(path, intervals)


def read_hdr_interval_log(path: Path, interval: MeasuredInterval) -> HdrHistogram | None:
    """The measured part of one log, merged (None when the log has no interval)."""
    return read_hdr_log(path).measured(interval)


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


def decode_histogram(payload: str | None) -> HdrHistogram | None:
    """A compressed histogram (memtier JSON's `Compressed Histogram`), None if absent or bad."""
    if not payload:
        return None
    try:
        return HdrHistogram.decode(payload)
    except Exception:  # a payload hdrh cannot decode: the caller falls back to percentiles
        return None


def value_at_percentile_us(histogram: HdrHistogram, percentile: float) -> int:
    """The value at a percentile exactly as Java's HdrHistogram (the loadgen) computes it: the
    first bucket whose cumulative count reaches ceil(p/100 x total), reported as the highest
    value equivalent to it (Python's hdrh rounds the count instead, so its tails can land a few
    buckets away from the loadgen's own numbers)."""
    total = histogram.get_total_count()
    if total == 0:
        return 0
    wanted = max(1, math.ceil(min(max(percentile, 0.0), 100.0) / 100.0 * total))
    seen = 0
    for item in histogram.get_recorded_iterator():
        seen += item.count_added_in_this_iter_step
        if seen >= wanted:
            return int(item.value_iterated_to)
    return int(histogram.get_max_value())


def percentiles_ms(histogram: HdrHistogram, percentiles: Iterable[float]) -> dict[float, float]:
    """Values (ms) at the given percentiles of a µs histogram, as the loadgen reports them."""
    return {p: value_at_percentile_us(histogram, p) / 1000.0 for p in percentiles}


def density_ms(
    histogram: HdrHistogram, bins: int = 60, cut_ms: float | None = None
) -> tuple[list[float], list[float]]:
    """Bin edges (ms) and the fraction of requests per bin, from the recorded values (not a
    percentile summary: no false step below the first recorded value)."""
    top_ms = cut_ms if cut_ms is not None else histogram.get_value_at_percentile(99.9) / 1000.0
    top_ms = max(top_ms, 1e-3)
    width = top_ms / bins
    edges = [i * width for i in range(bins + 1)]
    counts = [0.0] * bins
    total = histogram.get_total_count()
    for item in histogram.get_recorded_iterator():
        value_ms = item.value_iterated_to / 1000.0
        index = int(value_ms / width)
        if 0 <= index < bins:
            counts[index] += item.count_added_in_this_iter_step
    return edges, [c / total if total else 0.0 for c in counts]
