"""The report's machine-readable tables: points.csv, models.csv, bottlenecks.csv and, for a
2^k design, factorial.csv. Every row of a per-point table names its point's swept values and
clients, and no column is empty (every column is in `cachelab.columns`' catalogue)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cachelab.columns import TOTAL_CLIENTS
from cachelab.report.analyse import AnalysedResults
from cachelab.report.sections.factorial import FactorialResponse, analysed_frame

FACTORIAL_CSV = "factorial.csv"


def without_empty(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without its columns that hold nothing (every cell NaN or empty text)."""
    empty = [c for c in frame.columns if frame[c].isna().all() or frame[c].astype(str).eq("").all()]
    return frame.drop(columns=empty)


def write_point_csvs(out: Path, analysed: AnalysedResults) -> None:
    """points.csv, models.csv and bottlenecks.csv."""
    points, section = analysed.points, analysed.section
    keys = list(dict.fromkeys(k for k in [*analysed.axes, TOTAL_CLIENTS] if k in points.columns))
    ids = points[["point", *keys]]
    without_empty(points).to_csv(out / "points.csv", index=False)
    for name, frame in (
        ("models.csv", section.models_frame()),
        ("bottlenecks.csv", section.bottlenecks_frame()),
    ):
        merged = ids.merge(frame, on="point", how="right", validate="one_to_many")
        without_empty(merged).to_csv(out / name, index=False)


def write_factorial_csv(out: Path, responses: list[FactorialResponse]) -> None:
    """factorial.csv, when a response was analysed."""
    if any(r.result is not None for r in responses):
        without_empty(analysed_frame(responses)).to_csv(out / FACTORIAL_CSV, index=False)
