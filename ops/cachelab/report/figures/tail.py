"""The report's tail figure: for each point three groups (p50, p90, p99), each with a bar per
stage, on an ``ax``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from cachelab.report.sections.tail import TailSection
from cachelab.tail import STAGES, TAIL_PERCENTILES

COLOURS = {"queue": "#4c72b0", "service": "#dd8452", "rest": "#c0c0c0"}


def plot_tail_breakdown(ax: Axes, points: list[dict[str, Any]]) -> None:
    """For each point three groups (p50, p90, p99), each with a bar per stage."""
    width = 0.8 / (len(TAIL_PERCENTILES) * len(STAGES))
    centres = np.arange(len(points))
    for k, q in enumerate(TAIL_PERCENTILES):
        for s, stage in enumerate(STAGES):
            offset = (k * len(STAGES) + s - (len(TAIL_PERCENTILES) * len(STAGES) - 1) / 2) * width
            ax.bar(
                centres + offset,
                [p[f"tail_{stage}_p{q:g}_ms"] for p in points],
                width,
                color=COLOURS[stage],
                alpha=0.45 + 0.25 * k,
                label=f"{stage} p{q:g}",
            )
    ax.set_xticks(centres, [p["label"] for p in points], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("ms (each bar a percentile of its own stage)")
    ax.set_yscale("log")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=3)


def tail_breakdown(axes: Sequence[Axes], section: TailSection) -> None:
    plot_tail_breakdown(axes[0], section.points)


def tail_size(section: TailSection) -> tuple[float, float]:
    return (max(8.0, 1.1 * len(section.points)), 4.6)
