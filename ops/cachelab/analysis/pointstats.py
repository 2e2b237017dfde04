"""The numbers of one point, defined once for the terminal, the report, `cachelab compare` and
the CSVs.

- **Means with intervals**: a point's throughput, response time and every other summary.csv
  measure is the mean over its usable repetitions (status ok, a measured throughput and
  response time) with the half-width of its 95 % Student-t interval (`<metric>_mean`,
  `<metric>_ci95`; `cachelab.analysis.intervals`). A partial or failed repetition is in none
  of them.
- **Percentiles from the merged histograms**: `p50_ms`, `p90_ms`, `p99_ms` of a point come from
  the clients' latency histograms over the measured seconds merged over instances and
  repetitions (never a mean of percentiles); without histograms, the request-count weighted mean
  of the repetitions' percentiles, and `percentiles_from` says which.

Pure functions of data (summary rows and runs read by `cachelab.results`); any thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from cachelab.analysis.aggregate import aggregate_points
from cachelab.columns import (
    HITS,
    MISSES,
    P50_MS,
    P90_MS,
    P99_MS,
    PERCENTILES_FROM,
    RESPONSE_TIME_MS,
    THROUGHPUT_OPS_PER_S,
)
from cachelab.results.hdr import merge_histograms, percentiles_ms
from cachelab.results.run import RunData

PERCENTILE_COLUMNS: dict[str, float] = {P50_MS: 50.0, P90_MS: 90.0, P99_MS: 99.0}
MERGED, MEAN_OF_REPETITIONS = "merged histograms", "mean of the repetitions' percentiles"


def select_rows(summary_all: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The rows every statistic uses (status ok with a measured throughput and response time)
    and the counts of those left out, by reason."""
    status = summary_all["status"].fillna("ok").astype(str)
    measured = pd.to_numeric(summary_all[THROUGHPUT_OPS_PER_S], errors="coerce").gt(0) & (
        pd.to_numeric(summary_all[RESPONSE_TIME_MS], errors="coerce").notna()
    )
    counts = {
        "failed": int((status == "failed").sum()),
        "partial": int((status == "partial").sum()),
        "no measurement": int(((status == "ok") & ~measured).sum()),
    }
    return summary_all[(status == "ok") & measured].copy(), counts


def merged_percentiles(runs: Sequence[RunData]) -> dict[str, float] | None:
    """`p50_ms`, `p90_ms`, `p99_ms` of the runs' client histograms merged (None unless every
    run has one)."""
    histograms = [r.histogram() for r in runs]
    if not histograms or any(h is None for h in histograms):
        return None
    merged = merge_histograms(histograms)
    if merged is None or merged.get_total_count() == 0:
        return None
    values = percentiles_ms(merged, PERCENTILE_COLUMNS.values())
    return {column: values[p] for column, p in PERCENTILE_COLUMNS.items()}


def _mean_of_percentiles(rows: pd.DataFrame) -> dict[str, float]:
    weights = pd.to_numeric(rows.get(HITS, pd.Series(dtype=float)), errors="coerce").fillna(0)
    weights = weights + pd.to_numeric(
        rows.get(MISSES, pd.Series(dtype=float)), errors="coerce"
    ).fillna(0)
    found = {}
    for column in PERCENTILE_COLUMNS:
        values = pd.to_numeric(rows.get(column, pd.Series(dtype=float)), errors="coerce")
        usable = values.notna()
        if not usable.any():
            found[column] = math.nan
            continue
        w = weights[usable]
        if w.sum() > 0:
            found[column] = float((values[usable] * w).sum() / w.sum())
        else:
            found[column] = float(values[usable].mean())
    return found


def point_statistics(
    summary: pd.DataFrame,
    metrics: Sequence[str],
    keys: Sequence[str],
    runs_by_point: Mapping[int, Sequence[RunData]],
) -> pd.DataFrame:
    """One row per point of the usable `summary` rows: the keys, `repetitions`,
    `<metric>_mean` and `<metric>_ci95` of each metric (percentile columns excepted), and the
    point's `p50_ms`, `p90_ms`, `p99_ms` with `percentiles_from` naming their source.

    `runs_by_point` holds the runs of the same usable rows (an empty mapping when the caller
    reads no raw files: the percentiles are then the weighted mean of the repetitions')."""
    averaged = [m for m in metrics if m not in PERCENTILE_COLUMNS]
    points = aggregate_points(summary, averaged, keys)
    rows = []
    for _, row in points.iterrows():
        point = int(row["point"])
        merged = merged_percentiles(runs_by_point.get(point, []))
        if merged is not None:
            rows.append({**merged, PERCENTILES_FROM: MERGED})
        else:
            own = summary[summary["point"] == point]
            rows.append({**_mean_of_percentiles(own), PERCENTILES_FROM: MEAN_OF_REPETITIONS})
    extra = pd.DataFrame(rows, columns=[*PERCENTILE_COLUMNS, PERCENTILES_FROM])
    return pd.concat([points.reset_index(drop=True), extra], axis=1)


def runs_by_point(runs: Sequence[RunData], summary: pd.DataFrame) -> dict[int, list[RunData]]:
    """The runs of the usable summary rows, by point."""
    used = set(zip(summary["point"].astype(int), summary["repetition"].astype(int), strict=True))
    found: dict[int, list[RunData]] = {}
    for run in runs:
        if (run.point, run.repetition) in used:
            found.setdefault(run.point, []).append(run)
    return found
