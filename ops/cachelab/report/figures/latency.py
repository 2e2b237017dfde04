"""The report's latency and window figures: each draws its section's data on the ``axes`` it is
given (left to right)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from cachelab.report import plots, plots_analysis
from cachelab.report.sections.latency import LatencyDistributions, Windows


def latency_distribution(axes: Sequence[Axes], latency: LatencyDistributions) -> None:
    left, right = axes
    plots.plot_latency_density(left, latency.densities)
    plots.plot_percentiles(right, latency.percentiles)


def windows(axes: Sequence[Axes], data: Windows) -> None:
    """One run's whole trace (left) and every point's measured windows (right)."""
    left, right = axes
    trace = data.trace
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
    if data.samples:
        plots_analysis.plot_boxes(
            right, data.samples, "throughput [ops/s]", "Measured 1 s windows, all repetitions"
        )
