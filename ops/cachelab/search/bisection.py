"""The search's arithmetic: bracket the SLO's knee, then narrow the bracket to the tolerance.

`Bisection` asks for the next load to try (`next_value`) and is told whether it met the SLO
(`record`). From the start value it doubles while steps pass (or halves while they fail) until
one load passes and a higher one fails; then it halves that bracket until its width is within
`tolerance_frac` of the passing end (for a whole-number load such as a client count, until the
two ends are neighbours).

On a continuous load (an open-loop rate) told the SLO's limit and each step's statistic, it is
guided instead. The statistic is fitted as y = a / (1 - x / c), the latency of a queue whose
capacity is c (two measured steps whose statistic clearly rose, or one and the `capacity` a
closed-loop probe measured), and the next load is aimed a third of the tolerance below the
predicted knee c (1 - a / limit), or one tolerance beyond the bracket's end nearest the knee,
so that the next step closes the bracket. Real systems often keep their latency flat up to a
cliff, where a step fails by orders of magnitude (a backlog that never drains): such a
`SATURATED` step bounds the bracket but carries no shape, so it is left out of the fits. While
the curve is flat and a probe measured the capacity, a step up goes no further than that
capacity, and from there at most `growth` = (1 + tolerance)^4 above the highest pass, so that
the bracket it opens closes in two geometric halvings. Without a fit the bracket
is halved geometrically (the loads are ratios). With a capacity the first step is at it when
the probe's own statistic is within half the limit, else at `CAPACITY_START_FRAC` of it. Pure;
one thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CAPACITY_START_FRAC = 0.5  # the first step when the probe itself came near the limit
SATURATED = 10.0  # a statistic this many times the limit: past a cliff, no shape to fit
CLEAR_RISE = 1.2  # a fit's two steps whose statistic rose less than this: the curve is flat
SIGNIFICANT = 5  # digits of a continuous load


@dataclass(frozen=True)
class Bracket:
    """The highest load seen to pass and the lowest seen to fail (None: not seen yet)."""

    passed: float | None
    failed: float | None

    @property
    def width_frac(self) -> float:
        """The bracket's width over its passing end (inf while it is open)."""
        if self.passed is None or self.failed is None or self.passed <= 0:
            return math.inf
        return (self.failed - self.passed) / self.passed


class Bisection:
    """Bracketing then bisection on one load axis; see the module docstring."""

    def __init__(
        self,
        start: float,
        tolerance_frac: float,
        lowest: float,
        highest: float,
        whole: bool = False,
    ) -> None:
        if not lowest <= start <= highest:
            raise ValueError(f"start {start:g} is outside [{lowest:g}, {highest:g}]")
        if tolerance_frac <= 0:
            raise ValueError(f"tolerance must be > 0, got {tolerance_frac:g}")
        self.start = start
        self.tolerance_frac = tolerance_frac
        self.lowest = lowest
        self.highest = highest
        self.whole = whole
        self.passed: float | None = None
        self.failed: float | None = None
        self.steps: list[tuple[float, bool]] = []
        self.limit: float | None = None  # the SLO's limit: set to fit the statistic (guided)
        self.capacity: float | None = None
        self.statistics: dict[float, float] = {}
        self._widths: list[float] = []

    def guide(
        self, limit: float, capacity: float | None = None, capacity_statistic: float = math.nan
    ) -> None:
        """Fit the measured statistic against `limit`; with a `capacity` (the throughput a
        closed-loop probe carried, whose SLO statistic was `capacity_statistic`) the first step
        is at the capacity when that statistic is within half the limit, else at
        CAPACITY_START_FRAC of it."""
        self.limit = limit
        if capacity is not None and capacity > 0 and math.isfinite(capacity):
            self.capacity = capacity
            if not self.steps:
                near = math.isfinite(capacity_statistic) and capacity_statistic <= limit / 2
                first = self._round(capacity if near else CAPACITY_START_FRAC * capacity)
                self.start = min(self.highest, max(self.lowest, first))

    @property
    def growth(self) -> float:
        """The largest step up from the highest pass while the curve looks flat."""
        return (1 + 0.999 * self.tolerance_frac) ** 4

    @property
    def bracket(self) -> Bracket:
        return Bracket(self.passed, self.failed)

    def record(self, value: float, passed: bool, statistic: float = math.nan) -> None:
        self._widths.append(self.bracket.width_frac)
        self.steps.append((value, passed))
        if math.isfinite(statistic) and statistic > 0:
            self.statistics[value] = statistic
        saturated = self.limit is not None and statistic >= SATURATED * self.limit
        if not passed and saturated and self.capacity is not None and value <= self.capacity:
            self.capacity = None  # open loop saturates below what the closed loop carried
        if passed:
            if self.passed is None or value > self.passed:
                self.passed = value
        elif self.failed is None or value < self.failed:
            self.failed = value

    def _round(self, value: float) -> float:
        """A whole number, or SIGNIFICANT digits (what search.csv keeps for a resume)."""
        if self.whole:
            return float(math.floor(value))
        return float(f"{value:.{SIGNIFICANT}g}")

    def done(self) -> bool:
        return self.next_value() is None

    def next_value(self) -> float | None:
        """The next load to measure, or None when the search is over."""
        if not self.steps:
            return self.start
        if self.limit is not None and not self.whole:
            value = self._guided()
            if value is None:
                return None
            value = self._round(value)
            inside = (self.passed is None or value > self.passed) and (
                self.failed is None or value < self.failed
            )
            return value if inside else None
        passed, failed = self.passed, self.failed
        if failed is None:  # every step passed: go up
            assert passed is not None
            if passed >= self.highest:
                return None
            return min(self.highest, self._round(passed * 2))
        if passed is None:  # every step failed: go down
            if failed <= self.lowest:
                return None
            return max(self.lowest, self._round(failed / 2))
        if failed - passed <= (1 if self.whole else 0):
            return None
        if self.bracket.width_frac <= self.tolerance_frac:
            return None
        middle = self._round((passed + failed) / 2)
        if middle <= passed or middle >= failed:
            return None
        return middle

    def _shaped(self) -> dict[float, float]:
        """The steps' statistics that carry the curve's shape (saturated ones left out)."""
        if self.limit is None:
            return {}
        cliff = SATURATED * self.limit
        return {x: y for x, y in self.statistics.items() if y < cliff}

    def _fit(self) -> tuple[float, float, bool] | None:
        """(a, c, clear) of y = a / (1 - x / c) through the steps nearest the knee; `clear`
        when the fitted steps' statistic rose by CLEAR_RISE or more, or the capacity fixed c
        (None: no fit)."""
        ys = self._shaped()
        passed = sorted(x for x, ok in self.steps if ok and x in ys)
        failed = sorted(x for x, ok in self.steps if not ok and x in ys)
        pairs = []
        if passed and failed:
            pairs.append((passed[-1], failed[0]))
        if len(passed) >= 2:
            pairs.append((passed[-2], passed[-1]))
        for x1, x2 in pairs:
            y1, y2 = ys[x1], ys[x2]
            if y2 > y1 and x2 > x1:
                c = (y2 * x2 - y1 * x1) / (y2 - y1)
                if c > x2:
                    return y1 * (1 - x1 / c), c, y2 >= CLEAR_RISE * y1
        if self.capacity is not None:
            below = [x for x in (*passed, *failed) if x < self.capacity]
            if below:
                x = max(below)
                return ys[x] * (1 - x / self.capacity), self.capacity, True
        return None

    def knee_estimate(self) -> float | None:
        """The load where the fitted statistic reaches the limit (None: no fit)."""
        return self._knee(self._fit())

    def _knee(self, fit: tuple[float, float, bool] | None) -> float | None:
        if fit is None or self.limit is None:
            return None
        a, c, _ = fit
        return c * (1 - a / self.limit) if a < self.limit else None

    def _guided(self) -> float | None:
        passed, failed, tol = self.passed, self.failed, self.tolerance_frac
        if passed is not None and failed is not None and self.bracket.width_frac <= tol:
            return None
        if passed is not None and passed >= self.highest:
            return None
        if failed is not None and failed <= self.lowest:
            return None
        low = passed if passed is not None else max(self.lowest, (failed or 0) / 4)
        high = failed if failed is not None else min(self.highest, 2 * (passed or self.lowest))
        fit = self._fit()
        # flat: no clear knee below the highest pass (no fit, or one whose statistic hardly rose)
        flat = fit is None or not fit[2]
        if passed is not None and self.capacity is not None and flat:
            # a flat curve: up to the capacity the probe carried, then no long jumps
            ceiling = (
                self.capacity if passed < self.capacity / self.growth else passed * self.growth
            )
            high = min(high, ceiling)
        stalled = len(self._widths) >= 2 and not (self.bracket.width_frac <= 0.5 * self._widths[-2])
        knee = self._knee(fit)
        both = passed is not None and failed is not None
        cliff = failed is not None and failed not in self._shaped()
        if knee is None or (both and stalled and math.isfinite(self._widths[-2])):
            if passed is None:
                return max(self.lowest, high / 2)
            if failed is None:
                return min(self.highest, high)
            return math.sqrt(low * high)
        if both and cliff and flat:
            return math.sqrt(low * high)  # flat up to a cliff: the knee is anywhere between
        step = 1 + tol * 0.999
        if passed is not None and knee <= passed * (1 + tol / 2):
            value = passed * step  # a miss just above the highest pass closes the bracket
        elif failed is not None and knee >= failed / (1 + tol / 2):
            value = failed / step  # a pass just below the lowest miss closes it
        else:
            value = knee * (1 - tol / 3)
        value = min(max(value, low * step if passed is not None else low), high)
        if failed is not None and value >= failed:
            value = math.sqrt(low * high)
        return min(self.highest, max(self.lowest, value))

    def answer(self) -> float | None:
        """The highest load that met the SLO (None: even the lowest failed)."""
        return self.passed
