"""Student-t and Welch intervals against textbook values."""

from __future__ import annotations

import math

import pytest

from cachelab.analysis.intervals import difference_interval, mean_interval


def test_mean_interval_matches_the_t_table() -> None:
    # n = 5, mean 10, sample SD 1: t(0.975, 4) = 2.776, half-width 2.776 / sqrt(5) = 1.2416
    values = [9.0, 9.5, 10.0, 10.5, 11.0]
    sd = math.sqrt(sum((v - 10.0) ** 2 for v in values) / 4)
    interval = mean_interval(values)
    assert interval.n == 5
    assert interval.mean == pytest.approx(10.0)
    assert interval.half_width == pytest.approx(2.7764451 * sd / math.sqrt(5), rel=1e-6)
    assert interval.low < 10.0 < interval.high


def test_missing_runs_are_left_out_and_one_value_has_no_interval() -> None:
    assert mean_interval([4.0, math.nan]).n == 1
    assert math.isnan(mean_interval([4.0]).half_width)
    assert math.isnan(mean_interval([]).mean)
    assert math.isnan(mean_interval([4.0]).relative_pct)


def test_bad_confidence_is_refused() -> None:
    with pytest.raises(ValueError, match="confidence"):
        mean_interval([1.0, 2.0], confidence=95)


def test_difference_beyond_noise_excludes_zero() -> None:
    far = difference_interval([10.0, 10.1, 9.9], [12.0, 12.1, 11.9])
    assert far.mean == pytest.approx(2.0)
    assert far.low > 0
    near = difference_interval([10.0, 11.0, 9.0], [10.5, 9.5, 11.5])
    assert near.low < 0 < near.high
