"""Latency service-level objectives: `p99<=2ms`, parsed, and checked against a run's histogram.

An SLO bounds one statistic of the response time that the loadgen records: a percentile of its
`--print-percentiles` list (cachelab.loadgen_args.PERCENTILES) or the mean. A percentile read
from a histogram of n requests comes with a distribution-free 95 % interval (the order
statistics at ranks n·q ± 1.96·sqrt(n·q·(1-q)), as Lancet reports them), so a step can say
whether it met the SLO with confidence. Pure functions; called from any thread.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from cachelab.loadgen_args import PERCENTILES
from cachelab.results.hdr import percentiles_ms

RECORDED_PERCENTILES = tuple(float(p) for p in PERCENTILES.split(","))
Z_95 = 1.959963984540054  # two-sided 95 % normal quantile (the binomial's normal approximation)

_SLO_RE = re.compile(
    r"^\s*(?P<stat>p(?P<q>\d+(?:\.\d+)?)|mean)\s*<=\s*(?P<value>\d+(?:\.\d+)?)\s*"
    r"(?P<unit>ms|us|µs)\s*$"
)
_UNIT_MS = {"ms": 1.0, "us": 0.001, "µs": 0.001}


class SloError(ValueError):
    """An SLO that cannot be parsed or checked (one line saying why)."""


@dataclass(frozen=True)
class Slo:
    """`statistic <= limit_ms`; `percentile` is None for the mean."""

    text: str
    percentile: float | None
    limit_ms: float

    @property
    def statistic(self) -> str:
        return "mean" if self.percentile is None else f"p{self.percentile:g}"

    @property
    def column(self) -> str:
        """The search.csv column holding the checked statistic (p99.9 -> p99_9_ms)."""
        return f"{self.statistic.replace('.', '_')}_ms"


def parse_slo(text: str) -> Slo:
    """`p99<=2ms`, `p99.9<=500us`, `mean<=1ms` (p50, p90, p99, p99.9 or mean; ms or us)."""
    match = _SLO_RE.match(text)
    if not match:
        raise SloError(
            f"--slo {text!r}: not an SLO; write STAT<=LIMIT with STAT one of "
            f"{', '.join(_names())} and LIMIT in ms or us, e.g. p99<=2ms"
        )
    limit_ms = float(match["value"]) * _UNIT_MS[match["unit"]]
    if limit_ms <= 0:
        raise SloError(f"--slo {text!r}: the limit must be > 0")
    if match["stat"] == "mean":
        return Slo(text.strip(), None, limit_ms)
    q = float(match["q"])
    if q not in RECORDED_PERCENTILES:
        raise SloError(
            f"--slo {text!r}: the loadgen does not record p{q:g}; it records {', '.join(_names())}"
        )
    return Slo(text.strip(), q, limit_ms)


def _names() -> list[str]:
    return [f"p{q:g}" for q in RECORDED_PERCENTILES] + ["mean"]


@dataclass(frozen=True)
class PercentileEstimate:
    """One percentile of a histogram with its 95 % order-statistic interval (ms)."""

    value_ms: float
    low_ms: float
    high_ms: float
    count: int


def percentile_interval(histogram: HdrHistogram, q: float) -> PercentileEstimate:
    """The q-th percentile of a µs histogram and the values at the ranks of its 95 % interval."""
    n = int(histogram.get_total_count())
    if n == 0:
        return PercentileEstimate(math.nan, math.nan, math.nan, 0)
    frac = q / 100.0
    spread = Z_95 * math.sqrt(frac * (1.0 - frac) / n)
    low_q = max(0.0, frac - spread) * 100.0
    high_q = min(1.0, frac + spread) * 100.0
    values = percentiles_ms(histogram, [q, low_q, high_q])
    return PercentileEstimate(values[q], values[low_q], values[high_q], n)
