"""The report's cluster metrics figures: each panel of a dashboard that has data drawn on the
``ax`` it is given, with the panel's title, its series' legends and its unit; a figure holds one
run's panels of one dashboard, three side by side."""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.axes import Axes

from cachelab.panels import Panel
from cachelab.report.sections.panels import DashboardRun

COLUMNS = 3
ROW_HEIGHT = 2.9
WIDTH = 13.0
MAX_LEGEND_ENTRIES = 8
# Grafana unit -> (factor, axis label)
UNITS = {
    "ops": (1.0, "ops/s"),
    "s": (1e3, "ms"),
    "percentunit": (100.0, "%"),
    "bytes": (1.0 / 2**20, "MiB"),
    "Bps": (1e-6, "MB/s"),
    "bps": (1e-6, "Mbit/s"),
    "short": (1.0, ""),
}


def grid(run: DashboardRun) -> tuple[tuple[int, int], tuple[float, float]]:
    """Rows and columns of plots, and the figure's size in inches."""
    rows = max(1, math.ceil(len(run.with_data) / COLUMNS))
    return (rows, COLUMNS), (WIDTH, ROW_HEIGHT * rows)


def plot_panel(ax: Axes, panel: Panel, origin_epoch_s: float) -> None:
    """The panel's series against seconds since ``origin_epoch_s``."""
    factor, label = UNITS.get(panel.unit, (1.0, panel.unit))
    for series in panel.series:
        seconds = [t - origin_epoch_s for t in series.epoch_s]
        ax.plot(seconds, [v * factor for v in series.values], linewidth=1.2, label=series.label)
    ax.set_title(panel.title, fontsize=9)
    ax.set_ylabel(label, fontsize=8)
    ax.set_xlabel("seconds since the benchmark started", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)
    if 0 < len(panel.series) <= MAX_LEGEND_ENTRIES:
        ax.legend(fontsize=6, loc="best")


def dashboard_run(axes: Sequence[Axes], run: DashboardRun) -> None:
    """One plot per panel with data, in the dashboard's order; spare axes hidden."""
    panels = run.with_data
    for ax, panel in zip(axes, panels, strict=False):
        plot_panel(ax, panel, run.origin_epoch_s)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
