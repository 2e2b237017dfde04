"""Noise flags of cachelab.results.noise."""

from __future__ import annotations

import math

from cachelab.results.noise import (
    coefficient_of_variation_pct,
    host_warnings,
    load_warning,
    point_flags,
    relative_difference_pct,
)


def test_load_above_the_cores_warns_before_and_after() -> None:
    assert load_warning(1.5, 2, "at the start") is None
    assert load_warning(None, 2, "at the start") is None
    warning = load_warning(7.6, 2, "at the start")
    assert warning is not None and "load average 7.6 on 2 cores at the start" in warning
    metadata = {
        "host": {"cpu_count": 2, "load_avg": [7.6, 5.0, 3.0]},
        "host_after": {"load_avg": [1.0, 2.0, 3.0]},
    }
    assert [w.split(" on ")[0] for w in host_warnings(metadata)] == ["load average 7.6"]
    metadata["host_after"] = {"load_avg": [9.0, 2.0, 3.0]}
    assert len(host_warnings(metadata)) == 2
    assert host_warnings({}) == []


def test_repetitions_and_both_sides_are_flagged_beyond_ten_percent() -> None:
    # two repetitions measured on a busy machine: 19,683 and 10,495 ops/s
    cv = coefficient_of_variation_pct([19_683, 10_495])
    assert cv == 100 * (19_683 - 10_495) / 2 / ((19_683 + 10_495) / 2)
    assert math.isnan(coefficient_of_variation_pct([5.0]))
    assert relative_difference_pct(1000.0, 600.0) == -40.0
    assert math.isnan(relative_difference_pct(0.0, 5.0))
    assert point_flags(cv, -40.0) == ["reps CV 30 %", "client vs MW -40 %"]
    assert point_flags(9.9, 9.9) == []
    assert point_flags(math.nan, math.nan) == []
