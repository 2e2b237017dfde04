"""Aggregation over windows, instances and repetitions, the way the seed reports did it.

ASL 2017 (§3.6 of its digest): drop the warm-up and cool-down 1 s windows, average the rest
per instance, **sum throughput and average response time over instances**, then over
repetitions take the mean of the means with standard deviation sqrt(mean per-repetition
variance). ASL 2019 used mean +/- population SD over repetitions. Here a point's number is the
mean over its repetitions with its 95 % Student-t interval (``cachelab.analysis.intervals``, the
one definition every table, figure and comparison uses): ``aggregate_points`` gives it for any
summary.csv column; ``window_std`` gives the seeds' pooled within-repetition SD from the 1 s
windows, shown beside it. Trimming is
the one rule of ``cachelab.results.trim``; this module receives data, never paths.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from cachelab.analysis.intervals import mean_interval
from cachelab.columns import (
    RESPONSE_TIME_MS,
    RESPONSE_TIME_WINDOW_STD_MS,
    THROUGHPUT_OPS_PER_S,
    THROUGHPUT_WINDOW_STD_OPS_PER_S,
    ci95_column,
    mean_column,
)
from cachelab.results.memtier import LoadgenRun
from cachelab.results.run import RunData
from cachelab.results.run import window_series as results_window_series
from cachelab.results.trim import MeasuredInterval


def pooled_std(variances: Iterable[float]) -> float:
    """sqrt(mean of the per-repetition variances): the seeds' SD over repetitions.

    Examples
    --------
    >>> pooled_std([1.0, 9.0])
    2.23606797749979
    """
    values = [float(v) for v in variances]
    if not values:
        raise ValueError("variances: need at least one repetition")
    if any(v < 0 or math.isnan(v) for v in values):
        raise ValueError(f"variances: must be >= 0, got {values}")
    return math.sqrt(sum(values) / len(values))


def window_series(runs: Sequence[LoadgenRun], interval: MeasuredInterval) -> pd.DataFrame:
    """Per-second throughput summed over instances and response time averaged over them.

    The response time of a second is the mean over instances weighted by their request counts
    in that second. Every second of the measured interval is a window, and a second without
    requests counts as zero throughput (a stalled client lowers the throughput, as in the
    summary). Columns: ``second``, ``throughput_ops_per_s``, ``response_time_ms``.
    """
    rows = results_window_series(runs, interval)
    return pd.DataFrame(
        {
            "second": [s for s, _, _ in rows],
            THROUGHPUT_OPS_PER_S: [c for _, c, _ in rows],
            RESPONSE_TIME_MS: [r for _, _, r in rows],
        }
    )


@dataclass(frozen=True)
class WindowStats:
    """Mean and variance over the measured windows of one repetition."""

    windows: int
    throughput_mean: float
    throughput_var: float
    response_time_mean_ms: float
    response_time_var: float


def repetition_window_stats(runs: Sequence[LoadgenRun], interval: MeasuredInterval) -> WindowStats:
    """Window statistics of one repetition (all loadgen instances of one point and rep)."""
    frame = window_series(runs, interval)
    if frame.empty:
        raise ValueError("time series: no windows left after trimming warm-up and cool-down")
    tp = frame[THROUGHPUT_OPS_PER_S].to_numpy(dtype=float)
    rt = frame[RESPONSE_TIME_MS].dropna().to_numpy(dtype=float)
    return WindowStats(
        windows=len(frame),
        throughput_mean=float(tp.mean()),
        throughput_var=float(tp.var()),
        response_time_mean_ms=float(rt.mean()) if rt.size else math.nan,
        response_time_var=float(rt.var()) if rt.size else math.nan,
    )


def window_std(runs: Sequence[RunData]) -> pd.DataFrame:
    """Per point, the seeds' SD: sqrt(mean per-repetition window variance) of TP and RT.

    Columns: ``point``, ``repetitions``, ``throughput_window_std_ops_per_s``,
    ``response_time_window_std_ms``.
    """
    per_point: dict[int, list[WindowStats]] = {}
    for run in runs:
        loadgens = [c.run for c in run.clients]
        if loadgens:
            per_point.setdefault(run.point, []).append(
                repetition_window_stats(loadgens, run.interval)
            )
    rows = []
    for point, reps in sorted(per_point.items()):
        rt_vars = [r.response_time_var for r in reps if not math.isnan(r.response_time_var)]
        rows.append(
            {
                "point": point,
                "repetitions": len(reps),
                THROUGHPUT_WINDOW_STD_OPS_PER_S: pooled_std(r.throughput_var for r in reps),
                RESPONSE_TIME_WINDOW_STD_MS: pooled_std(rt_vars) if rt_vars else math.nan,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "point",
            "repetitions",
            THROUGHPUT_WINDOW_STD_OPS_PER_S,
            RESPONSE_TIME_WINDOW_STD_MS,
        ],
    )


def aggregate_points(
    summary: pd.DataFrame,
    metrics: Sequence[str],
    keys: Sequence[str] = ("point",),
) -> pd.DataFrame:
    """Mean over repetitions of each metric with its 95 % interval, one row per point.

    Parameters
    ----------
    summary
        ``summary.csv`` rows (one per point and repetition).
    metrics
        Columns to aggregate; missing or empty columns give NaN.
    keys
        Columns that identify a point (``point`` plus, for convenience, the sweep axes and
        any column constant within a point, e.g. ``total_clients``).

    Returns
    -------
    A frame with the keys, ``repetitions`` and ``<metric>_mean`` / ``<metric>_ci95`` columns
    (``_ci95`` the half-width of the Student-t interval, NaN with one repetition).
    """
    missing = [k for k in keys if k not in summary.columns]
    if missing:
        raise ValueError(f"keys: {missing} not in summary columns {list(summary.columns)}")
    rows = []
    for key_values, group in summary.groupby(list(keys), sort=True, dropna=False):
        values = key_values if isinstance(key_values, tuple) else (key_values,)
        row: dict[str, object] = dict(zip(keys, values, strict=True))
        row["repetitions"] = len(group)
        for metric in metrics:
            if metric in group.columns:
                column = pd.to_numeric(group[metric], errors="coerce").dropna()
            else:
                column = pd.Series([], dtype=float)
            interval = mean_interval(column.tolist())
            row[mean_column(metric)] = interval.mean
            row[ci95_column(metric)] = interval.half_width
        rows.append(row)
    return pd.DataFrame(rows)
