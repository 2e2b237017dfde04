"""The interactive response-time law for closed systems: X = N / (R + Z).

N clients each alternate between waiting for a reply (response time R) and thinking (Z). In
steady state the system throughput is X = N / (R + Z), so a measured throughput predicts the
response time R = N/X - Z. The ASL reports used this check at every point (ASL 2017 §2.1 with
Z = 0; ASL 2019 §6.1 with a measured Z of about 3 ms behind the middleware).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cachelab.analysis.bounds import require_non_negative, require_positive
from cachelab.columns import RESPONSE_TIME_MS, THINK_TIME_MS, THROUGHPUT_OPS_PER_S

MS_PER_S = 1000.0


def predicted_response_time_ms(
    clients: float, throughput_ops_per_s: float, think_time_ms: float = 0.0
) -> float:
    """Response time predicted by the interactive law, R = N/X - Z, in milliseconds.

    Parameters
    ----------
    clients
        N, the number of closed-loop clients (connections with one request outstanding).
    throughput_ops_per_s
        X, the measured system throughput.
    think_time_ms
        Z, the mean think time per client.

    Examples
    --------
    >>> predicted_response_time_ms(192, 10_340)  # ASL 2016 App. A: 18.6 ms
    18.568665377176018
    """
    require_positive("clients", clients)
    require_positive(THROUGHPUT_OPS_PER_S, throughput_ops_per_s)
    require_non_negative(THINK_TIME_MS, think_time_ms)
    return MS_PER_S * clients / throughput_ops_per_s - think_time_ms


def predicted_throughput_ops_per_s(
    clients: float, response_time_ms: float, think_time_ms: float = 0.0
) -> float:
    """Throughput predicted by the interactive law, X = N / (R + Z), in operations per second."""
    require_positive("clients", clients)
    require_non_negative(RESPONSE_TIME_MS, response_time_ms)
    require_non_negative(THINK_TIME_MS, think_time_ms)
    cycle_ms = response_time_ms + think_time_ms
    require_positive("response_time_ms + think_time_ms", cycle_ms)
    return MS_PER_S * clients / cycle_ms


def implied_think_time_ms(
    clients: float, throughput_ops_per_s: float, response_time_ms: float
) -> float:
    """Think time Z = N/X - R that makes the law hold (how ASL 2019 measured Z behind the MW)."""
    require_positive("clients", clients)
    require_positive(THROUGHPUT_OPS_PER_S, throughput_ops_per_s)
    require_non_negative(RESPONSE_TIME_MS, response_time_ms)
    return MS_PER_S * clients / throughput_ops_per_s - response_time_ms


@dataclass(frozen=True)
class InteractiveLawCheck:
    """One point of the interactive-law check: measured against predicted response time."""

    clients: float
    throughput_ops_per_s: float
    think_time_ms: float
    measured_response_time_ms: float
    predicted_response_time_ms: float
    predicted_throughput_ops_per_s: float

    @property
    def deviation_pct(self) -> float:
        """(measured - predicted) / predicted response time, in percent."""
        if self.predicted_response_time_ms == 0:
            return math.inf
        return (
            100.0
            * (self.measured_response_time_ms - self.predicted_response_time_ms)
            / self.predicted_response_time_ms
        )

    def holds(self, tolerance_pct: float = 10.0) -> bool:
        """True when |deviation| is within ``tolerance_pct`` percent."""
        return abs(self.deviation_pct) <= tolerance_pct


def check(
    clients: float,
    throughput_ops_per_s: float,
    measured_response_time_ms: float,
    think_time_ms: float = 0.0,
) -> InteractiveLawCheck:
    """Compare a measured response time with the one the interactive law predicts.

    Examples
    --------
    >>> c = check(192, 10_340, 18.7)
    >>> round(c.deviation_pct, 2)
    0.71
    """
    require_non_negative("measured_response_time_ms", measured_response_time_ms)
    return InteractiveLawCheck(
        clients=clients,
        throughput_ops_per_s=throughput_ops_per_s,
        think_time_ms=think_time_ms,
        measured_response_time_ms=measured_response_time_ms,
        predicted_response_time_ms=predicted_response_time_ms(
            clients, throughput_ops_per_s, think_time_ms
        ),
        predicted_throughput_ops_per_s=predicted_throughput_ops_per_s(
            clients, measured_response_time_ms, think_time_ms
        ),
    )


@dataclass(frozen=True)
class PointLaw:
    """The interactive law at one point, checked per repetition (the means of noisy repetitions
    need not obey it: each repetition's own X and R do).

    ``checks`` holds one check per repetition with a measured X > 0; ``think_times_ms`` the
    think time each repetition implies, Z = N/X - R (negative only when its inputs disagree:
    a response time longer than the clients' cycle allows)."""

    checks: tuple[InteractiveLawCheck, ...]
    think_times_ms: tuple[float, ...]

    @property
    def deviations_pct(self) -> list[float]:
        return [c.deviation_pct for c in self.checks]

    @property
    def worst_deviation_pct(self) -> float:
        """The repetition's deviation farthest from 0 (NaN without repetitions)."""
        return max(self.deviations_pct, key=abs, default=math.nan)

    def holds(self, tolerance_pct: float = 10.0) -> bool:
        """True when every repetition is within ``tolerance_pct`` (the point is flagged only
        when its repetitions deviate, never for an averaging artefact)."""
        return all(c.holds(tolerance_pct) for c in self.checks)

    def deviating(self, tolerance_pct: float = 10.0) -> list[int]:
        """Indices (in ``checks``) of the repetitions beyond the tolerance."""
        return [i for i, c in enumerate(self.checks) if not c.holds(tolerance_pct)]


def check_repetitions(
    clients: float,
    throughputs_ops_per_s: list[float],
    response_times_ms: list[float],
    think_time_ms: float = 0.0,
) -> PointLaw:
    """The law per repetition of one point; repetitions without a measured X > 0 and R >= 0
    are left out.

    Examples
    --------
    >>> law = check_repetitions(2, [11858.2, 6373.33], [0.168612, 0.313909])
    >>> [round(d, 1) for d in law.deviations_pct], law.holds()
    ([-0.0, 0.0], True)
    """
    checks, think = [], []
    for x, r in zip(throughputs_ops_per_s, response_times_ms, strict=True):
        if not (math.isfinite(x) and x > 0 and math.isfinite(r) and r >= 0):
            continue
        checks.append(check(clients, x, r, think_time_ms))
        think.append(implied_think_time_ms(clients, x, r))
    return PointLaw(tuple(checks), tuple(think))
