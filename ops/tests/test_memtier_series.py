"""Throughput over the measured seconds when the loadgen's sampler cut its seconds late.

On a busy machine the loadgen's sampler thread wakes late: "second 1" may hold the requests of
1.6 s and "second 2" those of 0.4 s. A throughput of count / number of seconds then misses the
interactive law by the lateness over the window (recorded: 20 % on a 4 s window); count / time
between the cuts (`Cut At ms`, the cachelab loadgen's extension of memtier's Time-Serie) keeps it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cachelab.results.memtier import read_loadgen_json
from cachelab.results.trim import MeasuredInterval

CLIENTS = 4
LATENCY_MS = 2.0
# when the sampler cut seconds 0..7 of an 8 s run: late around second 2, on time at the end
CUTS_MS = [1000.0, 2650.0, 3010.0, 4000.0, 5000.0, 6000.0, 7000.0, 8000.0]


def closed_loop_json(path: Path, cuts_ms: list[float] | None) -> Path:
    """A loadgen JSON of CLIENTS closed-loop clients, each request LATENCY_MS: each bucket holds
    the requests of the time since the previous cut."""
    series = {}
    previous = 0.0
    for second, cut in enumerate(CUTS_MS):
        count = round(CLIENTS * (cut - previous) / LATENCY_MS)
        bucket: dict[str, float] = {"Count": count, "Average Latency": LATENCY_MS}
        if cuts_ms is not None:
            bucket["Cut At ms"] = cuts_ms[second]
        series[str(second)] = bucket
        previous = cut
    total = sum(b["Count"] for b in series.values())
    block = {
        "Count": total,
        "Ops/sec": total / 8,
        "Average Latency": LATENCY_MS,
        "Time-Serie": series,
    }
    runtime = {"Start time": 1_795_000_000_000, "Total duration": 8000}
    path.write_text(json.dumps({"ALL STATS": {"Totals": block, "Runtime": runtime}}))
    return path


def test_throughput_over_the_time_between_the_cuts_keeps_the_interactive_law(
    tmp_path: Path,
) -> None:
    run = read_loadgen_json(closed_loop_json(tmp_path / "cut.json", CUTS_MS))
    window = run.measured("Totals", MeasuredInterval(2, 6))
    assert window.seconds == pytest.approx((6000.0 - 2650.0) / 1000.0)
    assert window.mean_latency_ms == LATENCY_MS
    predicted_ms = CLIENTS / window.ops_per_s * 1000.0  # R = N / X (Z = 0)
    assert predicted_ms == pytest.approx(LATENCY_MS, rel=1e-3)
    # from the run's start, the first cut is the start itself
    first = run.measured("Totals", MeasuredInterval(0, 2))
    assert first.seconds == pytest.approx(2.65)
    assert CLIENTS / first.ops_per_s * 1000.0 == pytest.approx(LATENCY_MS, rel=1e-3)


def test_without_cut_times_the_window_is_whole_seconds(tmp_path: Path) -> None:
    """memtier's own JSON has no cut times: the divisor stays the number of seconds, and the same
    late sampler then shows as a miss of the interactive law of about the lateness / window."""
    run = read_loadgen_json(closed_loop_json(tmp_path / "memtier.json", None))
    window = run.measured("Totals", MeasuredInterval(2, 6))
    assert window.seconds == 4
    predicted_ms = CLIENTS / window.ops_per_s * 1000.0
    assert predicted_ms / LATENCY_MS == pytest.approx(4.0 / 3.35, rel=1e-3)
