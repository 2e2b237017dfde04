"""The search's answer beside the calibrated MVA: the model's saturation throughput, the station
setting it and the bottleneck at the answer, in answer.txt's folder and in the search's report."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from cachelab.analysis.models import closed_model
from cachelab.analysis.operational import analyse
from cachelab.analysis.perpoint import measurement
from cachelab.report import build_report
from cachelab.results.layout import RunDir
from cachelab.results.run import read_run
from cachelab.search.driver import SearchDriver, SearchSettings
from cachelab.search.model import ModelBeside, beside_model
from cachelab.search.steps import Measurement
from cachelab.summary import row_of

SAMPLE = Path(__file__).parent / "data" / "search-sample"
HOST_CORES = 2  # the machine the sample was measured on


class NoRuns:
    def measure(self, step: int, attempt: int, load: float) -> Measurement:
        raise AssertionError("a finished search measures nothing")

    def close(self) -> None:
        pass


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    copy = tmp_path / "search"
    shutil.copytree(SAMPLE, copy)
    return copy


def test_the_answer_beside_the_models_saturation(folder: Path) -> None:
    driver = SearchDriver(SearchSettings.load(folder), folder, NoRuns())
    answer = driver.answer()
    model = beside_model(folder, driver.steps, answer.load, HOST_CORES)
    assert model is not None
    assert model.load == answer.load == 500
    assert model.run == "p1-r0"  # calibrated with the answer's own run
    assert model.throughput_ops_per_s == pytest.approx(answer.throughput_ops_per_s, rel=1e-6)
    # the ceiling is the closed network's own bound at a population far past its knee
    data = read_run(RunDir(1, 0, folder / "raw" / "p1-r0"))
    m = measurement(pd.Series(row_of(data)), [data], HOST_CORES)
    closed = closed_model(m, analyse(m))
    assert closed is not None
    assert model.saturation_ops_per_s == pytest.approx(closed.throughput_bound_ops_per_s(10**6))
    assert model.model_bottleneck in closed.names
    assert model.bottleneck == analyse(m).bottleneck
    assert 0 < model.bottleneck_utilisation <= 1.5
    assert math.isfinite(model.answer_frac) and model.answer_frac > 0
    assert "saturation" in model.text() and model.bottleneck in model.text()


def test_no_answer_no_model(folder: Path) -> None:
    driver = SearchDriver(SearchSettings.load(folder), folder, NoRuns())
    assert beside_model(folder, driver.steps, None, HOST_CORES) is None


def test_the_search_report_places_the_answer_beside_the_model(folder: Path) -> None:
    driver = SearchDriver(SearchSettings.load(folder), folder, NoRuns())
    model = beside_model(folder, driver.steps, driver.answer().load, HOST_CORES)
    assert model is not None
    model.save(folder)
    assert ModelBeside.read(folder) == model
    (folder / "answer.txt").write_text("500 requests/s meets p99<=2000ms\n" + model.text() + "\n")
    index = build_report(folder)
    page = index.read_text()
    assert "calibrated MVA: saturation throughput" in page
    assert f"{model.saturation_ops_per_s:,.0f} ops/s" in page
    assert model.bottleneck in page
    assert (index.parent / "search.png").stat().st_size > 10_000
    steps = page.partition("id='steps'")[2]
    assert steps.count("<tr>") == 1 + 2  # the header and the two steps
