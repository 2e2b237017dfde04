"""The search's answer beside the calibrated MVA: the model's saturation throughput, the station
setting it and the bottleneck at the answer, in answer.txt's folder and in the search's report."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cachelab.analysis.models import closed_model
from cachelab.analysis.operational import PointMeasurement, analyse
from cachelab.analysis.perpoint import measurement
from cachelab.cli import main
from cachelab.results.layout import RunDir
from cachelab.results.run import read_run
from cachelab.search.driver import SearchDriver, SearchSettings
from cachelab.search.measure import measurement_of
from cachelab.search.model import ModelBeside, beside_model
from cachelab.search.steps import Measurement, judge
from cachelab.slo import parse_slo
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
    assert (model.run, model.probe) == ("p0-r0", True)  # calibrated with the closed-loop probe
    assert model.throughput_ops_per_s == pytest.approx(answer.throughput_ops_per_s, rel=1e-6)
    # the ceiling is the probe's closed network's own bound at a population far past its knee
    probe = read_run(RunDir(0, 0, folder / "raw" / "p0-r0"))
    m = measurement(pd.Series(row_of(probe)), [probe], HOST_CORES)
    closed = closed_model(m, analyse(m))
    assert closed is not None
    assert model.saturation_ops_per_s == pytest.approx(closed.throughput_bound_ops_per_s(10**6))
    assert model.model_bottleneck in closed.names
    # the probe carried what the model says it can, within the calibrated MVA's 15 %
    assert m.throughput_ops_per_s == pytest.approx(model.saturation_ops_per_s, rel=0.15)
    at_answer = read_run(RunDir(1, 0, folder / "raw" / "p1-r0"))
    m = measurement(pd.Series(row_of(at_answer)), [at_answer], HOST_CORES)
    assert model.bottleneck == analyse(m).bottleneck
    assert 0 < model.bottleneck_utilisation <= 1.5
    assert math.isfinite(model.answer_frac) and model.answer_frac > 0
    assert "saturation" in model.text() and model.bottleneck in model.text()


def test_no_answer_no_model_and_without_a_probe_the_answers_run(folder: Path) -> None:
    driver = SearchDriver(SearchSettings.load(folder), folder, NoRuns())
    assert beside_model(folder, driver.steps, None, HOST_CORES) is None
    without = [s for s in driver.steps if s.verdict != "probe"]
    model = beside_model(folder, without, 500, HOST_CORES)
    assert model is not None and (model.run, model.probe) == ("p1-r0", False)


def test_the_search_report_places_the_answer_beside_the_model(folder: Path) -> None:
    driver = SearchDriver(SearchSettings.load(folder), folder, NoRuns())
    model = beside_model(folder, driver.steps, driver.answer().load, HOST_CORES)
    assert model is not None
    model.save(folder)
    assert ModelBeside.read(folder) == model
    (folder / "answer.txt").write_text("500 requests/s meets p99<=2000ms\n" + model.text() + "\n")
    assert main(["report", str(folder)]) == 0
    index = folder / "report" / "index.html"
    page = index.read_text()
    assert "calibrated MVA: saturation throughput" in page
    assert f"{model.saturation_ops_per_s:,.0f} ops/s" in page
    assert model.bottleneck in page
    assert (index.parent / "search.png").stat().st_size > 10_000
    steps = page.partition("id='steps'")[2]
    assert steps.count("<tr>") == 1 + 2  # the header, the probe and the step


def test_a_kubernetes_steps_middleware_counters_are_not_judged(folder: Path) -> None:
    """Its middleware counters span the whole Job: a client-vs-middleware gap is no noise."""
    slo = parse_slo("p99<=2000ms")
    run = folder / "raw" / "p1-r0"
    local = measurement_of(read_run(RunDir(1, 0, run)), slo)
    assert math.isfinite(local.mw_throughput_ops_per_s)
    record = json.loads((run / "point.json").read_text())
    record["target"] = "k8s"
    (run / "point.json").write_text(json.dumps(record))
    on_k8s = measurement_of(read_run(RunDir(1, 0, run)), slo)
    assert math.isnan(on_k8s.mw_throughput_ops_per_s)
    on_k8s.mw_throughput_ops_per_s = on_k8s.throughput_ops_per_s / 3  # as a whole Job's
    assert judge(on_k8s, slo, True)[0] == "repeat"
    on_k8s.mw_throughput_ops_per_s = math.nan
    assert judge(on_k8s, slo, True)[0] == "pass"


def _point(
    x: float,
    r_ms: float,
    clients: int,
    workers: int,
    servers: int,
    mw: tuple[float, ...],
    **more: Any,
) -> PointMeasurement:
    """One middleware's point: throughput, response time, the shape, and the middleware's
    (throughput, response, queue, service time, queue length)."""
    mw_x, mw_r, mw_q, mw_s, mw_len = mw
    return PointMeasurement(
        point=0, clients=clients, think_time_ms=0.0, throughput_ops_per_s=x, response_time_ms=r_ms,
        middlewares=1, workers=workers, servers=servers, mw_throughput_ops_per_s=mw_x,
        mw_response_time_ms=mw_r, mw_queue_time_ms=mw_q, mw_service_time_ms=mw_s,
        mw_queue_length=mw_len, **more,
    )  # fmt: skip


def test_an_open_loop_points_worker_pool_holds_its_service_not_its_connections_wait() -> None:
    # An open-loop answer measured on the quickstart's shape (8 workers, 3 memcached): the
    # clients pipeline, so R_mw (18.2 ms) holds the wait behind a connection's earlier
    # requests, two orders of magnitude above the queue (0.019 ms) and service (0.081 ms).
    shape: dict[str, Any] = dict(
        x=29_976.0, r_ms=4.05, clients=8, workers=8, servers=3,
        mw=(30_460.0, 18.2, 0.019, 0.081, 0.88),
    )  # fmt: skip
    closed_reading = analyse(_point(**shape))
    pool = closed_reading.stage("worker pool")
    assert pool is not None and pool.utilisation > 60  # R_mw - Q read as holding: nonsense
    stages = analyse(_point(**shape, pipelined=True)).stages
    by_name = {s.name: s for s in stages}
    assert by_name["worker pool"].demand_ms == pytest.approx(0.081)
    assert by_name["worker pool"].utilisation == pytest.approx(30_460 * 0.081e-3 / 8)
    assert math.isnan(by_name["net thread"].utilisation)  # not separable, not a candidate


def test_event_loops_are_one_station_of_the_middlewares_cpu_not_a_worker_pool() -> None:
    # Two event loops answer 100,000 requests/s with 0.8 cores of middleware CPU: a request's
    # R_mw - Q (0.3 ms) is mostly the server's round trip, which no thread is held through.
    shape: dict[str, Any] = dict(
        x=100_000.0, r_ms=0.32, clients=32, workers=1, servers=1,
        mw=(100_000.0, 0.31, 0.01, 0.25, 0.0),
        process_cpu={"middleware": ("middleware", 0.8), "memcached": ("server", 0.5)},
    )  # fmt: skip
    as_workers = analyse(_point(**shape))
    pool = as_workers.stage("worker pool")
    assert pool is not None and pool.utilisation > 25  # one worker "held" 30 ms a ms: nonsense
    loops = analyse(_point(**shape, event_loops=2))
    names = {s.name for s in loops.stages}
    assert "worker pool" not in names and "net thread" not in names
    station = loops.stage("event loops")
    assert station is not None
    assert station.demand_ms == pytest.approx(0.008)
    assert station.servers == 2
    assert station.utilisation == pytest.approx(0.4)
    assert loops.bottleneck == "event loops"  # memcached: 0.5 of its 4 threads


def test_a_run_with_event_loops_is_read_with_them(folder: Path) -> None:
    probe = read_run(RunDir(0, 0, folder / "raw" / "p0-r0"))
    row = pd.Series(row_of(probe))
    assert measurement(row, [probe], HOST_CORES).event_loops == 0
    probe.record.spec["topology"]["event_loops"] = 2
    assert measurement(row, [probe], HOST_CORES).event_loops == 2


def test_a_summary_row_with_an_offered_rate_is_read_as_pipelined(folder: Path) -> None:
    probe = read_run(RunDir(0, 0, folder / "raw" / "p0-r0"))
    row = pd.Series(row_of(probe))
    assert not measurement(row, [probe], HOST_CORES).pipelined
    open_loop = read_run(RunDir(1, 0, folder / "raw" / "p1-r0"))
    row = pd.Series(row_of(open_loop))
    assert math.isfinite(float(row["offered_ops_per_s"]))
    assert measurement(row, [open_loop], HOST_CORES).pipelined
