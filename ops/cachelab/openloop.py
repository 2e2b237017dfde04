"""Open-loop points: the offered rate against the achieved one, and who fell short.

An open-loop point (`workload.rate_ops > 0`) offers Poisson arrivals at a set total rate. When
the achieved throughput is below `SHORTFALL_FRAC` of it, either the loadgen could not send on
time (its threads were busy or waiting for a CPU: `loadgen-bound`) or the system under test could
not keep up (`system-saturated`). The loadgen's own CPU and its threads' run-queue wait (the time
its sends are late because no core runs them) decide which. Pure functions of a summary row.
"""

from __future__ import annotations

import math
from typing import Any

SHORTFALL_FRAC = 0.95  # achieved below this share of the offered rate flags the point
LOADGEN_BUSY_FRAC = 0.9  # loadgen CPU per loadgen thread at which the loadgen is the limit
LOADGEN_LATE_FRAC = 0.25  # run-queue wait per loadgen thread at which its sends run late

VERDICT_OK = "ok"
VERDICT_LOADGEN = "loadgen-bound"
VERDICT_SYSTEM = "system-saturated"


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
    achieved_frac: float, loadgen_cores: float, loadgen_wait_cores: float, threads: int
) -> str:
    """`ok`, or why the achieved rate fell short of the offered one."""
    if achieved_frac >= SHORTFALL_FRAC:
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
    columns: dict[str, Any] = {"offered_ops_per_s": offered}
    if throughput_ops_per_s is None:
        return columns
    achieved = throughput_ops_per_s / offered
    columns["achieved_frac"] = achieved
    columns["rate_verdict"] = verdict(
        achieved, loadgen_cores, loadgen_wait_cores, loadgen_threads(spec)
    )
    return columns
