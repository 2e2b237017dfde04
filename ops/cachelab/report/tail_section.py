"""The report's tail breakdown: per point, p50, p90 and p99 of the middleware's queue and service
times and of the rest (cachelab.tail), means over the repetitions, as bars beside each other.
The plot takes an ``ax``."""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cachelab.tail import STAGES, TAIL_PERCENTILES

TAIL_FIGURE = "tail_breakdown.png"
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


def tail_points(summary_file: Path, axes: list[str]) -> list[dict[str, Any]]:
    with summary_file.open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r.get("status") == "ok"]
    columns = [f"tail_{stage}_p{q:g}_ms" for stage in STAGES for q in TAIL_PERCENTILES]
    points = []
    for point in sorted({int(r["point"]) for r in rows}):
        mine = [r for r in rows if int(r["point"]) == point]
        entry: dict[str, Any] = {"point": point}
        for column in columns:
            values = [float(r[column]) for r in mine if r.get(column) not in (None, "")]
            entry[column] = statistics.fmean(values) if values else math.nan
        if all(math.isnan(entry[c]) for c in columns):
            continue
        swept = ", ".join(f"{a.split('.')[-1]}={mine[0].get(a, '')}" for a in axes)
        entry["label"] = f"p{point}" + (f" ({swept})" if swept else "")
        points.append(entry)
    return points


def tail_section(results_dir: Path, out: Path, axes: list[str]) -> dict[str, Any] | None:
    summary = results_dir / "summary.csv"
    if not summary.is_file():
        return None
    points = tail_points(summary, axes)
    if not points:
        return None
    figure = Figure(figsize=(max(8.0, 1.1 * len(points)), 4.6))
    plot_tail_breakdown(figure.add_subplot(), points)
    figure.tight_layout()
    figure.savefig(out / TAIL_FIGURE, dpi=110)
    rows = [
        {"point": p["label"], **{f"{s} p{q:g} ms": p[f"tail_{s}_p{q:g}_ms"] for s in STAGES
                                 for q in TAIL_PERCENTILES}}
        for p in points
    ]  # fmt: skip
    note = (
        "p50, p90 and p99 of the middleware's queue time and service time (its round trip to the "
        "backend) from its HDR logs over the measured seconds, and of the rest: the client's "
        "percentile minus the middleware's response-time percentile (network and client). Each "
        "is a tail of its own stage; they need not add up to the client's percentile."
    )
    return {"id": "tail", "title": "Tail breakdown", "figures": [TAIL_FIGURE], "rows": rows,
            "note": note}  # fmt: skip
