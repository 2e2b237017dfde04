"""The report's last stage: ``index.html`` rendered from one context object (the spec, x, the
sweep's axes and lines, every section's typed data, the figures' file names and the limits the
page judges against) with the Jinja template ``templates/report.html.j2``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from cachelab.analysis.models import (
    MVA_TARGET_PCT,
    OOS_RESPONSE_TIME_TARGET_PCT,
    OOS_THROUGHPUT_TARGET_PCT,
)
from cachelab.columns import cpu_column, delay_column, rt_column, util_column
from cachelab.report import plots
from cachelab.report.analyse import LAW_TOLERANCE_PCT, AnalysedResults
from cachelab.report.figures.plan import Figures
from cachelab.report.sections import ReportSections
from cachelab.report.sections.extras import ExtraSection
from cachelab.report.sections.factorial import FactorialResponse
from cachelab.report.sections.models import ModelsSection
from cachelab.report.sections.points import PointsSection
from cachelab.report.sections.run import RowsAccount, RunInfo
from cachelab.results.noise import CLIENT_MW_LIMIT_PCT, CV_LIMIT_PCT
from cachelab.spec import Spec

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "report.html.j2"
INDEX = "index.html"


@dataclass(frozen=True)
class Limits:
    """What the page marks a number against."""

    tolerance_pct: float = LAW_TOLERANCE_PCT
    mva_target_pct: float = MVA_TARGET_PCT
    oos_tp_target_pct: float = OOS_THROUGHPUT_TARGET_PCT
    oos_rt_target_pct: float = OOS_RESPONSE_TIME_TARGET_PCT
    cv_limit_pct: float = CV_LIMIT_PCT
    client_mw_limit_pct: float = CLIENT_MW_LIMIT_PCT


@dataclass(frozen=True)
class ReportContext:
    """Everything the template shows."""

    spec: Spec
    x: str
    axes: list[str]
    series: list[str]
    info: RunInfo
    rows: RowsAccount
    points: PointsSection
    models: ModelsSection
    factorial: list[FactorialResponse]
    figures: Figures
    extras: list[ExtraSection]
    limits: Limits = field(default_factory=Limits)


def report_context(
    analysed: AnalysedResults,
    sections: ReportSections,
    figures: Figures,
) -> ReportContext:
    return ReportContext(
        spec=analysed.spec,
        x=analysed.x,
        axes=analysed.axes,
        series=analysed.series,
        info=sections.info,
        rows=sections.rows,
        points=sections.points,
        models=sections.models,
        factorial=sections.factorial,
        figures=figures,
        extras=sections.extras,
    )


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
    return _at_precision(value)


def _at_precision(value: float) -> str:
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


def _environment() -> jinja2.Environment:
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
    return environment


def render(context: ReportContext, out: Path) -> Path:
    """Write ``out/index.html``; return its path."""
    html = _environment().get_template(TEMPLATE_NAME).render(report=context)
    index = out / INDEX
    index.write_text(html, encoding="utf-8")
    return index
