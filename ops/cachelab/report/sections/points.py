"""The report's points section: one row per point (the means over its repetitions, with the
interactive law and the middleware's side), and per line the point of highest throughput."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from cachelab.columns import (
    MW_QUEUE_TIME_MS,
    MW_RESPONSE_TIME_MS,
    MW_SERVICE_TIME_MS,
    THROUGHPUT_WINDOW_STD_OPS_PER_S,
    mean_column,
)
from cachelab.report.analyse import AnalysedResults
from cachelab.report.analysis import max_throughput_table

MW_COLUMNS = (MW_QUEUE_TIME_MS, MW_SERVICE_TIME_MS, MW_RESPONSE_TIME_MS)


@dataclass(frozen=True)
class PointsSection:
    rows: list[dict[Hashable, Any]]  # one per point, every column of points.csv
    has_mw: bool  # a point has the middleware's queue, service and response time
    has_window_std: bool
    flagged: int  # points with a noise or interactive-law flag
    max_rows: list[dict[str, Any]]  # per line, its point of highest throughput


def has_middleware(points: pd.DataFrame) -> bool:
    columns = [mean_column(c) for c in MW_COLUMNS]
    if not all(c in points.columns for c in columns):
        return False
    return bool(points[columns].notna().all(axis=1).any())


def points_section(analysed: AnalysedResults) -> PointsSection:
    points = analysed.points
    return PointsSection(
        rows=points.to_dict(orient="records"),
        has_mw=has_middleware(points),
        has_window_std=THROUGHPUT_WINDOW_STD_OPS_PER_S in points.columns,
        flagged=int((points["flags"].astype(str).str.len() > 0).sum()),
        max_rows=max_throughput_table(points, analysed.series),
    )
