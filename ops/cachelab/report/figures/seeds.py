"""The report's seed figure: per x, the run's throughput over its own maximum beside the seed's,
one panel per x, each on its own ``ax``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.axes import Axes

from cachelab.columns import TOTAL_CLIENTS
from cachelab.fidelity import FidelityRow
from cachelab.report.sections.seeds import SeedsSection

X_LABELS = {
    TOTAL_CLIENTS: "total clients",
    "workload.value_bytes": "value size (bytes), at the seed's highest client count",
}


def x_label(column: str) -> str:
    return X_LABELS.get(column, column)


def plot_seed_overlay(ax: Axes, rows: Sequence[FidelityRow], x_label: str) -> None:
    """Throughput over its own maximum against x: ours solid, the seed's dashed, one colour per
    pair (a maximum the seed only states has no curve: its label gives the number)."""
    for row in rows:
        ours, theirs = row.ours, row.theirs
        stated = not any(math.isfinite(x) for x in theirs.x)
        seed_max = f"; {row.seed} states {theirs.saturation:,.0f} ops/s" if stated else ""
        line = ax.plot(
            ours.x,
            [tp / ours.saturation for tp in ours.throughput],
            marker="o",
            label=f"ours, {row.series} (max {ours.saturation:,.0f} ops/s{seed_max})",
        )[0]
        if stated:
            continue
        ax.plot(
            theirs.x,
            [tp / theirs.saturation for tp in theirs.throughput],
            marker="s",
            linestyle="--",
            color=line.get_color(),
            label=f"{row.seed}, {row.series} (max {theirs.saturation:,.0f} ops/s)",
        )
    ax.axhline(0.95, color="#999999", linewidth=0.8, linestyle=":")
    ax.set_xlabel(x_label)
    ax.set_ylabel("throughput / its maximum")
    ax.set_ylim(0, 1.1)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def seed_overlays(axes: Sequence[Axes], section: SeedsSection) -> None:
    for ax, x in zip(axes, section.x_columns, strict=True):
        plot_seed_overlay(ax, [row for row in section.curves if row.x == x], x_label(x))


def seeds_size(section: SeedsSection) -> tuple[float, float]:
    return (8.0 * len(section.x_columns), 4.6)
