"""Round-trip times between roles (spec `network`): the spec field, its profiles and errors, and
toxiproxy-server emulating them on loopback with real memcached, middleware and loadgen processes.

The emulator's tests need toxiproxy-server (scripts/toxiproxy.sh builds it once per machine from
its Go module; skipped, saying why, without Go). Their assertions are physics, generous enough
for a busy machine: a round trip through a link never takes less than its configured RTT (less
a 10 % margin for rounding), and a closed system of 8 workers behind a 2 ms link never serves
more than 8 / 2 ms. Each prints the numbers it measured.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from local_runs import alive, processes_mentioning, run_locally, start_locally

from cachelab.cli import main
from cachelab.local.latency import (
    LatencyError,
    Proxy,
    Rtt,
    Toxiproxy,
    calibrate_links,
    gomaxprocs,
    off_links,
    probes_for,
    time_round_trips,
    toxiproxy_binary,
)
from cachelab.local.servers import start_servers
from cachelab.network import PROFILES, Link
from cachelab.paths import repo_root
from cachelab.processes import ProcessSet
from cachelab.report.sections.network import network_section
from cachelab.spec import SpecError, load_spec, parse_spec

QUICKSTART = Path(__file__).resolve().parents[1] / "experiments" / "quickstart.yaml"


def links(network: dict[str, object], middlewares: int = 1) -> list[tuple[str, float, float]]:
    spec = parse_spec({"name": "x", "topology": {"middlewares": middlewares}, "network": network})
    return [(link.name, link.rtt_ms, link.jitter_ms) for link in spec.links()]


def problem(network: dict[str, object], middlewares: int = 1) -> str:
    with pytest.raises(SpecError) as caught:
        links(network, middlewares)
    assert len(caught.value.problems) == 1, caught.value.problems
    return caught.value.problems[0]


# --- the spec field -------------------------------------------------------------------------


def test_no_network_section_emulates_nothing() -> None:
    assert links({}) == []
    assert links({"profile": "off"}) == []


def test_profiles_set_each_link_from_the_seed_and_name_the_source() -> None:
    assert links({"profile": "asl2017"}) == [("client_mw", 2.3, 0.0), ("mw_server", 2.0, 0.0)]
    assert links({"profile": "asl2017-fig11"}) == [
        ("client_mw", 0.5, 0.0),
        ("mw_server", 2.5, 0.0),
    ]
    assert links({"profile": "asl2019"}, middlewares=0) == [("client_server", 0.9, 0.2)]
    for profile in PROFILES.values():
        for link in profile.values():
            assert link.source.startswith(("ASL 2017 §", "ASL 2019 §")), link.source


def test_a_spec_overrides_a_profile_link_by_link() -> None:
    assert links({"profile": "asl2017", "rtt_ms": {"client_mw": 0.5}}) == [
        ("client_mw", 0.5, 0.0),
        ("mw_server", 2.0, 0.0),
    ]
    assert links({"profile": "asl2019", "jitter_ms": {"mw_server": 0.0}}) == [
        ("client_mw", 0.9, 0.2),
        ("mw_server", 0.9, 0.0),
    ]
    spec = parse_spec({"name": "x", "network": {"profile": "asl2017"}})
    assert "§3.1.1" in spec.links()[1].source
    own = parse_spec({"name": "x", "network": {"rtt_ms": {"mw_server": 2}}})
    assert own.links() == [Link("mw_server", 2.0, 0.0, "spec: network.rtt_ms.mw_server")]


@pytest.mark.parametrize(
    ("network", "middlewares", "expected"),
    [
        ({"rtt_ms": {"mw_server": -1}}, 1, "network.rtt_ms.mw_server: must be >= 0, got -1"),
        ({"rtt_ms": {"mw_server": 2000}}, 1, "network.rtt_ms.mw_server: must be <= 1000, got 2000"),
        (
            {"rtt_ms": {"mw_srv": 2}},
            1,
            "network.rtt_ms.mw_srv: unknown link (one of client_mw, mw_server, client_server)",
        ),
        (
            {"rtt_ms": {"client_server": 2}},
            1,
            "network.rtt_ms.client_server: no such link in this topology (topology.middlewares "
            "1: its links are client_mw, mw_server)",
        ),
        (
            {"rtt_ms": {"mw_server": 2}},
            0,
            "network.rtt_ms.mw_server: no such link in this topology (topology.middlewares 0: "
            "its links are client_server)",
        ),
        (
            {"profile": "asl2017"},
            0,
            "network.profile: asl2017 states no client_server RTT; set "
            "network.rtt_ms.client_server",
        ),
        (
            {"profile": "asl2016"},
            1,
            "network.profile: must be one of off, asl2017, asl2017-fig11, asl2019, got 'asl2016'",
        ),
        (
            {"jitter_ms": {"mw_server": 0.2}},
            1,
            "network.jitter_ms.mw_server: needs network.rtt_ms.mw_server (a link's RTT)",
        ),
        (
            {"rtt_ms": {"mw_server": 0.1}, "jitter_ms": {"mw_server": 0.2}},
            1,
            "network.jitter_ms.mw_server: must be <= the link's RTT (0.1 ms), got 0.2",
        ),
    ],
)
def test_bad_network_sections_are_one_line_naming_the_field(
    network: dict[str, object], middlewares: int, expected: str
) -> None:
    assert problem(network, middlewares) == expected


def test_rtts_are_sweepable_and_set_from_the_command_line() -> None:
    spec = load_spec(
        QUICKSTART,
        [
            "sweep.network.rtt_ms.mw_server=[0.5, 2]",
            "network.rtt_ms.client_mw=2.3",
            "sweep.topology.workers=[8]",
            "sweep.topology.clients_per_thread=[4]",
        ],
    )
    assert [p.spec.links()[1].rtt_ms for p in spec.points()] == [0.5, 2.0]
    assert {p.spec.links()[0].rtt_ms for p in spec.points()} == {2.3}
    swept = load_spec(
        QUICKSTART,
        ["sweep={network.profile: [off, asl2017]}", "report.series=network.profile"],
    )
    assert [len(p.spec.links()) for p in swept.points()] == [0, 2]


def test_a_swept_topology_without_the_link_names_the_point() -> None:
    with pytest.raises(SpecError, match=r"sweep point 0 \(.*topology.middlewares=0\): network"):
        load_spec(QUICKSTART, ["network.rtt_ms.mw_server=2", "sweep.topology.middlewares=[0, 1]"])


def test_run_with_a_bad_rtt_fails_at_once_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    bad = ["--set", "network.rtt_ms.mw_server=-2"]
    assert main(["run", str(QUICKSTART), "--results", str(results), *bad]) == 2
    assert "network.rtt_ms.mw_server: must be >= 0, got -2" in capsys.readouterr().out
    assert not results.exists()


def test_kubernetes_runs_take_rtts_and_go_on_to_the_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chart's sidecars emulate every link (cachelab.k8s.rtt): a spec with RTTs gets as far
    as reaching the cluster, which here is not there."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("CACHELAB_HELM", "/bin/true")  # a machine without the built tools too
    words = ["run", str(QUICKSTART), "--target", "k8s", "--results", str(tmp_path / "r")]
    assert main([*words, "--set", "network.profile=asl2017"]) == 2
    out = capsys.readouterr().out
    assert "cannot reach the cluster" in out
    assert "local only" not in out


# --- pure parts of the emulator -------------------------------------------------------------


def test_round_trip_statistics() -> None:
    rtt = Rtt.of([float(v) for v in range(1, 11)])
    assert (rtt.n, rtt.p50_ms, rtt.p90_ms, rtt.min_ms, rtt.max_ms) == (10, 5.0, 9.0, 1.0, 10.0)
    assert rtt.mean_ms == 5.5


def test_a_link_is_flagged_when_its_p50_misses_by_more_than_ten_percent() -> None:
    link = Link("mw_server", 2.0, 0.0, "spec")
    close = Proxy("a", link, 1, "x", achieved=Rtt.of([2.15]))
    far = Proxy("b", link, 1, "x", achieved=Rtt.of([2.3]))
    unmeasured = Proxy("c", link, 1, "x")
    assert (close.within_tolerance(), far.within_tolerance(), unmeasured.within_tolerance()) == (
        True,
        False,
        None,
    )
    records = [p.describe() for p in (close, far, unmeasured)]
    assert off_links(records) == ["b p50 2.300 ms vs 2 ms"]


def test_calibration_takes_at_most_about_ten_seconds_a_round() -> None:
    assert probes_for(Link("mw_server", 2.0, 0.0, "")) == 200
    assert probes_for(Link("mw_server", 100.0, 0.0, "")) == 100
    assert probes_for(Link("mw_server", 1000.0, 0.0, "")) == 20
    assert probes_for(Link("mw_server", 0.0, 0.0, "")) == 200


def test_the_emulator_runs_with_the_users_gomaxprocs_or_the_cpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOMAXPROCS", raising=False)
    assert gomaxprocs() == (os.cpu_count() or 1)
    monkeypatch.setenv("GOMAXPROCS", "3")
    assert gomaxprocs() == 3
    monkeypatch.setenv("GOMAXPROCS", "lots")
    assert gomaxprocs() == (os.cpu_count() or 1)


# --- toxiproxy-server on loopback -----------------------------------------------------------


@pytest.fixture(scope="module")
def toxiproxy() -> str:
    try:
        return toxiproxy_binary(repo_root(), say=print)
    except Exception as error:
        if shutil.which("go") is None:
            pytest.skip(f"toxiproxy-server cannot be built here: {error}")
        raise


@pytest.mark.integration
def test_without_go_the_emulator_cannot_be_built_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLS_DIR", str(tmp_path / "tools"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # Go lives elsewhere (/usr/local/go, ~/go)
    if shutil.which("go") is not None:
        pytest.skip("go is on /usr/bin here")
    lines: list[str] = []
    with pytest.raises(LatencyError, match="Go is needed to build toxiproxy-server"):
        toxiproxy_binary(repo_root(), say=lines.append)
    assert lines == []


@pytest.fixture
def emulated(tmp_path: Path, toxiproxy: str) -> Iterator[tuple[Toxiproxy, str]]:
    """A toxiproxy-server and a memcached server, stopped afterwards."""
    with ProcessSet() as procs:
        server = start_servers(procs, "memcached", 1, tmp_path)[0]
        emulator = Toxiproxy(toxiproxy)
        emulator.start(procs, tmp_path / "toxiproxy.log")
        yield emulator, server.address


@pytest.mark.integration
def test_calibrated_links_achieve_their_rtt(emulated: tuple[Toxiproxy, str]) -> None:
    emulator, server = emulated
    for rtt in (0.5, 2.0, 5.0):
        emulator.add_proxy(f"link-{rtt:g}", Link("mw_server", rtt, 0.0, "test"), server)
    records = calibrate_links(emulator, "memcache_text", probes=200)
    for record in records:
        achieved = record["achieved"]
        print(
            f"configured {record['rtt_ms']:g} ms: toxic {record['toxic_one_way_ms']:.3f} ms each"
            f" way, achieved p50 {achieved['p50_ms']:.3f} ms, p90 {achieved['p90_ms']:.3f} ms,"
            f" min {achieved['min_ms']:.3f} ms, within ±10 %: {record['within_10pct']}"
        )
        assert math.isfinite(achieved["p50_ms"]) and isinstance(record["within_10pct"], bool)
        # Physics, whatever the load: a round trip waits at least the toxic once each way (the
        # calibration may lower the toxic below half the RTT; how close it lands is printed).
        assert achieved["min_ms"] >= 0.95 * 2 * record["toxic_one_way_ms"]
        assert achieved["p50_ms"] >= achieved["min_ms"]


@pytest.mark.integration
def test_each_direction_waits_half_the_rtt(emulated: tuple[Toxiproxy, str]) -> None:
    emulator, server = emulated
    proxy = emulator.add_proxy("one-way", Link("mw_server", 4.0, 0.0, "test"), server)
    both = time_round_trips("127.0.0.1", proxy.listen_port, "memcache_text", 100)
    for stream in ("downstream", "upstream"):
        emulator._call("DELETE", f"/proxies/one-way/toxics/latency-{stream}")
        one = time_round_trips("127.0.0.1", proxy.listen_port, "memcache_text", 100)
        print(f"both directions: min {both.min_ms:.3f} ms; without {stream}: {one.min_ms:.3f}")
        if stream == "downstream":  # the upstream toxic alone: half the RTT
            assert 0.9 * 2.0 <= one.min_ms < both.min_ms
    assert both.min_ms >= 0.9 * 4.0
    last = time_round_trips("127.0.0.1", proxy.listen_port, "memcache_text", 100)
    assert last.min_ms < 2.0  # no toxic left: either one alone would hold a round trip 2 ms


@pytest.mark.integration
def test_waiting_connections_hold_no_thread(
    tmp_path: Path, toxiproxy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """32 connections wait out a 4 ms link at once on one Go processor. The toxic's waits are
    parked in the netpoller, so the server keeps about as many threads as it started with; a
    toxic that blocked a thread in each wait would need one per waiting direction."""
    monkeypatch.setenv("GOMAXPROCS", "1")
    connections, rtt_ms, rounds = 32, 4.0, 10
    with ProcessSet() as procs:
        server = start_servers(procs, "memcached", 1, tmp_path)[0]
        emulator = Toxiproxy(toxiproxy)
        emulator.start(procs, tmp_path / "toxiproxy.log")
        assert emulator.gomaxprocs == 1 and emulator.proc is not None
        proxy = emulator.add_proxy("shared", Link("mw_server", rtt_ms, 0.0, "test"), server.address)
        socks = [
            socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=5.0)
            for _ in range(connections)
        ]
        round_ms = []
        try:
            for _ in range(rounds):
                started = time.perf_counter()
                for sock in socks:
                    sock.sendall(b"mn\r\n")
                for sock in socks:
                    reply = b""
                    while not reply.endswith(b"MN\r\n"):
                        chunk = sock.recv(64)
                        assert chunk, "the proxy closed a connection"
                        reply += chunk
                round_ms.append((time.perf_counter() - started) * 1e3)
            threads = thread_count(emulator.proc.pid)
        finally:
            for sock in socks:
                sock.close()
    median = sorted(round_ms)[rounds // 2]
    print(
        f"{connections} connections through {rtt_ms:g} ms at once: {threads} threads,"
        f" median round {median:.1f} ms"
    )
    assert threads < connections // 2


def thread_count(pid: int) -> int:
    """Threads of a process now (/proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no Threads line")


def write_spec(folder: Path, **changes: object) -> Path:
    spec: dict[str, object] = {
        "name": "rtt",
        "topology": {"threads": 2, "clients_per_thread": 8, "middlewares": 1, "workers": 8},
        "workload": {"ratio": "1:0", "value_bytes": 1024, "key_maximum": 1000},
        "run": {"repetitions": 1, "duration_s": 8, "warmup_s": 2, "cooldown_s": 1},
        **changes,
    }
    path = folder / "rtt.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def run_rtt_spec(spec: Path, results: Path, *overrides: str) -> Path:
    """The rtt spec run locally (local_runs.run_locally): its results folder."""
    run_locally(spec, results, *overrides, timeout_s=600)
    (folder,) = (results / "rtt").iterdir()
    return folder


@pytest.mark.e2e
def test_the_spec_rtts_reach_the_local_runner(tmp_path: Path, toxiproxy: str) -> None:
    spec = write_spec(tmp_path, network={"rtt_ms": {"client_mw": 1.0}})
    results = run_rtt_spec(spec, tmp_path / "results", "network.rtt_ms.mw_server=2")
    point = json.loads((results / "raw" / "p0-r0" / "point.json").read_text())
    network = point["network"]
    print(json.dumps(network["links"], indent=1))
    proxies = {p["proxy"]: p for p in network["links"]}
    assert set(proxies) == {"mw0-server0", "clients-mw0"}
    assert (proxies["mw0-server0"]["rtt_ms"], proxies["clients-mw0"]["rtt_ms"]) == (2.0, 1.0)
    assert proxies["mw0-server0"]["upstream"] == point["servers"][0]["address"]
    assert proxies["clients-mw0"]["upstream"] == point["middlewares"][0]["address"]
    # the middleware's server and the loadgen's target are the proxies
    assert proxies["mw0-server0"]["listen"] in point["middlewares"][0]["argv"]
    assert point["loadgens"][0]["target"] == proxies["clients-mw0"]["listen"]
    for proxy in proxies.values():
        assert proxy["achieved"]["p50_ms"] >= 0.9 * proxy["rtt_ms"]
    with (results / "raw" / "p0-r0" / "cpu.csv").open() as handle:
        samples = list(csv.DictReader(handle))
    assert {"toxiproxy", "middleware", "server", "loadgen"} <= {s["role"] for s in samples}
    emulators = {int(s["pid"]) for s in samples if s["role"] == "toxiproxy"}
    with (results / "summary.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert float(row["cpu_toxiproxy_cores"]) > 0
    assert float(row["rtt_mw_server_p50_ms"]) >= 1.8
    assert json.loads(row["network"])["rtt_ms"] == {"client_mw": 1.0, "mw_server": 2.0}
    # the report states configured against achieved for every proxy
    section = network_section(results)
    assert section is not None
    assert [(r["proxy"], r["configured_rtt_ms"]) for r in section.rows] == [
        ("mw0-server0", 2.0),
        ("clients-mw0", 1.0),
    ]
    assert all(r["achieved_p50_ms"] >= 0.9 * r["configured_rtt_ms"] for r in section.rows)
    # stopped with the run, as every process it started
    assert len(emulators) == 1
    assert not any(alive(pid) for pid in emulators)
    assert processes_mentioning(str(tmp_path)) == []


@pytest.mark.e2e
def test_eight_workers_behind_a_2_ms_link_serve_at_most_8_over_2_ms(
    tmp_path: Path, toxiproxy: str
) -> None:
    """ASL 2017 §3.1: write-only, 1 middleware with 8 workers, 1 server, MW -> server RTT 2 ms;
    each worker has one request at the server at a time, so X <= 8 / 2 ms = 4,000 ops/s."""
    spec = write_spec(tmp_path, network={"rtt_ms": {"mw_server": 2.0}})
    results = run_rtt_spec(spec, tmp_path / "results", "topology.clients_per_thread=16")
    with (results / "summary.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    throughput = float(row["throughput_ops_per_s"])
    print(
        f"32 clients, 8 workers, mw_server 2 ms: {throughput:,.0f} ops/s, middleware service "
        f"time {float(row['mw_service_time_ms']):.3f} ms, achieved RTT "
        f"{float(row['rtt_mw_server_p50_ms']):.3f} ms, toxiproxy "
        f"{float(row['cpu_toxiproxy_cores']):.2f} cores"
    )
    assert 0 < throughput <= 1.1 * 8 / 0.002


@pytest.mark.e2e
def test_ctrl_c_stops_the_emulator_with_the_run(tmp_path: Path, toxiproxy: str) -> None:
    spec = write_spec(
        tmp_path,
        network={"rtt_ms": {"client_mw": 1.0, "mw_server": 1.0}},
        run={"repetitions": 1, "duration_s": 30, "warmup_s": 1, "cooldown_s": 1},
    )
    results = tmp_path / "results"
    proc = start_locally(spec, results)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            samples = list(results.glob("rtt/*/raw/p0-r0/cpu.csv"))
            if samples and "toxiproxy" in samples[0].read_text():
                break
            time.sleep(0.2)
        else:
            pytest.fail("the run never sampled its emulator")
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    with samples[0].open() as handle:
        emulators = {int(r["pid"]) for r in csv.DictReader(handle) if r["role"] == "toxiproxy"}
    assert len(emulators) == 1
    assert not any(alive(pid) for pid in emulators)
    assert processes_mentioning(str(tmp_path)) == []
