"""The interactive response-time law against the seeds' own checks."""

from __future__ import annotations

import math

import pytest

from cachelab.analysis import interactive_law as il


def test_asl2016_appendix_a() -> None:
    # 192 clients at 10,340 req/s: R = 18.6 ms, memaslap measured 18.7 ms (within 0.5 %)
    check = il.check(192, 10_340, 18.7)
    assert check.predicted_response_time_ms == pytest.approx(18.57, abs=0.01)
    assert abs(check.deviation_pct) < 1.0
    assert check.holds(tolerance_pct=1.0)


def test_asl2019_b21_and_b31_with_think_time() -> None:
    # b21: N = 288, Z = 0, X = 36,311 get/s -> R = 7.93 ms
    assert il.predicted_response_time_ms(288, 36_311) == pytest.approx(7.93, abs=0.01)
    # b31: N = 192, 32 WT, Z = 2.95 ms, X = 25,682 get/s -> R = 4.53 ms
    assert il.predicted_response_time_ms(192, 25_682, 2.95) == pytest.approx(4.53, abs=0.01)


def test_throughput_prediction_and_implied_think_time_are_inverses() -> None:
    x = il.predicted_throughput_ops_per_s(100, response_time_ms=4.0, think_time_ms=1.0)
    assert x == pytest.approx(20_000)
    assert il.implied_think_time_ms(100, x, 4.0) == pytest.approx(1.0)
    assert il.predicted_response_time_ms(100, x, 1.0) == pytest.approx(4.0)


def test_deviation_sign_and_tolerance() -> None:
    slow = il.check(10, 1000, 11.0)  # predicted 10 ms, measured 11 ms
    assert slow.deviation_pct == pytest.approx(10.0)
    assert slow.holds(10.0) and not slow.holds(9.9)
    assert il.check(10, 1000, 9.0).deviation_pct == pytest.approx(-10.0)


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(ValueError, match="clients: must be a finite number > 0, got 0"):
        il.predicted_response_time_ms(0, 100)
    with pytest.raises(ValueError, match="throughput_ops_per_s"):
        il.check(10, 0.0, 1.0)
    with pytest.raises(ValueError, match="think_time_ms: must be a finite number >= 0"):
        il.predicted_response_time_ms(10, 100, -1)
    with pytest.raises(ValueError, match="measured_response_time_ms"):
        il.check(10, 100, math.nan)
