"""The report's tail breakdown: per point, p50, p90 and p99 of the middleware's queue and service
times and of the rest (cachelab.tail), means over the repetitions (figures.tail draws them)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from cachelab.report.sections.extras import ExtraSection
from cachelab.tail import STAGES, TAIL_PERCENTILES

TAIL_FIGURE = "tail_breakdown.png"
NOTE = (
    "p50, p90 and p99 of the middleware's queue time and service time (its round trip to the "
    "backend) from its HDR logs over the measured seconds, and of the rest: the client's "
    "percentile minus the middleware's response-time percentile (network and client). Each "
    "is a tail of its own stage; they need not add up to the client's percentile."
)


@dataclass(frozen=True)
class TailSection(ExtraSection):
    points: list[dict[str, Any]] = field(default_factory=list)  # label and tail_* columns


def tail_points(summary_rows: list[dict[str, str]], axes: list[str]) -> list[dict[str, Any]]:
    """Per point with tails, the means over its ok repetitions of every tail column."""
    rows = [r for r in summary_rows if r.get("status") == "ok"]
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


def tail_section(summary_rows: list[dict[str, str]], axes: list[str]) -> TailSection | None:
    """The section of the summary's rows (as text), or None when no point has tails."""
    points = tail_points(summary_rows, axes)
    if not points:
        return None
    rows = [
        {"point": p["label"], **{f"{s} p{q:g} ms": p[f"tail_{s}_p{q:g}_ms"] for s in STAGES
                                 for q in TAIL_PERCENTILES}}
        for p in points
    ]  # fmt: skip
    return TailSection("tail", "Tail breakdown", NOTE, rows, [TAIL_FIGURE], points)
