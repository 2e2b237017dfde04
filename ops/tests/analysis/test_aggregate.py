"""Aggregation over windows and repetitions."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from cachelab.analysis import aggregate as agg


def test_pooled_std_is_root_of_mean_variance() -> None:
    assert agg.pooled_std([4.0, 4.0]) == 2.0
    assert agg.pooled_std([1.0, 9.0]) == pytest.approx(math.sqrt(5.0))
    with pytest.raises(ValueError, match="need at least one repetition"):
        agg.pooled_std([])
    with pytest.raises(ValueError, match="must be >= 0"):
        agg.pooled_std([-1.0])


def test_trim_seconds_drops_both_ends() -> None:
    series = {s: s * 10 for s in range(10)}
    assert sorted(agg.trim_seconds(series, 2, 2)) == [2, 3, 4, 5, 6, 7]
    assert agg.trim_seconds({}, 2, 2) == {}
    assert agg.trim_seconds(series, 6, 6) == {}
    with pytest.raises(ValueError, match="warmup_s/cooldown_s"):
        agg.trim_seconds(series, -1, 0)


def test_aggregate_points_mean_and_population_sd() -> None:
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
    assert out.loc[0, "throughput_ops_per_s_std"] == pytest.approx(math.sqrt(200 / 3))
    assert out.loc[1, "throughput_ops_per_s_std"] == 0.0
    assert math.isnan(out.loc[0, "mw_queue_time_ms_mean"])
    assert out.loc[1, "mw_queue_time_ms_mean"] == pytest.approx(0.6)
    assert math.isnan(out.loc[1, "absent_mean"])
    with pytest.raises(ValueError, match=r"keys: \['nope'\]"):
        agg.aggregate_points(summary, ["throughput_ops_per_s"], ["nope"])


def test_measured_seconds_use_the_run_length_when_known() -> None:
    series = {s: s for s in range(8)}  # a 7 s run: memtier adds a partial 8th second
    assert sorted(agg.measured_seconds(series, 1, 1, duration_s=7)) == [1, 2, 3, 4, 5]
    assert sorted(agg.measured_seconds(series, 1, 1)) == [1, 2, 3, 4, 5, 6]


def test_window_series_counts_idle_seconds_as_zero_throughput() -> None:
    from cachelab.analysis.raw import LoadgenRun, OpStats, TimeSeriesSecond

    def run(counts: dict[int, int]) -> LoadgenRun:
        series = {s: TimeSeriesSecond(c, 2.0 if c else 0.0) for s, c in counts.items()}
        totals = OpStats(sum(counts.values()), 0.0, 2.0, {}, series)
        return LoadgenRun(path=Path("x.json"), stats={"Totals": totals})

    a = run({0: 10, 1: 100, 2: 0, 4: 100, 5: 5})  # second 3 missing: the client stalled
    b = run({0: 10, 1: 50, 2: 50, 3: 50, 4: 50, 5: 5})
    frame = agg.window_series([a, b], warmup_s=1, cooldown_s=1, duration_s=5)
    assert list(frame["second"]) == [1, 2, 3]
    assert list(frame["throughput_ops_per_s"]) == [150.0, 50.0, 50.0]
    stats = agg.repetition_window_stats([a, b], 1, 1, 5)
    assert stats.windows == 3
    assert stats.throughput_mean == pytest.approx(250 / 3)
