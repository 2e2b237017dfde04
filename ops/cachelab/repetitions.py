"""Repetitions until certain: whether a point needs another run (`run.repetitions: {min, max,
ci_pct}`).

After a point's planned runs, `RepetitionPolicy.another` looks at its ok rows in summary.csv: the
95 % Student-t interval (cachelab.analysis.intervals) of its mean throughput and of its mean
response time must each be within ±ci_pct of the mean; if either is wider and the point has had
fewer than `max` runs, it gets one more. `settled` says how a point ended (n, both intervals,
certain or flagged). A fixed `repetitions: N` never adds a run. Pure; the loop's thread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cachelab.analysis.intervals import MeanInterval, mean_interval
from cachelab.columns import RESPONSE_TIME_MS, THROUGHPUT_OPS_PER_S
from cachelab.spec import Point, Run

CERTAIN_COLUMNS = (THROUGHPUT_OPS_PER_S, RESPONSE_TIME_MS)


@dataclass(frozen=True)
class PointCertainty:
    """A point's repetitions so far and the intervals of its two means."""

    point: int
    n: int
    throughput: MeanInterval
    response_time: MeanInterval
    ci_pct: float
    max_n: int

    @property
    def certain(self) -> bool:
        return all(
            math.isfinite(i.relative_pct) and i.relative_pct <= self.ci_pct
            for i in (self.throughput, self.response_time)
        )

    @property
    def verdict(self) -> str:
        if self.certain:
            return "certain"
        return f"not certain after {self.n} (max)" if self.n >= self.max_n else "running"


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


class RepetitionPolicy:
    """See the module docstring."""

    def __init__(self, run: Run) -> None:
        self.until = run.until_certain
        self.minimum = run.repetitions

    @property
    def adaptive(self) -> bool:
        return self.until is not None

    def certainty(self, point: int, rows: Sequence[dict[str, Any]]) -> PointCertainty | None:
        """The point's certainty from its ok rows (None for a fixed number of repetitions)."""
        if self.until is None:
            return None
        mine = [r for r in rows if int(r["point"]) == point and r.get("status") == "ok"]
        return PointCertainty(
            point,
            len(mine),
            mean_interval(_number(r.get(CERTAIN_COLUMNS[0])) for r in mine),
            mean_interval(_number(r.get(CERTAIN_COLUMNS[1])) for r in mine),
            self.until.ci_pct,
            self.until.max,
        )

    def another(self, point: int, repetitions_made: int, rows: Sequence[dict[str, Any]]) -> bool:
        """Whether the point, after `repetitions_made` runs (ok or not), gets one more."""
        if self.until is None or repetitions_made < self.minimum:
            return False
        if repetitions_made >= self.until.max:
            return False
        state = self.certainty(point, rows)
        return state is not None and not state.certain

    def finished_points(
        self, runs: Sequence[tuple[Point, int]], todo: Sequence[tuple[Point, int]]
    ) -> list[tuple[Point, int]]:
        """Points with every planned run already done (a resumed experiment), each with the
        number of repetitions it has: they may still need more."""
        if self.until is None:
            return []
        waiting = {p.index for p, _ in todo}
        made: dict[int, tuple[Point, int]] = {}
        for point, repetition in runs:
            if point.index not in waiting:
                _, most = made.get(point.index, (point, 0))
                made[point.index] = (point, max(most, repetition + 1))
        return list(made.values())


def extra_repetitions_done(
    run: Run, points: Sequence[Point], done: set[tuple[int, int]]
) -> list[tuple[Point, int]]:
    """The repetitions beyond `run.repetitions` a resumed experiment already made (kept as
    planned runs, so they count and are not made again)."""
    if run.until_certain is None:
        return []
    return [
        (p, r)
        for p in points
        for r in range(run.repetitions, run.until_certain.max)
        if (p.index, r) in done
    ]
