"""One step of a search: what a run measured, and whether it counts (checked as Lancet does).

A step measures one load. Before its latency is compared with the SLO, the step must be trustworthy:
in open loop the achieved rate within ±`RATE_TOLERANCE_FRAC` of the offered one (or within the
counting noise of the step's Poisson arrivals, where that is wider), and the client's and the
middleware's throughputs within `CLIENT_MW_LIMIT_PCT` of each other (the noise flag of a single
run). A step that is not is repeated (`repeat`) up to the search's attempts; an achieved rate that
falls short because the system saturated is a measurement, not noise: the SLO is not met at a load
the system cannot carry (`fail`); so is an achieved rate above the offered one with the SLO missed
(a backlog of late arrivals drained in the measured seconds). Pure functions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from cachelab.columns import ACHIEVED_FRAC
from cachelab.openloop import VERDICT_SYSTEM, counting_tolerance_frac
from cachelab.results.noise import CLIENT_MW_LIMIT_PCT, relative_difference_pct
from cachelab.slo import Slo

RATE_TOLERANCE_FRAC = 0.05

PASS = "pass"
FAIL = "fail"
REPEAT = "repeat"
PROBE = "probe"  # the closed-loop capacity probe of an open-loop search


@dataclass
class Measurement:
    """What one run of a step measured (NaN where not measured)."""

    run: str  # raw/<run>
    status: str  # the run's status: ok, partial, failed
    offered_ops_per_s: float  # NaN for a closed-loop search
    total_clients: int
    throughput_ops_per_s: float = math.nan
    mw_throughput_ops_per_s: float = math.nan
    response_time_ms: float = math.nan
    p50_ms: float = math.nan
    p90_ms: float = math.nan
    p99_ms: float = math.nan
    p99_9_ms: float = math.nan
    slo_low_ms: float = math.nan  # the SLO statistic's 95 % interval (percentiles only)
    slo_high_ms: float = math.nan
    requests: int = 0
    rate_verdict: str = ""  # cachelab.openloop's, for an open-loop step that fell short
    cpu_loadgen_cores: float = math.nan

    @property
    def achieved_frac(self) -> float:
        if not math.isfinite(self.offered_ops_per_s) or self.offered_ops_per_s <= 0:
            return math.nan
        return self.throughput_ops_per_s / self.offered_ops_per_s

    def statistic_ms(self, slo: Slo) -> float:
        value: float = getattr(self, slo.column)
        return value


@dataclass
class Step:
    """One row of search.csv: the step, its attempt, the load, what it measured, the verdict."""

    step: int
    attempt: int
    load: float
    verdict: str
    note: str
    measurement: Measurement

    def row(self, slo: Slo) -> dict[str, Any]:
        m = self.measurement
        data = {k: v for k, v in asdict(m).items()}
        return {
            "step": self.step,
            "attempt": self.attempt,
            "load": self.load,
            **data,
            ACHIEVED_FRAC: m.achieved_frac,
            "slo": slo.text,
            "slo_value_ms": m.statistic_ms(slo),
            "verdict": self.verdict,
            "note": self.note,
        }


MEASUREMENT_FIELDS = [f.name for f in fields(Measurement)]
CSV_COLUMNS = [
    "step",
    "attempt",
    "load",
    *MEASUREMENT_FIELDS,
    ACHIEVED_FRAC,
    "slo",
    "slo_value_ms",
    "verdict",
    "note",
]


def judge(m: Measurement, slo: Slo, open_loop: bool) -> tuple[str, str]:
    """(verdict, why) of one attempt: pass, fail, or repeat when it cannot be trusted."""
    if m.status != "ok":
        return REPEAT, f"run {m.status}"
    if not math.isfinite(m.throughput_ops_per_s) or m.throughput_ops_per_s <= 0:
        return REPEAT, "no throughput measured"
    value = m.statistic_ms(slo)
    if open_loop:
        achieved = m.achieved_frac
        # the counting noise of a short step's Poisson arrivals widens the ±5 % (Lancet's check)
        expected = m.requests / achieved if achieved > 0 else math.nan
        tolerance = max(RATE_TOLERANCE_FRAC, counting_tolerance_frac(expected))
        if achieved > 1 + tolerance:
            if math.isfinite(value) and value > slo.limit_ms:  # a backlog drained: saturated
                return FAIL, (
                    f"{slo.statistic} {value:.3g} ms while a backlog drained (achieved "
                    f"{achieved:.0%} of the offered rate)"
                )
            return REPEAT, (f"achieved {achieved:.0%} of the offered rate (above +{tolerance:.0%})")
        if achieved < 1 - tolerance:
            if m.rate_verdict == VERDICT_SYSTEM:
                return FAIL, f"system saturated: achieved {achieved:.0%} of the offered rate"
            return REPEAT, f"{m.rate_verdict}: achieved {achieved:.0%} of the offered rate"
    client_mw = relative_difference_pct(m.throughput_ops_per_s, m.mw_throughput_ops_per_s)
    if math.isfinite(client_mw) and abs(client_mw) > CLIENT_MW_LIMIT_PCT:
        return REPEAT, f"client vs middleware throughput {client_mw:+.0f} %"
    if not math.isfinite(value):
        return REPEAT, f"no {slo.statistic} measured"
    shown = f"{slo.statistic} {value:.3g} ms"
    if value <= slo.limit_ms:
        sure = m.slo_high_ms <= slo.limit_ms if math.isfinite(m.slo_high_ms) else True
        return PASS, shown + ("" if sure else " (its 95 % interval reaches the limit)")
    return FAIL, shown


def judge_probe(m: Measurement) -> tuple[str, str]:
    """(verdict, why) of the closed-loop capacity probe: `probe` once it measured a throughput."""
    if m.status != "ok":
        return REPEAT, f"run {m.status}"
    if not math.isfinite(m.throughput_ops_per_s) or m.throughput_ops_per_s <= 0:
        return REPEAT, "no throughput measured"
    return PROBE, (
        f"closed-loop capacity probe: {m.throughput_ops_per_s:,.0f} ops/s with "
        f"{m.total_clients} clients"
    )
