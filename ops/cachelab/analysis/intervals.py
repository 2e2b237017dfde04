"""Confidence intervals of a mean over repetitions (Student t): the one definition every table,
figure, summary and comparison uses for "mean ± interval".

Pure functions; called from any thread.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from scipy import stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class MeanInterval:
    """The mean of ``n`` repetitions with its two-sided Student-t confidence interval.

    ``half_width`` is NaN for fewer than two values (no interval can be given)."""

    n: int
    mean: float
    half_width: float
    confidence: float = CONFIDENCE

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    @property
    def relative_pct(self) -> float:
        """The half-width as a percentage of the mean (NaN without an interval or a mean)."""
        if not math.isfinite(self.half_width) or self.mean == 0:
            return math.nan
        return 100.0 * self.half_width / abs(self.mean)


def mean_interval(values: Iterable[float], confidence: float = CONFIDENCE) -> MeanInterval:
    """Mean and Student-t interval of the finite ``values`` (NaNs, i.e. missing runs, left out)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(finite)
    if n == 0:
        return MeanInterval(0, math.nan, math.nan, confidence)
    mean = math.fsum(finite) / n
    if n < 2:
        return MeanInterval(n, mean, math.nan, confidence)
    sample_sd = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (n - 1))
    t = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1))
    return MeanInterval(n, mean, t * sample_sd / math.sqrt(n), confidence)


def difference_interval(
    a: Iterable[float], b: Iterable[float], confidence: float = CONFIDENCE
) -> MeanInterval:
    """Mean of ``b`` minus mean of ``a`` with Welch's interval (unequal variances); ``n`` is the
    smaller sample. The difference is beyond noise when the interval excludes 0."""
    xs = [float(v) for v in a if v is not None and math.isfinite(float(v))]
    ys = [float(v) for v in b if v is not None and math.isfinite(float(v))]
    if not xs or not ys:
        return MeanInterval(0, math.nan, math.nan, confidence)
    diff = math.fsum(ys) / len(ys) - math.fsum(xs) / len(xs)
    if len(xs) < 2 or len(ys) < 2:
        return MeanInterval(min(len(xs), len(ys)), diff, math.nan, confidence)
    va = float(stats.tvar(xs)) / len(xs)
    vb = float(stats.tvar(ys)) / len(ys)
    se = math.sqrt(va + vb)
    if se == 0:
        return MeanInterval(min(len(xs), len(ys)), diff, 0.0, confidence)
    dof = (va + vb) ** 2 / (va**2 / (len(xs) - 1) + vb**2 / (len(ys) - 1))
    t = float(stats.t.ppf(0.5 + confidence / 2.0, dof))
    return MeanInterval(min(len(xs), len(ys)), diff, t * se, confidence)
