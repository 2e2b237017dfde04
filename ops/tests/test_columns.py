"""The column catalogue (cachelab.columns): every summary.csv column has a unit and a meaning,
and docs/columns.md is the catalogue as generated."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cachelab.columns import CATALOGUE, SUMMARY, describe, markdown, summary_columns
from cachelab.paths import repo_root

ROOT = repo_root()
DATA = Path(__file__).resolve().parent / "data"


def test_docs_columns_md_is_the_generated_catalogue() -> None:
    assert (ROOT / "docs" / "columns.md").read_text() == markdown(), (
        "docs/columns.md is stale: regenerate it with "
        "`.venv/bin/python -m cachelab.columns > docs/columns.md` (from ops/)"
    )


def test_every_summary_column_is_catalogued() -> None:
    for column in summary_columns(["topology.workers", "workload.ratio"]):
        assert describe(column, SUMMARY) is not None, column


@pytest.mark.parametrize("folder", sorted(p.name for p in DATA.glob("results-*")))
def test_every_recorded_summary_header_is_catalogued(folder: str) -> None:
    header = pd.read_csv(DATA / folder / "summary.csv", nrows=0).columns
    assert [c for c in header if describe(c, SUMMARY) is None] == []


def test_a_column_without_an_entry_is_not_described() -> None:
    assert describe("U host CPU", "report/points.csv") is None
    assert describe("cpu loadgen-0", "report/points.csv") is None
    assert describe("throughput_ops_per_s_std", "report/points.csv") is None
    assert describe("cpu_loadgen_0_cores", "report/points.csv") is not None
    assert describe("throughput_ops_per_s_ci95", "report/points.csv") is not None


def test_names_are_snake_case_with_a_unit() -> None:
    for column in CATALOGUE:
        name = column.name.replace("{", "").replace("}", "")
        assert name == name.lower() and " " not in name, column.name
        assert column.unit and column.meaning, column.name
