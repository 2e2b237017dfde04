"""The report's second stage: the folder read (`cachelab.report.read`) analysed once. The usable
rows, the x column and the lines, each point's statistics over its repetitions, the interactive
law per repetition, the noise flags, the operational analysis and the models
(`cachelab.report.analysis`). Nothing is drawn or written here."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from cachelab.analysis import interactive_law
from cachelab.analysis.aggregate import window_std
from cachelab.analysis.intervals import mean_interval
from cachelab.analysis.pointstats import point_statistics, runs_by_point, select_rows
from cachelab.columns import (
    CONFIG_COLUMNS,
    LAW_DEVIATION_PCT,
    LAW_DEVIATION_WORST_PCT,
    LAW_HOLDS,
    LAW_RESPONSE_TIME_MS,
    LAW_THROUGHPUT_OPS_PER_S,
    METRIC_COLUMNS,
    MW_RESPONSE_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
    TEXT_COLUMNS,
    THINK_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
    Z_CLIENT_MS,
    Z_MW_MS,
    ci95_column,
)
from cachelab.report import analysis as report_analysis
from cachelab.report import plots
from cachelab.report.read import ReadResults, ReportError, read_results
from cachelab.results.experiment import Experiment
from cachelab.spec import Spec

METRICS = tuple(c for c in METRIC_COLUMNS if c not in TEXT_COLUMNS)
POINT_COLUMNS = tuple(CONFIG_COLUMNS)
LAW_TOLERANCE_PCT = 10.0
Z_RESOLUTION = 0.01


@dataclass
class AnalysedResults:
    """A results folder read and analysed once: what every section of the report draws from."""

    read: ReadResults
    experiment: Experiment  # its runs are those of the rows the report uses
    summary: pd.DataFrame  # the rows the report uses
    left_out: dict[str, int]  # rows left out, by reason
    x: str
    axes: list[str]
    series: list[str]
    points: pd.DataFrame
    section: report_analysis.AnalysisSection

    @property
    def spec(self) -> Spec:
        return self.read.spec

    @property
    def summary_all(self) -> pd.DataFrame:
        return self.read.summary


def _determined_by(frame: pd.DataFrame, x: str, column: str) -> bool:
    """True when ``column`` takes a single value for every value of ``x`` (it moves with x)."""
    if column == x:
        return True
    return bool(frame.groupby(x)[column].nunique(dropna=False).max() <= 1)


def choose_series(
    frame: pd.DataFrame, x: str, axes: Sequence[str], requested: str | Sequence[str] | None
) -> list[str]:
    """Columns that split the points into lines: the spec's ``report.series``, plus any other
    sweep axis that does not move with ``x`` (so no line mixes two settings)."""
    if isinstance(requested, str):
        series = [requested]
    elif requested:
        series = list(requested)
    else:
        series = []
    for column in series:
        if column not in frame.columns:
            raise ReportError(f"report.series: column {column!r} not in summary.csv")
    for axis in axes:
        if axis not in series and not _determined_by(frame, x, axis):
            series.append(axis)
    return series


def _interactive_law_frame(points: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The interactive law per repetition of each point (``interactive_law.check_repetitions``):
    the means over the repetitions of the predicted R and X and of the deviations, the worst
    repetition's deviation, and the think time each repetition implies at the clients and
    behind the middleware (mean and 95 % interval). `law_flag` says when a repetition deviates
    beyond the tolerance or a measured think time is negative (the inputs disagree)."""
    rows = [_interactive_law_row(row, summary) for _, row in points.iterrows()]
    return pd.concat([points.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def _interactive_law_row(row: pd.Series, summary: pd.DataFrame) -> dict[str, Any]:
    """The interactive law's columns of one point."""
    reps = summary[summary["point"] == row["point"]]
    clients, think = float(row[TOTAL_CLIENTS]), float(row[THINK_TIME_MS])
    law = interactive_law.check_repetitions(
        clients,
        _floats(reps, THROUGHPUT_OPS_PER_S),
        _floats(reps, RESPONSE_TIME_MS),
        think,
    )
    z_client = mean_interval(_resolved(law))
    mw = interactive_law.check_repetitions(
        clients, _floats(reps, MW_THROUGHPUT_OPS_PER_S), _floats(reps, MW_RESPONSE_TIME_MS)
    )
    z_mw = mean_interval(_resolved(mw))
    flags = [
        f"interactive law {d:+.0f} % in r{int(reps.iloc[i]['repetition'])}"
        for i, d in ((i, law.checks[i].deviation_pct) for i in law.deviating(LAW_TOLERANCE_PCT))
    ]
    if z_client.mean < 0 and not flags:
        flags.append(f"measured Z {z_client.mean:.3f} ms < 0: R > N/X, inputs disagree")
    return {
        LAW_RESPONSE_TIME_MS: mean_interval(c.predicted_response_time_ms for c in law.checks).mean,
        LAW_THROUGHPUT_OPS_PER_S: mean_interval(
            c.predicted_throughput_ops_per_s for c in law.checks
        ).mean,
        LAW_DEVIATION_PCT: mean_interval(law.deviations_pct).mean,
        LAW_DEVIATION_WORST_PCT: law.worst_deviation_pct,
        LAW_HOLDS: law.holds(LAW_TOLERANCE_PCT) if law.checks else math.nan,
        "law_flag": "; ".join(flags),
        Z_CLIENT_MS: z_client.mean,
        ci95_column(Z_CLIENT_MS): z_client.half_width,
        Z_MW_MS: z_mw.mean,
        ci95_column(Z_MW_MS): z_mw.half_width,
    }


def _resolved(law: interactive_law.PointLaw) -> list[float]:
    """Measured think times with those within the resolution of their inputs (±1 % of the
    repetition's R: the clients' counts and latencies are two counters of the same seconds)
    taken as 0; a negative one beyond it stays negative, and flagged."""
    return [
        0.0 if abs(z) <= Z_RESOLUTION * c.measured_response_time_ms else z
        for z, c in zip(law.think_times_ms, law.checks, strict=True)
    ]


def _floats(rows: pd.DataFrame, column: str) -> list[float]:
    if column not in rows.columns:
        return [math.nan] * len(rows)
    return [float(v) for v in pd.to_numeric(rows[column], errors="coerce")]


def analyse_results(results_dir: Path) -> AnalysedResults:
    """Read a results folder and analyse it, drawing and writing nothing.

    Raises
    ------
    ReportError
        If ``spec.yaml`` or ``summary.csv`` is missing or malformed, or no run is usable.
    """
    return analyse(read_results(results_dir))


def analyse(read: ReadResults) -> AnalysedResults:
    """The points, their statistics, operational analysis and models of a folder read.

    Raises
    ------
    ReportError
        If no row is usable, or the spec's ``report.x`` or ``report.series`` names no column.
    """
    spec = read.spec
    summary, left_out = select_rows(read.summary)
    if summary.empty:
        raise ReportError(
            f"{read.results_dir / 'summary.csv'}: no row with status ok and a measured throughput"
        )
    x = spec.report.x
    if x not in summary.columns:
        raise ReportError(f"report.x: column {x!r} not in summary.csv")
    axes = [a for a in spec.sweep if a in summary.columns]
    series = choose_series(summary, x, axes, spec.report.series)
    experiment = _used_runs(read.experiment, summary)
    points = _point_statistics(experiment, summary, x, axes, series)
    points, section = report_analysis.analyse_points(points, summary, experiment, x, series)
    if x in spec.sweep and not pd.api.types.is_numeric_dtype(points[x]):
        # text axes (e.g. workload.ratio) keep the spec's order, not alphabetical order
        order = [str(v) for v in spec.sweep[x]]
        points[x] = pd.Categorical(points[x].astype(str), categories=order, ordered=True)
    return AnalysedResults(read, experiment, summary, left_out, x, axes, series, points, section)


def _used_runs(experiment: Experiment, summary: pd.DataFrame) -> Experiment:
    """The experiment with only the runs of the rows the report uses."""
    used = set(zip(summary["point"].astype(int), summary["repetition"].astype(int), strict=True))
    runs = [r for r in experiment.runs if (r.point, r.repetition) in used]
    return dataclasses.replace(experiment, runs=runs)


def _point_statistics(
    experiment: Experiment, summary: pd.DataFrame, x: str, axes: list[str], series: list[str]
) -> pd.DataFrame:
    """One row per point: the means over its repetitions with their intervals, the window
    spread, the line's label, the interactive law and the noise flags."""
    keys = ["point", *dict.fromkeys([*axes, x, *[c for c in POINT_COLUMNS if c in summary]])]
    keys = list(dict.fromkeys(keys))
    points = point_statistics(summary, METRICS, keys, runs_by_point(experiment.runs, summary))
    windows = window_std(experiment.runs)
    if not windows.empty:
        points = points.merge(
            windows.drop(columns=["repetitions"]), on="point", how="left", validate="one_to_one"
        )
    points["label"] = [
        plots.series_label(series, [row[s] for s in series]) if series else ""
        for _, row in points.iterrows()
    ]
    points = _interactive_law_frame(points, summary)
    points = report_analysis.add_noise_flags(points, summary)
    points["flags"] = [
        "; ".join(f for f in (noise, law) if f)
        for noise, law in zip(points["flags"], points.pop("law_flag"), strict=True)
    ]
    return points
