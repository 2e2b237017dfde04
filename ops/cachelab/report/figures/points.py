"""The report's figures of the points against x, one line per series: each function draws one
figure's panels from the analysed results on the ``axes`` it is given (left to right)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from cachelab.columns import (
    HOT_KEY_SHARE,
    MVA_THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
    SERVER_REQUESTS_MAX_OVER_MEAN,
    THROUGHPUT_OPS_PER_S,
    mean_column,
)
from cachelab.report import plots, plots_analysis
from cachelab.report.analyse import AnalysedResults


def has_values(a: AnalysedResults, column: str) -> bool:
    return column in a.points.columns and bool(a.points[column].notna().any())


def throughput(axes: Sequence[Axes], a: AnalysedResults) -> None:
    left, right = axes
    plots.plot_throughput(left, a.points, a.x, a.series)
    plots_analysis.mark_flagged(left, a.points, a.x, mean_column(THROUGHPUT_OPS_PER_S))
    plots.plot_response_time(right, a.points, a.x, a.series)
    plots_analysis.mark_flagged(right, a.points, a.x, mean_column(RESPONSE_TIME_MS))


def both_sides(axes: Sequence[Axes], a: AnalysedResults) -> None:
    left, right = axes
    plots_analysis.plot_both_sides(left, right, a.points, a.x, a.series)


def mw_breakdown(axes: Sequence[Axes], a: AnalysedResults) -> None:
    plots.plot_mw_breakdown(axes[0], a.points, a.x, a.series)


def mw_breakdown_size(a: AnalysedResults) -> tuple[float, float]:
    """Wide enough for a bar group per x and line."""
    return (max(12.0, 0.9 * a.points[a.x].nunique() * max(1, len(a.series))), 4.6)


def queue_length(axes: Sequence[Axes], a: AnalysedResults) -> None:
    left, right = axes
    plots_analysis.plot_queue_length(left, a.points, a.x, a.series)
    plots_analysis.plot_think_time(right, a.points, a.x, a.series)


def key_skew(axes: Sequence[Axes], a: AnalysedResults) -> None:
    left, right = axes
    if has_values(a, mean_column(HOT_KEY_SHARE)):
        plots.plot_hot_key_share(left, a.points, a.x, a.series)
    if has_values(a, mean_column(SERVER_REQUESTS_MAX_OVER_MEAN)):
        plots.plot_server_balance(right, a.points, a.x, a.series)


def rt_per_op(axes: Sequence[Axes], a: AnalysedResults) -> None:
    plots_analysis.plot_rt_per_op(axes[0], a.points, a.x, a.section.ops, a.series)


def interactive_law(axes: Sequence[Axes], a: AnalysedResults) -> None:
    left, right = axes
    plots.plot_interactive_law(left, a.points, a.x, a.series)
    if MVA_THROUGHPUT_OPS_PER_S in a.points.columns:
        plots_analysis.plot_model_response_time(right, a.points, a.x, a.series)
    else:
        right.set_axis_off()


def mva_model(axes: Sequence[Axes], a: AnalysedResults) -> None:
    plots_analysis.plot_mva_per_point(axes[0], a.points, a.x, a.series, a.section.curves)


def rtt_prediction(axes: Sequence[Axes], a: AnalysedResults) -> None:
    plots_analysis.plot_rtt_predictions(axes[0], a.points, a.x, a.series, a.section.predictions)


def utilisation(axes: Sequence[Axes], a: AnalysedResults) -> None:
    """The stages' utilisation and the processes' CPU of the heaviest point's line."""
    left, right = axes
    heavy_label = a.points.sort_values(a.x).iloc[-1]["label"]
    one_line = a.points[a.points["label"] == heavy_label]
    plots_analysis.plot_utilisation(left, one_line, a.x, a.section.stages)
    if heavy_label:
        left.set_title(f"Utilisation of each stage ({heavy_label})")
    if a.section.processes:
        host_cores = int((a.experiment.metadata.get("host") or {}).get("cpu_count") or 0)
        plots_analysis.plot_cpu(right, one_line, a.x, a.section.processes, host_cores)
    else:
        right.set_axis_off()
