"""Which figures the report draws and how: each a name, a size, its panels side by side and the
function that draws them (`figures.points`, `figures.latency`, `figures.factorial`); `draw`
saves each as ``<name>.png`` in the report folder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cachelab.columns import (
    HOT_KEY_SHARE,
    MVA_THROUGHPUT_OPS_PER_S,
    SERVER_REQUESTS_MAX_OVER_MEAN,
    TOTAL_CLIENTS,
    mean_column,
)
from cachelab.report.analyse import AnalysedResults
from cachelab.report.analysis import prediction_caption
from cachelab.report.figures import factorial, faults, latency, panels, points, seeds, tail
from cachelab.report.sections import ReportSections
from cachelab.report.sections.faults import FaultsSection
from cachelab.report.sections.panels import PanelsSection
from cachelab.report.sections.seeds import SeedsSection
from cachelab.report.sections.tail import TailSection

WIDE = (12.0, 4.6)
ONE = (1, 1)
PAIR = (1, 2)
DPI = 110


@dataclass(frozen=True)
class Plan:
    """One figure to draw."""

    key: str
    draw: Callable[[Sequence[Axes]], None]
    grid: tuple[int, int] = PAIR  # rows and columns of panels
    size: tuple[float, float] = WIDE
    caption: str | None = None
    sharex: bool = False

    @property
    def file(self) -> str:
        return f"{self.key}.png"


@dataclass
class Figures:
    """PNG file names (relative to ``report/``) keyed by figure name, plus captions."""

    files: dict[str, str] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)


def _point_plans(a: AnalysedResults, sections: ReportSections) -> list[Plan]:
    plans = [Plan("throughput", partial(points.throughput, a=a))]
    if sections.points.has_mw:
        plans += [
            Plan("both_sides", partial(points.both_sides, a=a)),
            Plan(
                "mw_breakdown", partial(points.mw_breakdown, a=a), ONE, points.mw_breakdown_size(a)
            ),
            Plan("queue_length", partial(points.queue_length, a=a)),
        ]
    if points.has_values(a, mean_column(HOT_KEY_SHARE)) or points.has_values(
        a, mean_column(SERVER_REQUESTS_MAX_OVER_MEAN)
    ):
        plans.append(Plan("key_skew", partial(points.key_skew, a=a)))
    return plans


def _latency_plans(sections: ReportSections) -> list[Plan]:
    plans = []
    if sections.latency.densities:
        plans.append(
            Plan(
                "latency_distribution",
                partial(latency.latency_distribution, latency=sections.latency),
            )
        )
    if sections.windows.samples or sections.windows.trace:
        plans.append(Plan("windows", partial(latency.windows, data=sections.windows)))
    return plans


def _model_plans(a: AnalysedResults) -> list[Plan]:
    plans = []
    if a.section.ops:
        plans.append(Plan("rt_per_op", partial(points.rt_per_op, a=a), ONE))
    plans.append(Plan("interactive_law", partial(points.interactive_law, a=a)))
    if a.x == TOTAL_CLIENTS and MVA_THROUGHPUT_OPS_PER_S in a.points.columns:
        plans.append(Plan("mva_model", partial(points.mva_model, a=a), ONE))
    if a.section.predictions:
        caption = prediction_caption(a.section.predictions)
        plans.append(
            Plan("rtt_prediction", partial(points.rtt_prediction, a=a), ONE, caption=caption)
        )
    if a.section.stages:
        plans.append(Plan("utilisation", partial(points.utilisation, a=a)))
    return plans


def _factorial_plans(sections: ReportSections) -> list[Plan]:
    return [
        Plan(r.key, partial(factorial.variation, response=r), ONE, (6.0, 3.6))
        for r in sections.factorial
        if r.result is not None
    ]


def tail_plan(section: TailSection) -> Plan:
    size = tail.tail_size(section)
    return Plan("tail_breakdown", partial(tail.tail_breakdown, section=section), ONE, size)


def seeds_plan(section: SeedsSection) -> Plan:
    grid, size = (1, len(section.x_columns)), seeds.seeds_size(section)
    return Plan("seeds", partial(seeds.seed_overlays, section=section), grid, size)


def fault_plans(section: FaultsSection) -> list[Plan]:
    return [
        Plan(
            run.figure.removesuffix(".png"),
            partial(faults.fault_run, run=run),
            (3, 1),
            faults.SIZE,
            sharex=True,
        )
        for run in section.runs
    ]


def panel_plans(section: PanelsSection) -> list[Plan]:
    plans = []
    for run in section.dashboards:
        if not run.with_data:
            continue
        grid, size = panels.grid(run)
        draw = partial(panels.dashboard_run, run=run)
        plans.append(Plan(run.figure_file().removesuffix(".png"), draw, grid, size))
    return plans


def _extra_plans(sections: ReportSections) -> list[Plan]:
    plans = []
    if sections.tail:
        plans.append(tail_plan(sections.tail))
    if sections.seeds:
        plans.append(seeds_plan(sections.seeds))
    if sections.faults:
        plans += fault_plans(sections.faults)
    if sections.panels:
        plans += panel_plans(sections.panels)
    return plans


def figure_plans(a: AnalysedResults, sections: ReportSections) -> list[Plan]:
    """The figures that apply to these results, in the report's order."""
    return [
        *_point_plans(a, sections),
        *_latency_plans(sections),
        *_model_plans(a),
        *_factorial_plans(sections),
        *_extra_plans(sections),
    ]


def draw(plans: Sequence[Plan], out: Path) -> Figures:
    """Draw and save every planned figure in ``out``."""
    figures = Figures()
    for plan in plans:
        figure = Figure(figsize=plan.size)
        axes = figure.subplots(*plan.grid, sharex=plan.sharex, squeeze=False)
        plan.draw(list(axes.ravel()))
        figure.tight_layout()
        figure.savefig(out / plan.file, dpi=DPI)
        figures.files[plan.key] = plan.file
        if plan.caption is not None:
            figures.captions[plan.key] = plan.caption
    return figures
