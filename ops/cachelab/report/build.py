"""Build ``report/index.html`` and its PNG figures from a results folder (docs/interfaces.md §4).

The report reads only the folder: ``spec.yaml``, ``metadata.json``, ``status.json``,
``summary.csv`` and the raw files under ``raw/``. It shows throughput and response time against
the spec's ``report.x`` (one line per series; every number is the mean over repetitions with its
95 % Student-t interval and the error bars are those intervals, percentiles come from the merged
histograms: ``cachelab.analysis.pointstats``), the middleware
time breakdown, the client response-time histogram and percentiles, the interactive-law check per
point, M/M/1 and M/M/m predictions of the middleware queue, an MVA model of the throughput curve,
and, when the sweep is a 2-level design over two or more factors, the 2^k r factorial analysis.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from cachelab.analysis import factorial, interactive_law
from cachelab.analysis.aggregate import window_std
from cachelab.analysis.intervals import mean_interval
from cachelab.analysis.models import (
    MVA_TARGET_PCT,
    OOS_RESPONSE_TIME_TARGET_PCT,
    OOS_THROUGHPUT_TARGET_PCT,
    OUT_OF_SAMPLE,
)
from cachelab.analysis.pointstats import point_statistics, runs_by_point, select_rows
from cachelab.columns import (
    CONFIG_COLUMNS,
    HOT_KEY_SHARE,
    LAW_DEVIATION_PCT,
    LAW_DEVIATION_WORST_PCT,
    LAW_HOLDS,
    LAW_RESPONSE_TIME_MS,
    LAW_THROUGHPUT_OPS_PER_S,
    METRIC_COLUMNS,
    MVA_THROUGHPUT_OPS_PER_S,
    MW_QUEUE_TIME_MS,
    MW_RESPONSE_TIME_MS,
    MW_SERVICE_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
    SERVER_REQUESTS_MAX_OVER_MEAN,
    TEXT_COLUMNS,
    THINK_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    THROUGHPUT_WINDOW_STD_OPS_PER_S,
    TOTAL_CLIENTS,
    Z_CLIENT_MS,
    Z_MW_MS,
    ci95_column,
    cpu_column,
    delay_column,
    mean_column,
    rt_column,
    util_column,
)
from cachelab.report import analysis as report_analysis
from cachelab.report import plots, plots_analysis
from cachelab.report.extras import extra_sections
from cachelab.report.search_report import build_search_report, is_search
from cachelab.results import ResultsError
from cachelab.results.experiment import Experiment, read_experiment
from cachelab.results.hdr import density_ms, merge_histograms, percentiles_ms
from cachelab.results.noise import CLIENT_MW_LIMIT_PCT, CV_LIMIT_PCT, host_warnings
from cachelab.spec import Spec

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "report.html.j2"

REQUIRED_COLUMNS = (
    "point",
    "repetition",
    TOTAL_CLIENTS,
    THINK_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
)
METRICS = tuple(c for c in METRIC_COLUMNS if c not in TEXT_COLUMNS)
POINT_COLUMNS = tuple(CONFIG_COLUMNS)
MW_COLUMNS = (MW_QUEUE_TIME_MS, MW_SERVICE_TIME_MS, MW_RESPONSE_TIME_MS)
LAW_TOLERANCE_PCT = 10.0
Z_RESOLUTION = 0.01
FACTORIAL_ERROR_LIMIT_PCT = 5.0


class ReportError(ValueError):
    """The results folder is missing a file or a column the report needs."""


@dataclass
class Figures:
    """PNG file names (relative to ``report/``) keyed by role, plus captions."""

    files: dict[str, str] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)


def read_summary(results_dir: Path) -> pd.DataFrame:
    """``summary.csv`` with the contract's required columns checked."""
    path = results_dir / "summary.csv"
    if not path.is_file():
        raise ReportError(f"{path}: missing (the runner writes one row per point and repetition)")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as exc:
        raise ReportError(f"{path}: cannot parse ({exc})") from exc
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ReportError(f"{path}: missing columns {missing}")
    if "status" not in frame.columns:
        frame["status"] = "ok"
    return frame


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


def _save(figure: Figure, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def _interactive_law_frame(points: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The interactive law per repetition of each point (``interactive_law.check_repetitions``):
    the means over the repetitions of the predicted R and X and of the deviations, the worst
    repetition's deviation, and the think time each repetition implies at the clients and
    behind the middleware (mean and 95 % interval). `law_flag` says when a repetition deviates
    beyond the tolerance or a measured think time is negative (the inputs disagree)."""
    rows: list[dict[str, Any]] = []
    for _, row in points.iterrows():
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
        rows.append(
            {
                LAW_RESPONSE_TIME_MS: mean_interval(
                    c.predicted_response_time_ms for c in law.checks
                ).mean,
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
        )
    return pd.concat([points.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def _resolved(law: interactive_law.PointLaw) -> list[float]:
    """Measured think times with those within the resolution of their inputs (±1 % of the
    repetition's R: the clients' counts and latencies are two counters of the same seconds)
    taken as 0; a negative one beyond it stays negative, and flagged."""
    return [
        0.0 if abs(z) <= Z_RESOLUTION * c.measured_response_time_ms else z
        for z, c in zip(law.think_times_ms, law.checks, strict=True)
    ]


def _has_values(points: pd.DataFrame, column: str) -> bool:
    return column in points.columns and bool(points[column].notna().any())


def _floats(rows: pd.DataFrame, column: str) -> list[float]:
    if column not in rows.columns:
        return [math.nan] * len(rows)
    return [float(v) for v in pd.to_numeric(rows[column], errors="coerce")]


def _has_middleware(points: pd.DataFrame) -> bool:
    columns = [mean_column(c) for c in MW_COLUMNS]
    if not all(c in points.columns for c in columns):
        return False
    return bool(points[columns].notna().all(axis=1).any())


HDR_PERCENTILES = (50.0, 75.0, 90.0, 95.0, 99.0, 99.9)


def latency_distributions(
    experiment: Experiment, points: pd.DataFrame, x: str, series: Sequence[str]
) -> tuple[dict[str, tuple[list[float], list[float]]], dict[str, dict[float, float]]]:
    """For the heaviest point of each series: the clients' HDR histograms over the measured
    interval pooled over instances and repetitions, as a density and as percentiles (the same
    numbers as the summary's p50/p90/p99 of that point's repetitions pooled)."""
    pooled = {}
    for label, group in plots.iter_series(points, series):
        heaviest = group.sort_values(x).iloc[-1]
        runs = experiment.runs_of(int(heaviest["point"]))
        merged = merge_histograms(r.histogram() for r in runs)
        if merged is None or merged.get_total_count() == 0:
            continue
        at = f"{plots.short_name(x)}={plots.format_value(heaviest[x])}"
        pooled[f"{label}, {at}" if label else at] = merged
    percentiles = {k: percentiles_ms(h, HDR_PERCENTILES) for k, h in pooled.items()}
    cut = max((v[99.0] for v in percentiles.values()), default=None)
    densities = {k: density_ms(h, cut_ms=cut) for k, h in pooled.items()}
    return densities, percentiles


FACTORIAL_RESPONSES = (
    (THROUGHPUT_OPS_PER_S, "throughput", "factorial_tp"),
    (RESPONSE_TIME_MS, "response time", "factorial_rt"),
    ("1/response_time_ms", "1 / response time", "factorial_inv_rt"),
)
FACTORIAL_CSV = "factorial.csv"


def _significant(row: pd.Series) -> bool:
    """Whether a term's effect interval excludes zero (never for the error row)."""
    return bool(
        row["term"] != "error"
        and not pd.isna(row["ci_low"])
        and (row["ci_low"] > 0 or row["ci_high"] < 0)
    )


def factorial_frame(results: Sequence[tuple[str, factorial.FactorialResult]]) -> pd.DataFrame:
    """factorial.csv: the 2^k r tables of the report, one row per response and term (the
    error last), with the factors' full names; columns as `cachelab.columns` catalogues them."""
    frames = []
    for response, result in results:
        table = result.table()
        frames.append(
            pd.DataFrame(
                {
                    "response": response,
                    "term": table["term"],
                    "effect": table["effect"],
                    "effect_ci_low": table["ci_low"],
                    "effect_ci_high": table["ci_high"],
                    "ss": table["ss"],
                    "variation_pct": table["variation_pct"],
                    "significant": [_significant(r) for _, r in table.iterrows()],
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _factorial_section(
    summary: pd.DataFrame, axes: Sequence[str], figures: Figures, out: Path
) -> list[dict[str, Any]]:
    factors = factorial.two_level_factors(summary, axes)
    if factors is None:
        return []
    sections: list[dict[str, Any]] = []
    analysed: list[tuple[str, factorial.FactorialResult]] = []
    for response, title, key in FACTORIAL_RESPONSES:
        try:
            result = factorial.analyze_summary(summary, factors, response=response)
        except ValueError as exc:
            sections.append({"title": title, "error": str(exc)})
            continue
        analysed.append((response, result))
        figure = Figure(figsize=(6.0, 3.6))
        plots.plot_factorial_variation(figure.subplots(), result, f"Variation of {title}")
        _save(figure, out / f"{key}.png")
        figures.files[key] = f"{key}.png"
        table = result.table()
        levels = {f: sorted(summary[f].dropna().unique().tolist()) for f in factors}
        sections.append(
            {
                "title": title,
                "figure": f"{key}.png",
                "factors": [
                    {"name": f, "low": levels[f][0], "high": levels[f][1]} for f in factors
                ],
                "repetitions": result.repetitions,
                "confidence_pct": round(100 * result.confidence),
                "rows": [
                    {
                        "term": plots.short_factor_term(str(r["term"])),
                        "effect": r["effect"],
                        "ci_low": r["ci_low"],
                        "ci_high": r["ci_high"],
                        "variation_pct": r["variation_pct"],
                        "significant": _significant(r),
                    }
                    for _, r in table.iterrows()
                ],
                "sst": result.sst,
                "sse": result.sse,
                "error_pct": result.error_pct,
                "error_warning": result.error_pct > FACTORIAL_ERROR_LIMIT_PCT,
            }
        )
    if analysed:
        _without_empty(factorial_frame(analysed)).to_csv(out / FACTORIAL_CSV, index=False)
    return sections


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first_line(value: Any) -> str:
    return str(value).splitlines()[0] if value else ""


def run_info(metadata: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """The run facts the report prints, from ``metadata.json`` and ``status.json``: git, tools,
    host facts with the load average before and after, command line and run settings."""
    git_value, tools_value = metadata.get("git"), metadata.get("tools")
    git: dict[str, Any] = git_value if isinstance(git_value, dict) else {}
    tools: dict[str, Any] = tools_value if isinstance(tools_value, dict) else {}
    host: dict[str, Any] = _mapping(metadata.get("host"))
    after: dict[str, Any] = _mapping(metadata.get("host_after"))
    settings: dict[str, Any] = _mapping(metadata.get("settings"))
    command = metadata.get("command_line")

    def load(facts: Any) -> str | None:
        values = facts.get("load_avg") if isinstance(facts, dict) else None
        return " / ".join(f"{v:.2f}" for v in values) if values else None

    return {
        "git_sha": git.get("sha") or metadata.get("git_sha"),
        "git_dirty": git.get("dirty"),
        "started": status.get("started") or metadata.get("created"),
        "finished": status.get("finished"),
        "target": status.get("target") or metadata.get("target"),
        "state": status.get("state"),
        "message": status.get("message") or "",
        "runs": (
            f"{status['runs_done']} / {status['runs_total']}"
            if "runs_done" in status and "runs_total" in status
            else None
        ),
        "subset": _subset(status),
        "tools": {k: _first_line(v) for k, v in tools.items() if v},
        "synthetic": bool(metadata.get("synthetic")),
        "generator": metadata.get("generator"),
        "host": {
            "hostname": host.get("hostname"),
            "cpu": f"{host.get('cpu_count') or '?'} x {host.get('cpu_model') or 'unknown CPU'}",
            "memory": host.get("memory_total"),
            "kernel": host.get("kernel"),
        }
        if host
        else {},
        "load_before": load(host),
        "load_after": load(after),
        "command_line": " ".join(command) if isinstance(command, list) else None,
        "settings": {
            k: json.dumps(v) if isinstance(v, dict) else str(v)
            for k, v in settings.items()
            if k != "target"
        },
        "warnings": host_warnings(metadata),
    }


def _subset(status: dict[str, Any]) -> str | None:
    """`2 of 8 points (--only workers=8 --only clients_per_thread=1,4)` for a subset run."""
    selected, total = status.get("points_selected") or 0, status.get("points_total") or 0
    if not 0 < selected < total:
        return None
    only = " ".join(f"--only {t}" for t in status.get("only") or [])
    return f"{selected} of {total} points" + (f" ({only})" if only else "")


def format_number(value: Any, digits: int | None = None) -> str:
    """A number at sensible precision: thousands grouped without decimals from 1,000 up, then
    fewer decimals the larger the value (3 significant figures below 10); `digits` fixes the
    decimals. NaN and None print as an en dash."""
    if value is None:
        return "\u2013"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{value:,}"
    if not isinstance(value, float | np.floating):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "\u2013"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if digits is not None:
        return f"{value:,.{digits}f}"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 10:
        return f"{value:.2f}"
    if magnitude == 0:
        return "0"
    if magnitude < 0.001:
        return f"{value:.1e}"
    decimals = max(0, min(6, 2 - math.floor(math.log10(magnitude))))
    return f"{value:.{decimals}f}"


def _figure(out: Path, figures: Figures, key: str, size: tuple[float, float]) -> Figure:
    figure = Figure(figsize=size)
    figures.files[key] = f"{key}.png"
    return figure


def write_point_csvs(
    out: Path, points: pd.DataFrame, section: report_analysis.AnalysisSection, keys: list[str]
) -> None:
    """points.csv, models.csv and bottlenecks.csv: every row names its point's swept values
    and clients, and no column is empty (every column is in `cachelab.columns`' catalogue)."""
    keys = list(dict.fromkeys(k for k in keys if k in points.columns))
    ids = points[["point", *keys]]
    _without_empty(points).to_csv(out / "points.csv", index=False)
    for name, frame in (
        ("models.csv", section.models_frame()),
        ("bottlenecks.csv", section.bottlenecks_frame()),
    ):
        merged = ids.merge(frame, on="point", how="right", validate="one_to_many")
        _without_empty(merged).to_csv(out / name, index=False)


def _without_empty(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without its columns that hold nothing (every cell NaN or empty text)."""
    empty = [c for c in frame.columns if frame[c].isna().all() or frame[c].astype(str).eq("").all()]
    return frame.drop(columns=empty)


@dataclass
class AnalysedResults:
    """A results folder read and analysed once: what every section of the report draws from."""

    experiment: Experiment
    spec: Spec
    summary_all: pd.DataFrame  # every row of summary.csv
    summary: pd.DataFrame  # the rows the report uses
    left_out: dict[str, int]  # rows left out, by reason
    x: str
    axes: list[str]
    series: list[str]
    points: pd.DataFrame
    section: report_analysis.AnalysisSection


def analyse_results(results_dir: Path) -> AnalysedResults:
    """Read a results folder and analyse it (points, their statistics, operational analysis
    and models) without drawing or writing anything.

    Raises
    ------
    ReportError
        If ``spec.yaml`` or ``summary.csv`` is missing or malformed, or no run is usable.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    try:
        experiment = read_experiment(results_dir)
    except ResultsError as error:
        raise ReportError(str(error)) from None
    spec: Spec = experiment.spec
    summary_all = read_summary(results_dir)
    summary, left_out = select_rows(summary_all)
    if summary.empty:
        raise ReportError(
            f"{results_dir / 'summary.csv'}: no row with status ok and a measured throughput"
        )

    x = spec.report.x
    if x not in summary.columns:
        raise ReportError(f"report.x: column {x!r} not in summary.csv")
    axes = [a for a in spec.sweep if a in summary.columns]
    series = choose_series(summary, x, axes, spec.report.series)

    keys = ["point", *dict.fromkeys([*axes, x, *[c for c in POINT_COLUMNS if c in summary]])]
    keys = list(dict.fromkeys(keys))
    used = set(zip(summary["point"].astype(int), summary["repetition"].astype(int), strict=True))
    experiment.runs = [r for r in experiment.runs if (r.point, r.repetition) in used]
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
    points, section = report_analysis.analyse_points(points, summary, experiment, x, series)
    if x in spec.sweep and not pd.api.types.is_numeric_dtype(points[x]):
        # text axes (e.g. workload.ratio) keep the spec's order, not alphabetical order
        order = [str(v) for v in spec.sweep[x]]
        points[x] = pd.Categorical(points[x].astype(str), categories=order, ordered=True)

    return AnalysedResults(
        experiment, spec, summary_all, summary, left_out, x, axes, series, points, section
    )


def build_report(results_dir: Path) -> Path:
    """Write ``<results_dir>/report/index.html`` plus PNG figures and CSV tables (points.csv,
    models.csv, bottlenecks.csv and, for a 2^k design, factorial.csv); return the path.

    Runs that failed, were cut short (partial) or measured nothing are left out and counted in
    the header, so an interrupted experiment still gets a report.

    Raises
    ------
    ReportError
        If ``spec.yaml`` or ``summary.csv`` is missing or malformed, or no run is usable.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    if is_search(results_dir) and not (results_dir / "summary.csv").is_file():
        return build_search_report(results_dir)
    analysed = analyse_results(results_dir)
    experiment, spec, summary_all, summary = (
        analysed.experiment,
        analysed.spec,
        analysed.summary_all,
        analysed.summary,
    )
    left_out, x, axes, series = analysed.left_out, analysed.x, analysed.axes, analysed.series
    points, section = analysed.points, analysed.section

    out = results_dir / "report"
    out.mkdir(exist_ok=True)
    figures = Figures()
    has_mw = _has_middleware(points)
    wide = (12.0, 4.6)

    figure = _figure(out, figures, "throughput", wide)
    left, right = figure.subplots(1, 2)
    plots.plot_throughput(left, points, x, series)
    plots_analysis.mark_flagged(left, points, x, mean_column(THROUGHPUT_OPS_PER_S))
    plots.plot_response_time(right, points, x, series)
    plots_analysis.mark_flagged(right, points, x, mean_column(RESPONSE_TIME_MS))
    _save(figure, out / "throughput.png")

    if has_mw:
        figure = _figure(out, figures, "both_sides", wide)
        left, right = figure.subplots(1, 2)
        plots_analysis.plot_both_sides(left, right, points, x, series)
        _save(figure, out / "both_sides.png")

        size = (max(12.0, 0.9 * points[x].nunique() * max(1, len(series))), 4.6)
        figure = _figure(out, figures, "mw_breakdown", size)
        plots.plot_mw_breakdown(figure.subplots(), points, x, series)
        _save(figure, out / "mw_breakdown.png")

        figure = _figure(out, figures, "queue_length", wide)
        left, right = figure.subplots(1, 2)
        plots_analysis.plot_queue_length(left, points, x, series)
        plots_analysis.plot_think_time(right, points, x, series)
        _save(figure, out / "queue_length.png")

    if _has_values(points, mean_column(HOT_KEY_SHARE)) or _has_values(
        points, mean_column(SERVER_REQUESTS_MAX_OVER_MEAN)
    ):
        figure = _figure(out, figures, "key_skew", wide)
        left, right = figure.subplots(1, 2)
        if _has_values(points, mean_column(HOT_KEY_SHARE)):
            plots.plot_hot_key_share(left, points, x, series)
        if _has_values(points, mean_column(SERVER_REQUESTS_MAX_OVER_MEAN)):
            plots.plot_server_balance(right, points, x, series)
        _save(figure, out / "key_skew.png")

    densities, percentiles = latency_distributions(experiment, points, x, series)
    if densities:
        figure = _figure(out, figures, "latency_distribution", wide)
        left, right = figure.subplots(1, 2)
        plots.plot_latency_density(left, densities)
        plots.plot_percentiles(right, percentiles)
        _save(figure, out / "latency_distribution.png")

    samples = report_analysis.window_samples(experiment, points)
    heaviest = points.sort_values(x).iloc[-1] if not points.empty else None
    trace = (
        report_analysis.trace_of(experiment, int(str(heaviest["point"])))
        if heaviest is not None
        else None
    )
    if samples or trace:
        figure = _figure(out, figures, "windows", wide)
        left, right = figure.subplots(1, 2)
        if trace:
            plots_analysis.plot_window_trace(
                left,
                trace["seconds"],
                trace["client"],
                trace["middleware"],
                trace["start_s"],
                trace["end_s"],
                f"1 s windows of {trace['run']}",
            )
        if samples:
            plots_analysis.plot_boxes(
                right, samples, "throughput [ops/s]", "Measured 1 s windows, all repetitions"
            )
        _save(figure, out / "windows.png")

    if section.ops:
        figure = _figure(out, figures, "rt_per_op", (12.0, 4.6))
        plots_analysis.plot_rt_per_op(figure.subplots(), points, x, section.ops, series)
        _save(figure, out / "rt_per_op.png")

    figure = _figure(out, figures, "interactive_law", wide)
    left, right = figure.subplots(1, 2)
    plots.plot_interactive_law(left, points, x, series)
    if MVA_THROUGHPUT_OPS_PER_S in points.columns:
        plots_analysis.plot_model_response_time(right, points, x, series)
    else:
        right.set_axis_off()
    _save(figure, out / "interactive_law.png")

    if x == TOTAL_CLIENTS and MVA_THROUGHPUT_OPS_PER_S in points.columns:
        figure = _figure(out, figures, "mva_model", wide)
        plots_analysis.plot_mva_per_point(figure.subplots(), points, x, series, section.curves)
        _save(figure, out / "mva_model.png")

    if section.predictions:
        figure = _figure(out, figures, "rtt_prediction", wide)
        plots_analysis.plot_rtt_predictions(
            figure.subplots(), points, x, series, section.predictions
        )
        _save(figure, out / "rtt_prediction.png")
        figures.captions["rtt_prediction"] = report_analysis.prediction_caption(section.predictions)

    if section.stages:
        figure = _figure(out, figures, "utilisation", wide)
        left, right = figure.subplots(1, 2)
        heavy_label = points.sort_values(x).iloc[-1]["label"]
        one_line = points[points["label"] == heavy_label]
        plots_analysis.plot_utilisation(left, one_line, x, section.stages)
        if heavy_label:
            left.set_title(f"Utilisation of each stage ({heavy_label})")
        if section.processes:
            host_cores = int((experiment.metadata.get("host") or {}).get("cpu_count") or 0)
            plots_analysis.plot_cpu(right, one_line, x, section.processes, host_cores)
        else:
            right.set_axis_off()
        _save(figure, out / "utilisation.png")

    factorial_sections = _factorial_section(summary, axes, figures, out)
    more_sections = extra_sections(results_dir, out, axes)

    write_point_csvs(out, points, section, [*axes, TOTAL_CLIENTS])

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["num"] = format_number
    environment.filters["short"] = plots.short_name
    environment.globals.update(
        util_column=util_column,
        cpu_column=cpu_column,
        rt_column=rt_column,
        delay_column=delay_column,
    )
    info = run_info(experiment.metadata, experiment.status)
    flagged = int((points["flags"].astype(str).str.len() > 0).sum())
    html = environment.get_template(TEMPLATE_NAME).render(
        spec=spec,
        info=info,
        x=x,
        series=series,
        axes=axes,
        points=points.to_dict(orient="records"),
        has_mw=has_mw,
        has_window_std=THROUGHPUT_WINDOW_STD_OPS_PER_S in points.columns,
        figures=figures.files,
        captions=figures.captions,
        model_rows=section.model_rows,
        sentences=section.sentences,
        analyses=section.analyses,
        stages=section.stages,
        processes=section.processes,
        ops=section.ops,
        max_rows=report_analysis.max_throughput_table(points, series),
        factorial_sections=factorial_sections,
        extra_sections=more_sections,
        rows_total=len(summary_all),
        left_out=left_out,
        skipped=experiment.skipped,
        flagged=flagged,
        tolerance_pct=LAW_TOLERANCE_PCT,
        mva_target_pct=MVA_TARGET_PCT,
        oos_rows=report_analysis.out_of_sample_table(section, points),
        oos_name=OUT_OF_SAMPLE,
        oos_tp_target_pct=OOS_THROUGHPUT_TARGET_PCT,
        oos_rt_target_pct=OOS_RESPONSE_TIME_TARGET_PCT,
        cv_limit_pct=CV_LIMIT_PCT,
        client_mw_limit_pct=CLIENT_MW_LIMIT_PCT,
    )
    index = out / "index.html"
    index.write_text(html, encoding="utf-8")
    return index
