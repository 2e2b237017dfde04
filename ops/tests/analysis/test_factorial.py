"""2^k r factorial analysis against Jain's example and the ASL 2017 / 2019 tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cachelab.analysis import factorial as f

# ASL 2017 §6.2 (write-only), rows (M, W, S) in sign-table order, M fastest: Tp1..Tp3 and Rt1..Rt3
ASL17_WO_TP = [
    [10242, 10468, 9833],
    [18649, 19803, 19913],
    [22298, 21999, 21340],
    [31739, 32247, 31454],
    [8635, 8105, 8781],
    [16975, 17327, 17546],
    [17984, 18205, 18286],
    [28305, 29194, 28069],
]
ASL17_WO_RT = [
    [18.8, 18.5, 19.69],
    [10.4, 9.75, 9.73],
    [8.63, 8.75, 9.02],
    [6.08, 6.01, 6.14],
    [22.3, 23.8, 22.09],
    [11.4, 11.2, 10.99],
    [10.7, 10.6, 10.51],
    [6.87, 6.64, 6.85],
]
ASL17_WO_MEANS = [10181, 19455, 21879, 31813, 8507, 17282, 18158, 28522]

# ASL 2019 §4, rows (S, MW, WT), S fastest
ASL19_TP = [
    [13915, 13955, 13526],
    [15169, 13904, 14834],
    [19799, 19713, 19928],
    [23515, 24034, 23624],
    [25531, 25160, 25455],
    [27471, 26668, 27102],
    [26856, 26759, 26957],
    [38313, 38539, 38280],
]


def test_sign_table_is_standard_order_with_first_factor_fastest() -> None:
    table = f.sign_table(2)
    # columns I, A, B, AB
    expected = np.array([[1, -1, -1, 1], [1, 1, -1, -1], [1, -1, 1, -1], [1, 1, 1, 1]])
    np.testing.assert_array_equal(table, expected)
    assert f.term_names(["M", "W", "S"]) == ["I", "M", "W", "S", "M·W", "M·S", "W·S", "M·W·S"]


def test_sign_table_columns_are_orthogonal() -> None:
    table = f.sign_table(4)
    np.testing.assert_array_equal(table.T @ table, 16 * np.eye(16, dtype=np.int64))


def test_jain_example_17_1_effects() -> None:
    result = f.analyze([[15], [45], [25], [75]], ["A", "B"])
    np.testing.assert_allclose(result.effects, [40, 20, 10, 5])
    # SST = 2100: A 76%, B 19%, AB 5% (Jain Example 17.2)
    assert result.sst == pytest.approx(2100)
    assert result.variation("A") == pytest.approx(76.19, abs=0.01)
    assert result.variation("B") == pytest.approx(19.05, abs=0.01)
    assert result.variation("A·B") == pytest.approx(4.76, abs=0.01)
    assert np.isnan(result.ci_low).all()  # r = 1: no error estimate


def test_asl2017_write_only_effects_from_row_means() -> None:
    result = f.analyze(np.array(ASL17_WO_MEANS, dtype=float)[:, None], ["M", "W", "S"])
    assert result.effect("I") == pytest.approx(19475, abs=1)
    assert result.effect("M") == pytest.approx(4793, abs=1)
    assert result.effect("W") == pytest.approx(5618, abs=1)
    assert result.effect("S") == pytest.approx(-1357, abs=1)
    assert result.effect("M·W") == pytest.approx(281, abs=1)
    assert result.effect("W·S") == pytest.approx(-396, abs=1)
    # without replicates the error term is zero; shares of the explained variation
    assert result.error_pct == 0
    assert result.variation("W") == pytest.approx(55.6, abs=0.2)
    assert result.variation("M") == pytest.approx(40.5, abs=0.2)
    assert result.variation("S") == pytest.approx(3.25, abs=0.05)


def test_asl2017_write_only_allocation_of_variation_with_replicates() -> None:
    result = f.analyze(ASL17_WO_TP, ["M", "W", "S"])
    assert result.variation("W") == pytest.approx(55.60, abs=0.05)
    assert result.variation("M") == pytest.approx(40.47, abs=0.05)
    assert result.variation("S") == pytest.approx(3.25, abs=0.05)
    assert result.variation("W·S") == pytest.approx(0.28, abs=0.02)
    assert result.error_pct == pytest.approx(0.23, abs=0.01)  # digest's recomputation
    total = np.nansum(result.variation_pct) + result.error_pct
    assert total == pytest.approx(100.0)
    assert result.significant("W") and result.significant("S")
    assert not result.significant("M·S")  # effect -9 lies inside its interval


def test_asl2017_write_only_inverse_response_time() -> None:
    # The report gives W 55.63, M 39.68, S 3.21, error 1.05 % for 1/RT. From the RT values it
    # prints (two decimals) the error share is 0.23 %, and the factor shares scale up to match.
    result = f.analyze(1.0 / np.asarray(ASL17_WO_RT), ["M", "W", "S"])
    assert result.effect("I") == pytest.approx(0.1008, abs=2e-4)
    assert result.effect("W") == pytest.approx(0.0292, abs=1e-4)
    assert result.effect("S") == pytest.approx(-0.007, abs=1e-4)
    assert result.variation("W") == pytest.approx(55.63, abs=0.5)
    assert result.variation("M") == pytest.approx(39.68, abs=0.5)
    assert result.variation("S") == pytest.approx(3.21, abs=0.1)
    assert result.error_pct == pytest.approx(0.23, abs=0.01)


def test_asl2019_throughput_sums_of_squares() -> None:
    result = f.analyze(ASL19_TP, ["S", "MW", "WT"])
    assert result.effect("I") == pytest.approx(23709, abs=1)
    assert result.effect("WT") == pytest.approx(5716, abs=1)
    assert result.effect("MW") == pytest.approx(3484, abs=1)
    assert result.effect("S") == pytest.approx(2246, abs=1)
    # SS0 = 2^k r q0^2; the report prints 13,490,273,693, a digit slip for 13,490,373,585
    assert result.ss[0] == pytest.approx(24 * 23708.625**2)
    assert result.ss[0] == pytest.approx(13_490_273_693, rel=1e-5)
    assert result.sst == pytest.approx(1.3065e9, rel=1e-4)
    assert result.sse == pytest.approx(1.604e6, rel=1e-3)
    assert result.variation("WT") == pytest.approx(60.0, abs=0.05)
    assert result.variation("MW") == pytest.approx(22.3, abs=0.05)
    assert result.variation("S") == pytest.approx(9.3, abs=0.05)
    assert result.error_pct == pytest.approx(0.12, abs=0.01)


def test_confidence_interval_uses_student_t() -> None:
    result = f.analyze(ASL19_TP, ["S", "MW", "WT"], confidence=0.90)
    s_e = np.sqrt(result.sse / (8 * 2))
    half_width = 1.746 * s_e / np.sqrt(24)  # t[0.95; 16] = 1.746
    assert result.ci_high[0] - result.effects[0] == pytest.approx(half_width, rel=1e-3)
    table = result.table()
    assert list(table["term"])[-1] == "error"
    assert len(table) == 9


def test_analyze_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match=r"responses: shape \(3, 1\) \(expected: \(4, r\)"):
        f.analyze([[1], [2], [3]], ["A", "B"])
    with pytest.raises(ValueError, match="names must be distinct"):
        f.analyze([[1], [2], [3], [4]], ["A", "A"])
    with pytest.raises(ValueError, match="NaN"):
        f.analyze([[1], [2], [np.nan], [4]], ["A", "B"])
    with pytest.raises(KeyError, match="term: 'C'"):
        f.analyze([[1], [2], [3], [4]], ["A", "B"]).effect("C")


def _asl17_summary() -> pd.DataFrame:
    rows = []
    levels = f.design_matrix(3)
    for point, (coded, reps) in enumerate(zip(levels, ASL17_WO_TP, strict=True)):
        for rep, tp in enumerate(reps):
            rows.append(
                {
                    "point": point,
                    "repetition": rep,
                    "topology.middlewares": 2 if coded[0] > 0 else 1,
                    "topology.workers": 32 if coded[1] > 0 else 8,
                    "topology.servers": 3 if coded[2] > 0 else 2,
                    "throughput_ops_per_s": tp,
                    "response_time_ms": ASL17_WO_RT[point][rep],
                    "status": "ok",
                }
            )
    frame = pd.DataFrame(rows)
    return frame.sample(frac=1.0, random_state=7)  # row order in the CSV must not matter


def test_analyze_summary_reads_a_results_csv(tmp_path: Path) -> None:
    csv = tmp_path / "summary.csv"
    _asl17_summary().to_csv(csv, index=False)
    factors = ["topology.middlewares", "topology.workers", "topology.servers"]
    result = f.analyze_summary(csv, factors)
    assert result.repetitions == 3
    assert result.variation("topology.workers") == pytest.approx(55.60, abs=0.05)
    inverse = f.analyze_summary(csv, factors, response="1/response_time_ms")
    assert inverse.variation("topology.workers") == pytest.approx(55.63, abs=0.5)
    assert f.two_level_factors(pd.read_csv(csv), factors) == factors


def test_analyze_summary_errors_name_the_problem() -> None:
    frame = _asl17_summary()
    with pytest.raises(ValueError, match=r"column .topology.nope. not in summary"):
        f.analyze_summary(frame, ["topology.nope", "topology.workers"])
    three_levels = frame.copy()
    three_levels.loc[three_levels.index[0], "topology.workers"] = 16
    with pytest.raises(ValueError, match=r"topology.workers takes 3 values"):
        f.analyze_summary(three_levels, ["topology.middlewares", "topology.workers"])
    unbalanced = frame.iloc[1:]
    with pytest.raises(ValueError, match="different repetition counts"):
        f.analyze_summary(
            unbalanced, ["topology.middlewares", "topology.workers", "topology.servers"]
        )
    failed = frame.copy()
    failed.loc[
        (failed["topology.middlewares"] == 1) & (failed["topology.workers"] == 8), "status"
    ] = "failed"
    with pytest.raises(
        ValueError, match=r"no measurement for cell topology.middlewares=1, topology.workers=8"
    ):
        f.analyze_summary(failed, ["topology.middlewares", "topology.workers"])
    with pytest.raises(ValueError, match="response: column 'nope'"):
        f.analyze_summary(frame, ["topology.middlewares", "topology.workers"], response="nope")
    assert f.two_level_factors(frame, ["topology.workers"]) is None
