"""The report's seed section: each of the run's series drawn beside the matching curve the seed
published (cachelab.seeds), each scaled to its own maximum (both maxima in the legend), and the
fidelity table (cachelab.fidelity). The plot takes an ``ax``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cachelab.columns import TOTAL_CLIENTS
from cachelab.fidelity import HEADER, FidelityError, FidelityRow, fidelity_rows, table_rows

SEEDS_FIGURE = "seeds.png"
X_LABELS = {
    TOTAL_CLIENTS: "total clients",
    "workload.value_bytes": "value size (bytes), at the seed's highest client count",
}


def x_label(column: str) -> str:
    return X_LABELS.get(column, column)


def plot_seed_overlay(ax: Axes, rows: Sequence[FidelityRow], x_label: str) -> None:
    """Throughput over its own maximum against x: ours solid, the seed's dashed, one colour per
    pair."""
    for row in rows:
        ours, theirs = row.ours, row.theirs
        line = ax.plot(
            ours.x,
            [tp / ours.saturation for tp in ours.throughput],
            marker="o",
            label=f"ours, {row.series} (max {ours.saturation:,.0f} ops/s)",
        )[0]
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


def seeds_section(results_dir: Path, out: Path) -> dict[str, Any] | None:
    """The section, or None when no published curve matches the run's series."""
    try:
        rows = fidelity_rows(results_dir)
    except FidelityError:
        return None
    axes = sorted({row.x for row in rows})
    figure = Figure(figsize=(8.0 * len(axes), 4.6))
    for k, x in enumerate(axes):
        chosen = [row for row in rows if row.x == x]
        plot_seed_overlay(figure.add_subplot(1, len(axes), k + 1), chosen, x_label(x))
    figure.tight_layout()
    figure.savefig(out / SEEDS_FIGURE, dpi=110)
    table = [dict(zip(HEADER, cells, strict=True)) for cells in table_rows(rows)]
    note = (
        "The seed's published throughput beside ours, each divided by its own maximum (the "
        "seeds ran on 2016-2019 cloud VMs, so shapes, knees and ratios compare, not absolute "
        "numbers); the dotted line is the knee's 95 %. Fidelity: ours / seed's."
    )
    return {"id": "seeds", "title": "The seed beside this run", "figures": [SEEDS_FIGURE],
            "rows": table, "note": note}  # fmt: skip
