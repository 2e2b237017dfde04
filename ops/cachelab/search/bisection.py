"""The search's arithmetic: bracket the SLO's knee by doubling or halving, then bisect.

`Bisection` asks for the next load to try (`next_value`) and is told whether it met the SLO
(`record`). From the start value it doubles while steps pass (or halves while they fail) until
one load passes and a higher one fails; then it halves that bracket until its width is within
`tolerance_frac` of the passing end (for a whole-number load such as a client count, until the
two ends are neighbours). Pure; one thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


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

    @property
    def bracket(self) -> Bracket:
        return Bracket(self.passed, self.failed)

    def record(self, value: float, passed: bool) -> None:
        self.steps.append((value, passed))
        if passed:
            if self.passed is None or value > self.passed:
                self.passed = value
        elif self.failed is None or value < self.failed:
            self.failed = value

    def _round(self, value: float) -> float:
        return float(math.floor(value)) if self.whole else value

    def done(self) -> bool:
        return self.next_value() is None

    def next_value(self) -> float | None:
        """The next load to measure, or None when the search is over."""
        if not self.steps:
            return self.start
        passed, failed = self.passed, self.failed
        if failed is None:  # every step passed: go up
            assert passed is not None
            if passed >= self.highest:
                return None
            return min(self.highest, self._round(passed * 2))
        if passed is None:  # every step failed: go down
            if failed <= self.lowest:
                return None
            return max(self.lowest, self._round(failed / 2) if self.whole else failed / 2)
        if failed - passed <= (1 if self.whole else 0):
            return None
        if self.bracket.width_frac <= self.tolerance_frac:
            return None
        middle = self._round((passed + failed) / 2)
        if middle <= passed or middle >= failed:
            return None
        return middle

    def answer(self) -> float | None:
        """The highest load that met the SLO (None: even the lowest failed)."""
        return self.passed
