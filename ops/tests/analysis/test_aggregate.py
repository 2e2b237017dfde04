"""Aggregation over windows and repetitions."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from cachelab.analysis import aggregate as agg
from cachelab.results import MeasuredInterval
from cachelab.results.memtier import LoadgenRun, OpStats, SecondBucket


def test_pooled_std_is_root_of_mean_variance() -> None:
    assert agg.pooled_std([4.0, 4.0]) == 2.0
    assert agg.pooled_std([1.0, 9.0]) == pytest.approx(math.sqrt(5.0))
    with pytest.raises(ValueError, match="need at least one repetition"):
        agg.pooled_std([])
    with pytest.raises(ValueError, match="must be >= 0"):
        agg.pooled_std([-1.0])


def test_aggregate_points_mean_and_student_t_interval() -> None:
    summary = pd.DataFrame(
        {
            "point": [0, 0, 0, 1, 1, 1],
            "repetition": [0, 1, 2, 0, 1, 2],
            "total_clients": [8, 8, 8, 16, 16, 16],
            "throughput_ops_per_s": [100.0, 110.0, 120.0, 200.0, 200.0, 200.0],
            "mw_queue_time_ms": [None, None, None, 0.5, 0.7, None],
        }
    )
    out = agg.aggregate_points(
        summary, ["throughput_ops_per_s", "mw_queue_time_ms", "absent"], ["point", "total_clients"]
    )
    assert list(out["point"]) == [0, 1]
    assert list(out["repetitions"]) == [3, 3]
    assert out.loc[0, "throughput_ops_per_s_mean"] == pytest.approx(110.0)
    # sample SD 10 over 3 repetitions: t(0.975, 2) = 4.303 times 10 / sqrt(3)
    assert out.loc[0, "throughput_ops_per_s_ci95"] == pytest.approx(
        4.3027 * 10 / math.sqrt(3), rel=1e-4
    )
    assert out.loc[1, "throughput_ops_per_s_ci95"] == 0.0
    # two repetitions measured it: t(0.975, 1) = 12.706 times 0.1414 / sqrt(2)
    assert out.loc[1, "mw_queue_time_ms_ci95"] == pytest.approx(12.706 * 0.1, rel=1e-3)
    assert math.isnan(out.loc[0, "mw_queue_time_ms_mean"])
    assert out.loc[1, "mw_queue_time_ms_mean"] == pytest.approx(0.6)
    assert math.isnan(out.loc[1, "absent_mean"])
    with pytest.raises(ValueError, match=r"keys: \['nope'\]"):
        agg.aggregate_points(summary, ["throughput_ops_per_s"], ["nope"])


def test_the_one_trimming_rule() -> None:
    interval = MeasuredInterval.of_run(1, 1, 7)  # a 7 s run: memtier adds a partial 8th second
    assert [s for s in range(8) if interval.contains_second(s)] == [1, 2, 3, 4, 5]
    assert interval.seconds == 5
    assert interval.contains_offset(0.6) and not interval.contains_offset(5.5)
    assert interval.contains_window(1000.0, 1500.0, 1000.0)  # midpoint 2000 = second 1
    assert not interval.contains_window(1000.0, 6500.0, 1000.0)  # midpoint 7000 = second 6
    with pytest.raises(ValueError, match="must be >= 0"):
        MeasuredInterval.of_run(-1, 0, 5)


def test_window_series_counts_idle_seconds_as_zero_throughput() -> None:
    def run(counts: dict[int, int]) -> LoadgenRun:
        series = {s: SecondBucket(c, 2.0 if c else 0.0) for s, c in counts.items()}
        totals = OpStats(sum(counts.values()), 0.0, 2.0, {}, series)
        return LoadgenRun(path=Path("x.json"), stats={"Totals": totals})

    a = run({0: 10, 1: 100, 2: 0, 4: 100, 5: 5})  # second 3 missing: the client stalled
    b = run({0: 10, 1: 50, 2: 50, 3: 50, 4: 50, 5: 5})
    frame = agg.window_series([a, b], MeasuredInterval.of_run(1, 1, 5))
    assert list(frame["second"]) == [1, 2, 3]
    assert list(frame["throughput_ops_per_s"]) == [150.0, 50.0, 50.0]
    stats = agg.repetition_window_stats([a, b], MeasuredInterval.of_run(1, 1, 5))
    assert stats.windows == 3
    assert stats.throughput_mean == pytest.approx(250 / 3)
