"""The links' RTTs in the closed models: the seeds' own numbers (ASL 2017 §3.1.1: workers / the
middleware -> server RTT; the knee from the client <-> middleware RTT; Figure 11's RTTs), where
a run's RTTs come from, bad input, and the models of runs without RTTs left exactly as they
were (tests/data/model-numbers.json)."""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cachelab.analysis.links import (
    NO_LINKS,
    LinkDelay,
    LinkDelays,
    achieved_delays,
    profile_delays,
)
from cachelab.analysis.models import POOL, ClosedModel, closed_model, with_links
from cachelab.analysis.operational import LINK_SATURATED, PointMeasurement, analyse
from cachelab.analysis.perpoint import measurement, spec_delays
from cachelab.analysis.prediction import network_model, predict_curve

DATA = Path(__file__).resolve().parents[1] / "data"
MAKE_NUMBERS = DATA / "make_model_numbers.py"
NEGLIGIBLE_MS = 1e-6  # "negligible service": the server and the worker take no time


# ASL 2017 §3.1.1: 8 workers / 2 ms = 4,000 req/s, 16 -> 8,000


@pytest.mark.parametrize(("workers", "expected"), [(8, 4000.0), (16, 8000.0)])
def test_the_worker_bound_is_workers_over_the_mw_server_rtt(workers: int, expected: float) -> None:
    model = network_model(workers, NEGLIGIBLE_MS, LinkDelays.of(mw_server=2.0))
    prediction = predict_curve(model, 4 * workers)
    assert prediction.ceiling_ops_per_s == pytest.approx(expected, rel=1e-5)
    assert prediction.holding_ms == pytest.approx(2.0, abs=1e-5)
    # MVA reaches the ceiling and never exceeds it
    assert max(prediction.throughput_ops_per_s) == pytest.approx(expected, rel=1e-5)
    assert all(
        x <= b * (1 + 1e-9)
        for x, b in zip(
            prediction.throughput_ops_per_s, prediction.bound_throughput_ops_per_s, strict=True
        )
    )


def test_the_asl2017_profile_gives_the_reports_4000_and_figure_11_gives_3200() -> None:
    asl2017 = predict_curve(network_model(8, NEGLIGIBLE_MS, profile_delays("asl2017")), 64)
    figure_11 = predict_curve(network_model(8, NEGLIGIBLE_MS, profile_delays("asl2017-fig11")), 64)
    assert asl2017.ceiling_ops_per_s == pytest.approx(4000.0, rel=1e-5)
    assert figure_11.ceiling_ops_per_s == pytest.approx(3200.0, rel=1e-5)
    assert figure_11.max_throughput_ops_per_s == pytest.approx(3200.0, rel=1e-5)
    assert figure_11.max_throughput_ops_per_s < asl2017.max_throughput_ops_per_s


def test_the_client_rtt_moves_the_knee_to_more_clients() -> None:
    without = predict_curve(network_model(8, NEGLIGIBLE_MS, LinkDelays.of(mw_server=2.0)), 64)
    with_client = predict_curve(
        network_model(8, NEGLIGIBLE_MS, LinkDelays.of(mw_server=2.0, client_mw=2.3)), 64
    )
    # the bounds' knee N* = (D + Z) X_max: 2 ms x 4,000/s = 8 clients, 4.3 ms x 4,000/s = 17.2
    assert without.knee_clients == pytest.approx(8.0, rel=1e-5)
    assert with_client.knee_clients == pytest.approx(17.2, rel=1e-5)
    # MVA's knee (95 % of the ceiling): at N = WT without a delay, well past it with one
    assert without.saturation_clients() == 8
    knee = with_client.saturation_clients()
    assert knee is not None and knee > 17
    # same ceiling, the delay only slows the climb: below it at every N before saturation
    assert with_client.ceiling_ops_per_s == pytest.approx(without.ceiling_ops_per_s)
    assert all(
        a < b
        for a, b in zip(
            with_client.throughput_ops_per_s[:16], without.throughput_ops_per_s[:16], strict=True
        )
    )
    # at 8 clients each one's cycle is 2 + 2.3 ms: X = 8 / 4.3 ms, no worker is ever waited for
    assert with_client.throughput_ops_per_s[7] == pytest.approx(8 / 4.3e-3, rel=1e-5)
    # the response time excludes the think time but holds the client's RTT
    assert with_client.response_time_ms[0] == pytest.approx(4.3, rel=1e-5)


def test_the_think_time_is_in_the_cycle_not_in_the_response_time() -> None:
    model = network_model(4, 0.5, LinkDelays.of(client_mw=1.0, mw_server=1.0), think_time_ms=3.0)
    prediction = predict_curve(model, 40)
    assert prediction.response_time_ms[0] == pytest.approx(2.5)
    assert prediction.bound_response_time_ms[0] == pytest.approx(2.5)
    assert prediction.throughput_ops_per_s[0] == pytest.approx(1000.0 / 5.5)
    # far past the knee R = N / X_max - Z
    assert prediction.bound_response_time_ms[-1] == pytest.approx(40 / (4 / 1.5e-3) * 1e3 - 3.0)


# replacing a calibration's RTTs


def test_with_links_takes_the_old_rtts_out_and_puts_the_new_ones_in() -> None:
    calibrated = ClosedModel(
        [POOL],
        [2.3],  # 2.05 ms achieved RTT + 0.25 ms of the server's and the worker's service
        [8.0],
        2.6,  # 2.4 ms achieved client RTT + 0.2 ms in the loadgen
        2,
        client_rtt_ms=2.4,
        server_rtt_ms=2.05,
        links=LinkDelays.of("achieved", client_mw=2.4, mw_server=2.05),
    )
    fig11 = with_links(calibrated, profile_delays("asl2017-fig11"))
    assert fig11.demands_ms == [pytest.approx(0.25 + 2.5)]
    assert fig11.delay_ms == pytest.approx(0.2 + 0.5)
    assert (fig11.client_rtt_ms, fig11.server_rtt_ms) == (0.5, 2.5)
    assert fig11.throughput_bound_ops_per_s(10**9) == pytest.approx(8000.0 / 2.75)
    # without links: the service alone
    bare = with_links(calibrated, NO_LINKS)
    assert bare.demands_ms == [pytest.approx(0.25)] and bare.delay_ms == pytest.approx(0.2)
    prediction = predict_curve(calibrated, 32, profile_delays("asl2017-fig11"), calibrated_at=0)
    assert prediction.calibration_links == calibrated.links
    assert prediction.links == profile_delays("asl2017-fig11")
    assert prediction.ceiling_ops_per_s == pytest.approx(8000.0 / 2.75)


def test_a_pool_that_was_all_round_trip_cannot_lose_it() -> None:
    calibrated = ClosedModel([POOL], [2.0], [8.0], 0.0, 1, server_rtt_ms=2.0)
    with pytest.raises(ValueError, match="worker pool demand"):
        with_links(calibrated, NO_LINKS)


# bad input


@pytest.mark.parametrize("rtt", [-0.1, math.nan, math.inf, 5000.0])
def test_a_bad_rtt_is_refused(rtt: float) -> None:
    with pytest.raises(ValueError, match="client_mw RTT"):
        LinkDelay("client_mw", rtt, "configured")
    with pytest.raises(ValueError, match="RTT"):
        LinkDelays.of(client_mw=rtt)


def test_bad_links_and_models_are_refused() -> None:
    with pytest.raises(ValueError, match="profile: 'asl2016'"):
        profile_delays("asl2016")
    with pytest.raises(ValueError, match="link: 'client_backend'"):
        LinkDelay("client_backend", 1.0, "configured")
    with pytest.raises(ValueError, match="source"):
        LinkDelay("client_mw", 1.0, "guessed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="each link at most once"):
        LinkDelays(
            (LinkDelay("mw_server", 1.0, "achieved"), LinkDelay("mw_server", 2.0, "profile"))
        )
    with pytest.raises(ValueError, match="client_rtt_ms"):
        ClosedModel([POOL], [1.0], [8.0], 1.0, 1, client_rtt_ms=-1.0)
    with pytest.raises(ValueError, match="server_rtt_ms"):
        ClosedModel([POOL], [1.0], [8.0], 1.0, 1, server_rtt_ms=-0.5)
    with pytest.raises(ValueError, match="the delay it is part of"):
        ClosedModel([POOL], [1.0], [8.0], 1.0, 1, client_rtt_ms=2.0)
    with pytest.raises(ValueError, match="the holding time it is part of"):
        ClosedModel([POOL], [1.0], [8.0], 1.0, 1, server_rtt_ms=2.0)
    with pytest.raises(ValueError, match="worker_service_ms"):
        network_model(8, -1.0)
    with pytest.raises(ValueError, match="worker_service_ms: 0"):
        network_model(8, 0.0)
    with pytest.raises(ValueError, match="workers"):
        network_model(0, 1.0)
    with pytest.raises(ValueError, match="max_clients"):
        predict_curve(network_model(8, 1.0), 0)


# where a run's RTTs come from


def _row(**values: Any) -> pd.Series:
    base = {
        "point": 0,
        "total_clients": 4,
        "think_time_ms": 0.0,
        "throughput_ops_per_s": 1000.0,
        "response_time_ms": 4.0,
        "middlewares": 1,
        "workers": 8,
        "servers": 1,
        "mw_throughput_ops_per_s": 1000.0,
        "mw_response_time_ms": 2.5,
        "mw_queue_time_ms": 0.1,
        "mw_service_time_ms": 2.2,
    }
    return pd.Series({**base, **values})


def test_achieved_rtts_come_first_then_the_spec_then_none() -> None:
    spec = {"network": {"profile": "asl2017", "rtt_ms": {"mw_server": 1.5}, "jitter_ms": {}}}
    configured = spec_delays(spec, 1)
    assert configured.get("mw_server") == LinkDelay(
        "mw_server", 1.5, "configured", "spec: network.rtt_ms.mw_server"
    )
    client = configured.get("client_mw")
    assert client is not None and (client.rtt_ms, client.source) == (2.3, "profile")
    assert "ASL 2017 §3.1.1" in client.detail
    achieved = achieved_delays(_row(rtt_client_mw_p50_ms=2.41))
    merged = achieved.merged_over(configured)
    assert merged.describe() == "client_mw 2.41 ms (achieved), mw_server 1.5 ms (configured)"
    assert merged.sources == ("achieved", "configured")
    # an aggregated point's columns carry _mean
    assert achieved_delays(_row(rtt_mw_server_p50_ms_mean=2.1), "_mean").rtt_ms("mw_server") == 2.1
    # nothing recorded, nothing configured: no links
    assert spec_delays({"topology": {}}, 1) == NO_LINKS
    assert spec_delays({"network": {"profile": "off"}}, 1) == NO_LINKS
    assert achieved_delays(_row()) == NO_LINKS
    # without a middleware the client's link is to the servers
    baseline = spec_delays({"network": {"profile": "asl2019"}}, 0)
    assert [d.link for d in baseline.links] == ["client_server"]
    assert baseline.client_rtt_ms(0) == 0.9 and baseline.server_rtt_ms(0) == 0.0


def test_a_calibrated_model_holds_the_rtts_inside_its_measured_times() -> None:
    row = _row(rtt_client_mw_p50_ms=1.2, rtt_mw_server_p50_ms=2.0)
    m = measurement(row, [], host_cores=0)
    assert m.links.describe() == "client_mw 1.2 ms (achieved), mw_server 2 ms (achieved)"
    closed = closed_model(m, analyse(m))
    plain = closed_model(measurement(_row(), [], host_cores=0), analyse(m))
    assert closed is not None and plain is not None
    # the measured holding time R_mw - Q = 2.4 ms holds the 2 ms round trip: unchanged
    assert closed.demands_ms == plain.demands_ms == [pytest.approx(2.4)]
    assert closed.delay_ms == plain.delay_ms
    assert (closed.client_rtt_ms, closed.server_rtt_ms) == (1.2, 2.0)
    # a measured holding time below the round trip (an RTT the run did not emulate) stays as
    # measured, all of it the link's
    short = closed_model(measurement(_row(rtt_mw_server_p50_ms=3.0), [], host_cores=0), analyse(m))
    assert short is not None
    assert short.demands_ms == [pytest.approx(2.4)] and short.server_rtt_ms == pytest.approx(2.4)


# runs without RTTs: exactly the model numbers they had


def _numbers(results_dir: Path) -> dict[str, Any]:
    """The numbers as make_model_numbers.py writes them, through JSON as the fixture went."""
    found = importlib.util.spec_from_file_location("make_model_numbers", MAKE_NUMBERS)
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return dict(json.loads(json.dumps(module.model_numbers(results_dir))))


@pytest.mark.parametrize(
    "folder",
    [
        "results-recorded-quickstart",
        "results-recorded-quickstart-staging",
        "results-recorded-worker-pool",
    ],
)
def test_runs_without_rtts_keep_exactly_their_model_numbers(folder: str) -> None:
    expected = json.loads((DATA / "model-numbers.json").read_text(encoding="utf-8"))[folder]
    summary = pd.read_csv(DATA / folder / "summary.csv")
    assert not [c for c in summary.columns if c.startswith("rtt_")]
    assert "network" not in (DATA / folder / "spec.yaml").read_text(encoding="utf-8")
    assert _numbers(DATA / folder) == expected


def test_a_point_without_links_has_the_model_without_links() -> None:
    m = PointMeasurement(0, 4, 0.0, 1000.0, 4.0, 1, 8, 1, 1000.0, 2.5, 0.1, 2.2)
    closed = closed_model(m, analyse(m))
    assert closed is not None
    assert (closed.client_rtt_ms, closed.server_rtt_ms, closed.links) == (0.0, 0.0, NO_LINKS)


def test_a_shaped_link_is_a_station_and_names_the_seeds_server_link() -> None:
    """ASL 2017 §2.1 read-only, no middleware: 1 KB values at ~11,000 GETs/s fill the one
    server's 100 Mbit/s, a station busier than any other, so the link is the bottleneck
    (kind server_link)."""
    from cachelab.fidelity import link_kind

    point = PointMeasurement(
        point=0, clients=192, think_time_ms=0.0, throughput_ops_per_s=11_000.0,
        response_time_ms=17.0, servers=1, host_cores=2,
        process_cpu={"memcached-0": ("server", 0.6)}, server_threads=4,
        link_loads={"server-0 out": (1124.0, 100.0), "clients -> server-0": (60.0, 600.0)},
    )  # fmt: skip
    analysis = analyse(point)
    link = analysis.stage("link server-0 out")
    assert link is not None and link.is_station
    assert link.demand_ms == pytest.approx(1124 * 8 / 100_000)
    assert link.utilisation == pytest.approx(11_000 * 1124 * 8 / 100e6)
    assert analysis.bottleneck == "link server-0 out"
    assert link_kind(analysis.bottleneck.removeprefix("link ")) == "server_link"
    assert link_kind("clients -> middleware-0") == "client_link"
    assert link_kind("middleware-0 out") == "unknown"


def test_a_run_without_the_links_counters_has_no_link_station() -> None:
    point = PointMeasurement(
        point=0, clients=8, think_time_ms=0.0, throughput_ops_per_s=1000.0,
        response_time_ms=8.0,
    )  # fmt: skip
    assert not any(s.name.startswith("link ") for s in analyse(point).stages)


def test_a_saturated_link_is_named_before_the_workers_waiting_for_it() -> None:
    """Four workers, 16 KiB replies through a 100 Mbit/s server link at its rate: every worker
    is busy waiting for the link (pool U 1.0), the link at 0.95 is the cause."""
    point = PointMeasurement(
        point=0, clients=8, think_time_ms=0.0, throughput_ops_per_s=725.0,
        response_time_ms=11.0, middlewares=1, workers=4, servers=1,
        mw_throughput_ops_per_s=725.0, mw_response_time_ms=10.5, mw_queue_time_ms=5.0,
        mw_service_time_ms=5.4, link_loads={"server-0 out": (16_450.0, 100.0)},
    )  # fmt: skip
    analysis = analyse(point)
    pool, link = analysis.stage("worker pool"), analysis.stage("link server-0 out")
    assert pool is not None and link is not None
    assert pool.utilisation > link.utilisation > LINK_SATURATED
    assert analysis.bottleneck == "link server-0 out"
    # below saturation the busiest station is named as before
    idle = analyse(replace(point, link_loads={"server-0 out": (1000.0, 100.0)}))
    assert idle.bottleneck == "worker pool"


def test_the_links_bytes_per_request_come_from_the_runs_counters() -> None:
    """ASL 2017 §2.2 write-only as measured (kept in tests/data/fidelity): each SET's 1 KB value
    and its headers on the one client machine's link, next to nothing on the servers' replies;
    a run recorded before the counters has no link loads."""
    from cachelab.analysis.perpoint import link_loads
    from cachelab.results.experiment import read_experiment

    fidelity = DATA / "fidelity"
    measured = read_experiment(fidelity / "asl17-2.2")
    write_only = link_loads(measured.runs_of(0))
    assert set(write_only) == {"server-0 out", "server-1 out", "clients -> servers"}
    per_set, mbit = write_only["clients -> servers"]
    assert mbit == 200 and 1024 < per_set < 1200, write_only
    assert all(b < 100 for b, _ in (write_only["server-0 out"], write_only["server-1 out"]))
    assert link_loads(read_experiment(fidelity / "asl17-3.1-16wt").runs_of(0)) == {}


def _read_only_64_workers(clients: int, throughput: float, response_ms: float) -> PointMeasurement:
    """ASL 2017 §3.1 read-only at its profile: 64 workers held 2.2 ms (the 2 ms middleware ->
    server RTT and 0.2 ms of service), the 2.3 ms client RTT, 1 KB values (1,124 B per GET on
    the one server's 100 Mbit/s link, 60 B per request on the clients')."""
    return PointMeasurement(
        point=0, clients=clients, think_time_ms=0.0, throughput_ops_per_s=throughput,
        response_time_ms=response_ms, middlewares=1, workers=64, servers=1,
        mw_throughput_ops_per_s=throughput, mw_response_time_ms=2.25, mw_queue_time_ms=0.05,
        mw_service_time_ms=2.2, links=LinkDelays.of(client_mw=2.3, mw_server=2.0),
        link_loads={"server-0 out": (1124.0, 100.0), "clients -> middlewares": (60.0, 200.0)},
    )  # fmt: skip


def test_a_model_calibrated_at_low_load_knows_the_server_links_ceiling() -> None:
    """Without the link the 64 workers' ceiling is 64 / 2.2 ms = 29,091 ops/s; the server's
    100 Mbit/s at 1,124 B per GET caps it at 11,121 (the seed's plateau, ~11,000), and the MVA
    curve runs into that ceiling, not the workers'."""
    low = _read_only_64_workers(8, 8 / 4.6 * 1000.0, 4.6)
    analysis = analyse(low)
    with_link = closed_model(low, analysis)
    without = closed_model(low, analysis, link_stations=False)
    assert with_link is not None and without is not None
    link_ms = 1124 * 8 / 100_000
    assert with_link.names == [POOL, "link clients -> middlewares", "link server-0 out"]
    assert with_link.demands_ms[2] == pytest.approx(link_ms)
    # the server link's time comes out of the workers' holding, the clients' out of the delay:
    # the cycle at the calibration point is the measured one
    assert with_link.demands_ms[0] == pytest.approx(without.demands_ms[0] - link_ms)
    assert with_link.delay_ms == pytest.approx(without.delay_ms - 60 * 8 / 200_000)
    cycle = sum(with_link.demands_ms) + with_link.delay_ms
    assert cycle == pytest.approx(sum(without.demands_ms) + without.delay_ms)
    assert without.throughput_bound_ops_per_s(10**9) == pytest.approx(64_000 / 2.2)
    assert with_link.bottleneck() == "link server-0 out"
    assert with_link.throughput_bound_ops_per_s(10**9) == pytest.approx(1000.0 / link_ms)
    curve = predict_curve(with_link, 200)
    assert curve.bottleneck == "link server-0 out"
    assert curve.ceiling_ops_per_s == pytest.approx(11_121, rel=1e-3)
    assert 0.97 * 11_121 < curve.throughput_ops_per_s[-1] <= 11_121
    assert predict_curve(without, 200).throughput_ops_per_s[-1] > 20_000


def test_a_point_at_its_own_load_keeps_its_measured_link_wait() -> None:
    """At 11,000 GETs/s the link is busy and its wait is in the measured holding time: the
    per-point MVA leaves the link out (it would count that wait twice) and keeps its numbers;
    a point without the link counters has the same model either way."""
    from cachelab.analysis.models import model_rows

    busy = _read_only_64_workers(64, 11_000.0, 5.8)
    rows = model_rows(busy, analyse(busy))
    unshaped = replace(busy, link_loads={})
    plain = model_rows(unshaped, analyse(unshaped))
    assert [r.predicted for r in rows] == [r.predicted for r in plain]
    assert closed_model(unshaped, analyse(unshaped)) == closed_model(
        unshaped, analyse(unshaped), link_stations=False
    )


def test_without_a_middleware_the_links_come_out_of_the_delay() -> None:
    """ASL 2017 §2.1 read-only baseline: no worker pool, every link's time lies outside."""
    point = PointMeasurement(
        point=0, clients=4, think_time_ms=0.0, throughput_ops_per_s=4 / 0.5 * 1000.0,
        response_time_ms=0.5, servers=1, host_cores=2,
        process_cpu={"memcached-0": ("server", 0.1)}, server_threads=4,
        link_loads={"server-0 out": (1124.0, 100.0)},
    )  # fmt: skip
    analysis = analyse(point)
    closed = closed_model(point, analysis)
    # no CPU station measured (no schedstat): without the link there would be no station at all
    assert closed_model(point, analysis, link_stations=False) is None
    assert closed is not None and closed.names == ["link server-0 out"]
    assert closed.delay_ms == pytest.approx(0.5 - 1124 * 8 / 100_000)
    assert closed.bottleneck() == "link server-0 out"
    assert closed.throughput_bound_ops_per_s(10**9) == pytest.approx(100e6 / (1124 * 8))
