"""The report of each kept results folder writes the CSVs and the page text kept under
tests/data/report-expected/ (figures may differ in their pixels, nothing else may); a change
meant to move them rewrites them with tests/data/make_report_expected.py."""

from __future__ import annotations

import shutil

import pytest

from cachelab.report import build_report

from .expected import DATA_DIR, EXPECTED_DIR, FOLDERS, PAGE_TEXT, outputs


@pytest.fixture(scope="module", params=FOLDERS)
def folder(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def written(folder: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    target = tmp_path_factory.mktemp("expected") / folder
    shutil.copytree(DATA_DIR / folder, target, ignore=shutil.ignore_patterns("report"))
    build_report(target)
    return outputs(target / "report")


def test_the_report_writes_the_kept_files_and_no_other(
    folder: str, written: dict[str, str]
) -> None:
    kept = sorted(p.name for p in (EXPECTED_DIR / folder).iterdir())
    assert sorted(written) == kept


@pytest.mark.parametrize("name", ["points.csv", "models.csv", "bottlenecks.csv", "factorial.csv"])
def test_each_csv_is_the_kept_one(folder: str, written: dict[str, str], name: str) -> None:
    kept = EXPECTED_DIR / folder / name
    if not kept.is_file():
        pytest.skip(f"{folder} writes no {name}")
    assert written[name] == kept.read_text()


def test_the_page_text_is_the_kept_one(folder: str, written: dict[str, str]) -> None:
    assert written[PAGE_TEXT] == (EXPECTED_DIR / folder / PAGE_TEXT).read_text()
