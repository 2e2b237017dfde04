"""Build ``report/index.html`` and its PNG figures from a results folder (docs/interfaces.md §4).

The report reads only the folder: ``spec.yaml``, ``metadata.json``, ``status.json``,
``summary.csv`` and the raw files under ``raw/``. It shows throughput and response time against
the spec's ``report.x`` (one line per series, error bars = SD over repetitions), the middleware
time breakdown, the client response-time histogram and percentiles, the interactive-law check per
point, M/M/1 and M/M/m predictions of the middleware queue, an MVA model of the throughput curve,
and, when the sweep is a 2-level design over two or more factors, the 2^k r factorial analysis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from cachelab import plots
from cachelab.analysis import factorial, interactive_law, queueing
from cachelab.analysis.aggregate import aggregate_points, window_std
from cachelab.results import ResultsError
from cachelab.results.experiment import Experiment, read_experiment
from cachelab.results.hdr import density_ms, merge_histograms, percentiles_ms
from cachelab.spec import Spec
from cachelab.summary import CONFIG_COLUMNS, METRIC_COLUMNS

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "report.html.j2"

REQUIRED_COLUMNS = (
    "point",
    "repetition",
    "total_clients",
    "think_time_ms",
    "throughput_ops_per_s",
    "response_time_ms",
)
METRICS = tuple(c for c in METRIC_COLUMNS if c not in ("hits", "misses", "status"))
POINT_COLUMNS = tuple(CONFIG_COLUMNS)
MW_COLUMNS = ("mw_queue_time_ms", "mw_service_time_ms", "mw_response_time_ms")


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


def _interactive_law_frame(points: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, row in points.iterrows():
        check = interactive_law.check(
            clients=float(row["total_clients"]),
            throughput_ops_per_s=float(row["throughput_ops_per_s_mean"]),
            measured_response_time_ms=float(row["response_time_ms_mean"]),
            think_time_ms=float(row["think_time_ms"]),
        )
        rows.append(
            {
                "predicted_response_time_ms": check.predicted_response_time_ms,
                "predicted_throughput_ops_per_s": check.predicted_throughput_ops_per_s,
                "deviation_pct": check.deviation_pct,
            }
        )
    return pd.concat([points.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def _has_middleware(points: pd.DataFrame) -> bool:
    columns = [f"{c}_mean" for c in MW_COLUMNS]
    if not all(c in points.columns for c in columns):
        return False
    return bool(points[columns].notna().all(axis=1).any())


def queueing_table(points: pd.DataFrame) -> list[dict[str, Any]]:
    """Per point with a middleware: M/M/1 (mu = WT/ST) and M/M/m (m = WT, mu = 1/ST) predictions
    of the queue time and length, next to the measured ones (ASL 2017 §7, ASL 2019 §5)."""
    rows: list[dict[str, Any]] = []
    for _, p in points.iterrows():
        service_ms = p.get("mw_service_time_ms_mean", math.nan)
        mw_tp = p.get("mw_throughput_ops_per_s_mean", math.nan)
        middlewares = p.get("middlewares", 1)
        workers = p.get("workers", math.nan)
        if any(pd.isna(v) for v in (service_ms, mw_tp, workers, middlewares)) or service_ms <= 0:
            continue
        if middlewares < 1 or mw_tp <= 0:
            continue
        arrivals = float(mw_tp) / float(middlewares)
        m = int(workers)
        service_rate = 1000.0 / float(service_ms)
        row: dict[str, Any] = {
            "point": int(p["point"]),
            "label": p["label"],
            "arrival_rate_per_mw": arrivals,
            "workers": m,
            "service_time_ms": float(service_ms),
            "utilization": arrivals / (m * service_rate),
            "measured_queue_time_ms": float(p["mw_queue_time_ms_mean"]),
            "measured_queue_length": float(p.get("mw_queue_length_mean", math.nan)),
            "little_queue_length": queueing.littles_law_jobs(
                arrivals, float(p["mw_queue_time_ms_mean"]) / 1000.0
            ),
            "mm1_queue_time_ms": math.nan,
            "mm1_queue_length": math.nan,
            "mmm_queue_time_ms": math.nan,
            "mmm_queue_length": math.nan,
        }
        if row["utilization"] < 1:
            single = queueing.mm1(arrivals, m * service_rate)
            multi = queueing.mmm(arrivals, service_rate, m)
            row.update(
                mm1_queue_time_ms=single.mean_waiting_time_s * 1000.0,
                mm1_queue_length=single.mean_jobs_in_queue,
                mmm_queue_time_ms=multi.mean_waiting_time_s * 1000.0,
                mmm_queue_length=multi.mean_jobs_in_queue,
            )
        rows.append(row)
    return rows


def mva_models(
    points: pd.DataFrame, x: str, series: Sequence[str]
) -> dict[str, tuple[list[float], list[float]]]:
    """MVA throughput curve per series: the worker pool as one station with m = WT x MW servers
    of demand ST (measured, mean over the series), and everything outside queue and service
    (network, client, rest of MW, measured at the lightest point) as the think time."""
    if x != "total_clients" or not _has_middleware(points):
        return {}
    models: dict[str, tuple[list[float], list[float]]] = {}
    for label, group in plots.iter_series(points, series):
        group = group.dropna(subset=[f"{c}_mean" for c in MW_COLUMNS]).sort_values(x)
        if group.empty:
            continue
        service_ms = float(group["mw_service_time_ms_mean"].mean())
        lightest = group.iloc[0]
        outside_ms = float(
            lightest["response_time_ms_mean"]
            - lightest["mw_queue_time_ms_mean"]
            - lightest["mw_service_time_ms_mean"]
            + lightest["think_time_ms"]
        )
        servers = int(lightest.get("workers", 1)) * max(1, int(lightest.get("middlewares", 1)))
        max_clients = int(group[x].max())
        if service_ms <= 0 or max_clients < 1:
            continue
        solved = queueing.mva(
            [service_ms / 1000.0], max(0.0, outside_ms) / 1000.0, max_clients, [servers]
        )
        models[label] = (
            [float(n) for n in solved.populations],
            [float(v) for v in solved.throughput_per_s],
        )
    return models


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


def _factorial_section(
    summary: pd.DataFrame, axes: Sequence[str], figures: Figures, out: Path
) -> list[dict[str, Any]]:
    factors = factorial.two_level_factors(summary, axes)
    if factors is None:
        return []
    sections: list[dict[str, Any]] = []
    for response, title in (
        ("throughput_ops_per_s", "throughput"),
        ("1/response_time_ms", "1 / response time"),
    ):
        try:
            result = factorial.analyze_summary(summary, factors, response=response)
        except ValueError as exc:
            sections.append({"title": title, "error": str(exc)})
            continue
        key = "factorial_tp" if response.startswith("throughput") else "factorial_inv_rt"
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
                        "significant": (
                            r["term"] != "error"
                            and not pd.isna(r["ci_low"])
                            and (r["ci_low"] > 0 or r["ci_high"] < 0)
                        ),
                    }
                    for _, r in table.iterrows()
                ],
                "sst": result.sst,
                "sse": result.sse,
            }
        )
    return sections


def run_info(metadata: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """The run facts the report prints, from ``metadata.json`` and ``status.json``."""
    git_value, tools_value = metadata.get("git"), metadata.get("tools")
    git: dict[str, Any] = git_value if isinstance(git_value, dict) else {}
    tools: dict[str, Any] = tools_value if isinstance(tools_value, dict) else {}
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
        "tools": {k: str(v).splitlines()[0] for k, v in tools.items() if v},
        "synthetic": bool(metadata.get("synthetic")),
        "generator": metadata.get("generator"),
    }


def _format(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "\u2013"  # en dash: no value
    if isinstance(value, float | np.floating):
        return f"{value:,.{digits}f}"
    if isinstance(value, int | np.integer):
        return f"{value:,}"
    return str(value)


def build_report(results_dir: Path) -> Path:
    """Write ``<results_dir>/report/index.html`` plus PNG figures and CSV tables; return the path.

    Raises
    ------
    ReportError
        If ``spec.yaml`` or ``summary.csv`` is missing or malformed, or no row succeeded.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    try:
        experiment = read_experiment(results_dir)
    except ResultsError as error:
        raise ReportError(str(error)) from None
    spec: Spec = experiment.spec
    metadata, status = experiment.metadata, experiment.status
    summary_all = read_summary(results_dir)
    summary = summary_all[summary_all["status"] != "failed"].copy()
    if summary.empty:
        raise ReportError(f"{results_dir / 'summary.csv'}: no row with status ok or partial")

    x = spec.report.x
    if x not in summary.columns:
        raise ReportError(f"report.x: column {x!r} not in summary.csv")
    axes = [a for a in spec.sweep if a in summary.columns]
    series = choose_series(summary, x, axes, spec.report.series)

    keys = ["point", *dict.fromkeys([*axes, x, *[c for c in POINT_COLUMNS if c in summary]])]
    keys = list(dict.fromkeys(keys))
    points = aggregate_points(summary, METRICS, keys)
    windows = window_std(experiment.runs)
    if not windows.empty:
        points = points.merge(
            windows.drop(columns=["repetitions"]), on="point", how="left", validate="one_to_one"
        )
    points["label"] = [
        plots.series_label(series, [row[s] for s in series]) if series else ""
        for _, row in points.iterrows()
    ]
    points = _interactive_law_frame(points)
    sweep_cfg = spec.sweep
    if x in sweep_cfg and not pd.api.types.is_numeric_dtype(points[x]):
        # text axes (e.g. workload.ratio) keep the spec's order, not alphabetical order
        order = [str(v) for v in sweep_cfg[x]]
        points[x] = pd.Categorical(points[x].astype(str), categories=order, ordered=True)

    out = results_dir / "report"
    out.mkdir(exist_ok=True)
    figures = Figures()

    figure = Figure(figsize=(6.4, 4.2))
    plots.plot_throughput(figure.subplots(), points, x, series)
    _save(figure, out / "throughput.png")
    figures.files["throughput"] = "throughput.png"

    figure = Figure(figsize=(6.4, 4.2))
    plots.plot_response_time(figure.subplots(), points, x, series)
    _save(figure, out / "response_time.png")
    figures.files["response_time"] = "response_time.png"

    figure = Figure(figsize=(6.4, 4.2))
    plots.plot_interactive_law(figure.subplots(), points, x, series)
    _save(figure, out / "interactive_law.png")
    figures.files["interactive_law"] = "interactive_law.png"

    has_mw = _has_middleware(points)
    if has_mw:
        figure = Figure(figsize=(max(6.4, 0.9 * points[x].nunique() * max(1, len(series))), 4.4))
        plots.plot_mw_breakdown(figure.subplots(), points, x, series)
        _save(figure, out / "mw_breakdown.png")
        figures.files["mw_breakdown"] = "mw_breakdown.png"

    models = mva_models(points, x, series)
    if models:
        figure = Figure(figsize=(6.4, 4.2))
        plots.plot_model_throughput(figure.subplots(), points, models, x, series)
        _save(figure, out / "mva_model.png")
        figures.files["mva_model"] = "mva_model.png"

    densities, percentiles = latency_distributions(experiment, points, x, series)
    if densities:
        figure = Figure(figsize=(11.0, 4.0))
        left, right = figure.subplots(1, 2)
        plots.plot_latency_density(left, densities)
        plots.plot_percentiles(right, percentiles)
        _save(figure, out / "latency_distribution.png")
        figures.files["latency_distribution"] = "latency_distribution.png"

    factorial_sections = _factorial_section(summary, axes, figures, out)
    queueing_rows = queueing_table(points)

    points.to_csv(out / "points.csv", index=False)

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["num"] = _format
    environment.filters["short"] = plots.short_name
    html = environment.get_template(TEMPLATE_NAME).render(
        spec=spec,
        info=run_info(metadata, status),
        x=x,
        series=series,
        axes=axes,
        points=points.to_dict(orient="records"),
        has_mw=has_mw,
        has_window_std="throughput_window_std" in points.columns,
        figures=figures.files,
        queueing_rows=queueing_rows,
        factorial_sections=factorial_sections,
        rows_total=len(summary_all),
        rows_failed=int((summary_all["status"] == "failed").sum()),
        rows_partial=int((summary_all["status"] == "partial").sum()),
        tolerance_pct=10.0,
    )
    index = out / "index.html"
    index.write_text(html, encoding="utf-8")
    return index
