"""Flags for results that should not be trusted at face value.

- the host was busy: its 1-minute load average (before or after the experiment) exceeded its
  cores, so the processes under test waited for a CPU;
- a point's repetitions disagree: the coefficient of variation of their throughputs is above
  `CV_LIMIT_PCT`;
- the client and the middleware disagree: their throughputs differ by more than
  `CLIENT_MW_LIMIT_PCT` (requests lost, a stalled client, or clocks that do not line up).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

CV_LIMIT_PCT = 10.0
CLIENT_MW_LIMIT_PCT = 10.0


def _load(facts: Mapping[str, Any] | None) -> float | None:
    if not isinstance(facts, Mapping):
        return None
    load = facts.get("load_avg")
    if isinstance(load, Sequence) and load and isinstance(load[0], int | float):
        return float(load[0])
    return None


def load_warning(load_1m: float | None, cores: int | None, when: str) -> str | None:
    """A sentence when the 1-minute load average exceeds the cores, else None."""
    if load_1m is None or not cores or load_1m <= cores:
        return None
    return (
        f"load average {load_1m:.1f} on {cores} cores {when}: other work competed for the CPU, "
        "so throughput and response times are noisier and lower than on an idle machine"
    )


def host_warnings(metadata: Mapping[str, Any]) -> list[str]:
    """Warnings from metadata.json's host facts (`host` at the start, `host_after` at the end)."""
    host = metadata.get("host")
    cores = host.get("cpu_count") if isinstance(host, Mapping) else None
    found = []
    for key, when in (("host", "at the start"), ("host_after", "at the end")):
        facts = metadata.get(key)
        warning = load_warning(_load(facts), cores, when)
        if warning:
            found.append(warning)
    return found


def coefficient_of_variation_pct(values: Sequence[float]) -> float:
    """Population SD over mean, in percent (NaN for fewer than two values or a zero mean)."""
    clean = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if len(clean) < 2:
        return math.nan
    mean = sum(clean) / len(clean)
    if mean == 0:
        return math.nan
    variance = sum((v - mean) ** 2 for v in clean) / len(clean)
    return 100.0 * math.sqrt(variance) / abs(mean)


def relative_difference_pct(client: float, middleware: float) -> float:
    """(middleware - client) / client in percent (NaN when either is missing or client is 0)."""
    if not (math.isfinite(client) and math.isfinite(middleware)) or client == 0:
        return math.nan
    return 100.0 * (middleware - client) / client


def point_flags(cv_pct: float, client_mw_pct: float) -> list[str]:
    """Short flags of one point for tables and figure annotations."""
    flags = []
    if math.isfinite(cv_pct) and cv_pct > CV_LIMIT_PCT:
        flags.append(f"reps CV {cv_pct:.0f} %")
    if math.isfinite(client_mw_pct) and abs(client_mw_pct) > CLIENT_MW_LIMIT_PCT:
        flags.append(f"client vs MW {client_mw_pct:+.0f} %")
    return flags
