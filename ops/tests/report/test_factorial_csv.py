"""report/factorial.csv: the 2^k r tables of the report as one CSV, on the recorded 2^2 run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from cachelab.analysis import factorial
from cachelab.columns import FACTORIAL, describe
from cachelab.report.sections.factorial import FACTORIAL_RESPONSES, factorial_frame

RECORDED = Path(__file__).resolve().parents[1] / "data" / "results-recorded-2k"
FACTORS = ["topology.workers", "topology.servers"]
TERMS = ["I", "topology.workers", "topology.servers", "topology.workers·topology.servers", "error"]


def _analysed() -> list[tuple[str, factorial.FactorialResult]]:
    summary = pd.read_csv(RECORDED / "summary.csv")
    assert factorial.two_level_factors(summary, FACTORS) == FACTORS
    return [
        (response, factorial.analyze_summary(summary, FACTORS, response=response))
        for response, _, _ in FACTORIAL_RESPONSES
    ]


def test_one_row_per_response_and_term_with_the_analysis_numbers() -> None:
    analysed = _analysed()
    frame = factorial_frame(analysed)
    responses = ["throughput_ops_per_s", "response_time_ms", "1/response_time_ms"]
    assert list(frame["response"]) == [r for r in responses for _ in TERMS]
    assert list(frame["term"]) == TERMS * 3
    for response, result in analysed:
        rows = frame[frame["response"] == response].reset_index(drop=True)
        table = result.table()
        assert rows["effect"].tolist() == pytest.approx(table["effect"].tolist(), nan_ok=True)
        assert rows["effect_ci_low"].tolist() == pytest.approx(
            table["ci_low"].tolist(), nan_ok=True
        )
        assert rows["ss"].tolist() == pytest.approx(table["ss"].tolist())
        # the terms and the error share the whole variation; I (the mean) has none
        assert rows["variation_pct"].iloc[1:].sum() == pytest.approx(100.0)
        assert pd.isna(rows["variation_pct"].iloc[0])
        assert rows["effect"].iloc[0] == pytest.approx(result.row_means.mean())
        excludes_zero = (rows["effect_ci_low"] > 0) | (rows["effect_ci_high"] < 0)
        assert rows["significant"].tolist() == (excludes_zero & (rows["term"] != "error")).tolist()
    # by hand from summary.csv: a factor's effect is half the change of the mean response
    # from its low to its high level (a balanced design)
    summary = pd.read_csv(RECORDED / "summary.csv")
    throughput = frame[frame["response"] == "throughput_ops_per_s"].set_index("term")
    for factor in FACTORS:
        means = summary.groupby(factor)["throughput_ops_per_s"].mean()
        by_hand = (means.iloc[1] - means.iloc[0]) / 2
        assert throughput.loc[factor, "effect"] == pytest.approx(by_hand)


def test_every_column_is_catalogued() -> None:
    frame = factorial_frame(_analysed())
    assert [c for c in frame.columns if describe(c, FACTORIAL) is None] == []


@pytest.mark.report
def test_the_report_writes_it_beside_its_tables(tmp_path: Path) -> None:
    from cachelab.report import build_report

    results = tmp_path / "recorded"
    shutil.copytree(RECORDED, results, ignore=shutil.ignore_patterns("report"))
    html = build_report(results).read_text()
    assert '<a href="factorial.csv">factorial.csv</a>' in html
    written = pd.read_csv(results / "report" / "factorial.csv")
    expected = factorial_frame(_analysed())
    assert list(written.columns) == list(expected.columns)
    assert written["term"].tolist() == expected["term"].tolist()
    assert written["effect"].tolist() == pytest.approx(expected["effect"].tolist(), nan_ok=True)
