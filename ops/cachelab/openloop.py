"""Open-loop points: the offered rate against the achieved one, and who fell short.

An open-loop point (`workload.rate_ops > 0`) offers Poisson arrivals at a set total rate. When
the achieved throughput is below `SHORTFALL_FRAC` of it, either the loadgen could not send on
time (its threads were busy or waiting for a CPU: `loadgen-bound`) or the system under test could
not keep up (`system-saturated`). The loadgen's own CPU and its threads' run-queue wait (the time
its sends are late because no core runs them) decide which. Pure functions of a summary row.

Poisson arrivals alone make the count of a short run vary: over a measured interval expecting n
requests its standard deviation is sqrt(n), so a shortfall smaller than two of those
(`counting_tolerance_frac`) is counting noise, not a loadgen or system that fell behind.
"""

from __future__ import annotations

import math
from typing import Any

from cachelab.columns import ACHIEVED_FRAC, OFFERED_OPS_PER_S

SHORTFALL_FRAC = 0.95  # achieved below this share of the offered rate flags the point
LOADGEN_BUSY_FRAC = 0.9  # loadgen CPU per loadgen thread at which the loadgen is the limit
LOADGEN_LATE_FRAC = 0.25  # run-queue wait per loadgen thread at which its sends run late

VERDICT_OK = "ok"
VERDICT_LOADGEN = "loadgen-bound"
VERDICT_SYSTEM = "system-saturated"


def counting_tolerance_frac(expected_requests: float) -> float:
    """The relative shortfall (or excess) of the achieved rate that the Poisson counting noise of
    ``expected_requests`` explains (two standard deviations), and never less than the flag's
    own 1 - `SHORTFALL_FRAC`."""
    floor = 1.0 - SHORTFALL_FRAC
    if not math.isfinite(expected_requests) or expected_requests <= 0:
        return floor
    return max(floor, 2.0 / math.sqrt(expected_requests))


def measured_seconds(spec: dict[str, Any]) -> float:
    """The measured part of each run of a point's resolved spec (duration less the trims)."""
    run = spec.get("run", {})
    duration = float(run.get("duration_s", 0) or 0)
    trimmed = float(run.get("warmup_s", 0) or 0) + float(run.get("cooldown_s", 0) or 0)
    return max(duration - trimmed, 0.0)


def offered_rate_ops(spec: dict[str, Any]) -> float | None:
    """The total offered rate of a point's resolved spec (point.json), None for closed loop."""
    rate = float(spec.get("workload", {}).get("rate_ops", 0) or 0)
    return rate if rate > 0 else None


def loadgen_threads(spec: dict[str, Any]) -> int:
    topology = spec["topology"]
    return int(
        topology["client_machines"] * topology["instances_per_machine"] * topology["threads"]
    )


def verdict(
    achieved_frac: float,
    loadgen_cores: float,
    loadgen_wait_cores: float,
    threads: int,
    expected_requests: float = math.inf,
) -> str:
    """`ok`, or why the achieved rate fell short of the offered one (by more than the counting
    noise of ``expected_requests``, the offered rate times the measured seconds)."""
    if achieved_frac >= 1.0 - counting_tolerance_frac(expected_requests):
        return VERDICT_OK
    busy = math.isfinite(loadgen_cores) and loadgen_cores >= LOADGEN_BUSY_FRAC * threads
    late = math.isfinite(loadgen_wait_cores) and loadgen_wait_cores >= LOADGEN_LATE_FRAC * threads
    return VERDICT_LOADGEN if busy or late else VERDICT_SYSTEM


def open_loop_columns(
    spec: dict[str, Any],
    throughput_ops_per_s: float | None,
    loadgen_cores: float,
    loadgen_wait_cores: float,
) -> dict[str, Any]:
    """The summary.csv columns of an open-loop point (empty for a closed-loop one)."""
    offered = offered_rate_ops(spec)
    if offered is None:
        return {}
    columns: dict[str, Any] = {OFFERED_OPS_PER_S: offered}
    if throughput_ops_per_s is None:
        return columns
    achieved = throughput_ops_per_s / offered
    columns[ACHIEVED_FRAC] = achieved
    columns["rate_verdict"] = verdict(
        achieved,
        loadgen_cores,
        loadgen_wait_cores,
        loadgen_threads(spec),
        offered * measured_seconds(spec),
    )
    return columns
