"""Local bandwidth shaping (`cachelab run --bandwidth`): profiles, links, and real tc on lo.

The tc tests shape the loopback device of this machine for a few seconds; they need root and a
`lo` without a root qdisc, and are skipped (saying why) otherwise.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from cachelab.analysis.operational import LINK_SATURATED
from cachelab.analysis.perpoint import analyse_point
from cachelab.local.servers import start_servers
from cachelab.local.shaping import (
    Link,
    LoopbackShaper,
    ShapingError,
    links_for,
    one_way_delay_us,
    role_rates,
)
from cachelab.processes import ProcessSet
from cachelab.results.experiment import read_experiment
from cachelab.spec import Hosts


def test_profiles_size_every_role() -> None:
    assert role_rates("off", Hosts()) == {}
    assert role_rates("asl2017", Hosts()) == {"client": 200, "middleware": 700, "server": 100}
    # azure-v2 sizes by node pool: clients on a2, middlewares on a4, servers on a1 by default
    assert role_rates("azure-v2", Hosts()) == {"client": 500, "middleware": 1000, "server": 250}
    assert role_rates("azure-v2", Hosts(server="a4"))["server"] == 1000


def test_unknown_pools_and_profiles_are_errors_naming_the_field() -> None:
    with pytest.raises(ShapingError, match=r"topology.hosts.server is 'big'"):
        role_rates("azure-v2", Hosts(server="big"))
    with pytest.raises(ShapingError, match="not one of off, asl2017, asl2019, azure-v2"):
        role_rates("asl2018", Hosts())


def test_asl2019_has_its_iperf_rates_and_half_its_rtt_on_every_link() -> None:
    assert role_rates("asl2019", Hosts()) == {"client": 180, "middleware": 710, "server": 88}
    assert one_way_delay_us("asl2019") == 450  # RTT 0.9 ms
    assert one_way_delay_us("asl2017") == 0
    rates = role_rates("asl2019", Hosts())
    links = links_for(rates, [11000], [12000], client_machines=1, delay_us=450)
    assert {link.delay_us for link in links} == {450}
    assert [link.mbit for link in links] == [88, 710, 710, 180]


def test_links_cover_each_direction_at_the_sender_rate() -> None:
    rates = {"client": 200, "middleware": 700, "server": 100}
    links = links_for(rates, [11000, 11001], [12000], client_machines=3)
    assert links == [
        Link("server-0 out", "sport", (11000,), 100),
        Link("server-1 out", "sport", (11001,), 100),
        Link("middlewares -> servers", "dport", (11000, 11001), 700),
        Link("middleware-0 out", "sport", (12000,), 700),
        Link("clients -> middlewares", "dport", (12000,), 600),
    ]
    # two middlewares: their requests to the servers share both middlewares' egress, the
    # clients' requests to them the client machines'
    two = links_for(rates, [11000], [12000, 12001], client_machines=3)
    assert [(link.name, link.ports, link.mbit) for link in two if link.field == "dport"] == [
        ("middlewares -> servers", (11000,), 1400),
        ("clients -> middlewares", (12000, 12001), 600),
    ]
    # a baseline without middleware: one client machine's egress to two servers is one link
    # (ASL 2017 §2.2: one load generator's 200 Mbit/s bounds its writes to both)
    baseline = links_for(rates, [11000, 11001], [], client_machines=1)
    assert baseline == [
        Link("server-0 out", "sport", (11000,), 100),
        Link("server-1 out", "sport", (11001,), 100),
        Link("clients -> servers", "dport", (11000, 11001), 200),
    ]
    assert links_for({}, [11000], [12000], client_machines=1) == []


def test_shaping_without_root_is_refused_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("tc") is None:
        pytest.skip("tc is not installed")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ShapingError, match="needs root"):
        LoopbackShaper().check()


def _lo_qdisc() -> str:
    return subprocess.run(
        ["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def tc_lo() -> Iterator[None]:
    """Skips unless tc can shape lo here; makes sure lo is left unshaped."""
    if shutil.which("tc") is None or os.geteuid() != 0:
        pytest.skip("shaping lo needs tc and root")
    try:
        LoopbackShaper().check()
    except ShapingError as error:
        pytest.skip(str(error))
    probe = subprocess.run(
        ["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"this kernel cannot shape lo with htb: {probe.stderr.strip()}")
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], check=True)
    yield
    assert "htb" not in _lo_qdisc(), "the test left lo shaped"


def _get_big(sock: socket.socket) -> int:
    """One `get big` on `sock`; returns the reply's length."""
    sock.sendall(b"get big\r\n")
    reply = b""
    while not reply.endswith(b"END\r\n"):
        chunk = sock.recv(1 << 20)
        assert chunk, "memcached closed the connection"
        reply += chunk
    return len(reply)


def _get_bytes_per_s(port: int, value_bytes: int, seconds: float) -> float:
    """Fetches one value over and over for `seconds`; returns reply bytes per second."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        start = time.monotonic()
        received = 0
        while time.monotonic() - start < seconds:
            length = _get_big(sock)
            assert length > value_bytes
            received += length
        return received / (time.monotonic() - start)


@pytest.mark.integration
def test_a_shaped_server_port_sends_at_its_rate_and_lo_is_restored(
    tc_lo: None, tmp_path: Path
) -> None:
    value_bytes = 256 * 1024
    with ProcessSet() as procs:
        (server,) = start_servers(procs, "memcached", 1, tmp_path)
        port = server.port
        with socket.create_connection((server.host, port)) as sock:
            sock.sendall(b"set big 0 0 %d\r\n" % value_bytes + b"x" * value_bytes + b"\r\n")
            assert sock.recv(100) == b"STORED\r\n"
        shaper = LoopbackShaper()
        shaper.apply([Link("server out", "sport", (port,), 8)])  # 8 Mbit/s = 1 MB/s
        try:
            assert "htb" in _lo_qdisc()
            shaped = _get_bytes_per_s(port, value_bytes, 3.0)
        finally:
            shaper.clear()
    assert "htb" not in _lo_qdisc()
    # A machine under load only makes it slower; faster than the rate means no shaping.
    assert 0 < shaped < 1.5 * 1_000_000, f"{shaped:.0f} B/s through an 8 Mbit/s class"


@pytest.mark.integration
def test_a_shaped_link_counts_the_bytes_it_sent(tc_lo: None, tmp_path: Path) -> None:
    """The class's byte counter (what the operational analysis divides by the requests) holds
    every reply byte through the link and little more (IP, TCP and loopback headers)."""
    value_bytes, gets = 64 * 1024, 8
    with ProcessSet() as procs:
        (server,) = start_servers(procs, "memcached", 1, tmp_path)
        with socket.create_connection((server.host, server.port)) as sock:
            sock.sendall(b"set big 0 0 %d\r\n" % value_bytes + b"x" * value_bytes + b"\r\n")
            assert sock.recv(100) == b"STORED\r\n"
            shaper = LoopbackShaper()
            links = [Link("server out", "sport", (server.port,), 8), Link("idle", "sport", (9,), 8)]
            shaper.apply(links)
            try:
                received = sum(_get_big(sock) for _ in range(gets))
                sent, idle = shaper.sent_bytes()
            finally:
                shaper.clear()
    assert shaper.sent_bytes() == []
    assert idle == 0
    assert sent is not None and received <= sent <= 1.05 * received, (sent, received)


def _round_trip_ms(port: int, count: int = 20) -> float:
    """Median time of a memcached `version` round trip on one connection."""
    times = []
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for _ in range(count):
            start = time.perf_counter()
            sock.sendall(b"version\r\n")
            assert sock.recv(100).startswith(b"VERSION")
            times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


@pytest.mark.integration
def test_a_netem_delay_adds_the_profile_rtt_and_lo_is_restored(tc_lo: None, tmp_path: Path) -> None:
    with ProcessSet() as procs:
        (server,) = start_servers(procs, "memcached", 1, tmp_path)
        delay_us = one_way_delay_us("asl2019")
        shaper = LoopbackShaper()
        shaper.apply(
            [
                Link("server out", "sport", (server.port,), 88, delay_us),
                Link("to server", "dport", (server.port,), 180, delay_us),
            ]
        )
        try:
            if shaper.delay_skipped is not None:
                # the rates still hold; the run record says why the RTT is missing
                assert "htb" in _lo_qdisc() and "netem" not in _lo_qdisc()
                pytest.skip(f"this kernel cannot add a delay: {shaper.delay_skipped}")
            assert "netem" in _lo_qdisc()
            delayed = _round_trip_ms(server.port)
        finally:
            shaper.clear()
            assert "htb" not in _lo_qdisc()
    assert "netem" not in _lo_qdisc()
    # both directions wait 0.45 ms: at least the 0.9 ms RTT (a loaded machine only adds to it)
    assert delayed >= 0.85, f"median round trip {delayed:.3f} ms under a 0.9 ms RTT profile"


@pytest.mark.integration
def test_a_shaped_lo_is_not_taken_over(tc_lo: None) -> None:
    subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb"], check=True)
    try:
        with pytest.raises(ShapingError, match="already has a root qdisc"):
            LoopbackShaper().apply([Link("x", "sport", (1,), 8)])
        assert "htb" in _lo_qdisc()  # someone else's qdisc stays
    finally:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], check=True)


SPEC = {
    "name": "shaped",
    "description": "one middleware, one memcached, 16 KiB GETs: the server's 100 Mbit/s binds",
    "topology": {
        "threads": 2,
        "clients_per_thread": 4,
        "middlewares": 1,
        "workers": 4,
        "servers": 1,
    },
    "workload": {"ratio": "0:1", "value_bytes": 16384, "key_maximum": 200},
    "preload": {"enabled": True, "expected_miss_ratio": 0.0},
    "run": {"repetitions": 1, "duration_s": 5, "warmup_s": 1, "cooldown_s": 1},
}


@pytest.mark.e2e
def test_run_with_asl2017_profile_is_capped_by_the_server_link(tc_lo: None, tmp_path: Path) -> None:
    spec = tmp_path / "shaped.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    base = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "cachelab.cli", "run", str(spec), "--target", "local",
         "--results", str(base), "--bandwidth", "asl2017"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (results,) = (base / "shaped").iterdir()
    record = json.loads((results / "raw" / "p0-r0" / "point.json").read_text())
    assert record["bandwidth"]["profile"] == "asl2017"
    server_out = record["bandwidth"]["links"][0]
    assert (server_out["field"], server_out["mbit"]) == ("sport", 100)
    loadgen = json.loads((results / "raw" / "p0-r0" / "loadgen-0.json").read_text())
    requests = loadgen["ALL STATS"]["Totals"]["Count"]
    # every GET's reply (16 KiB and its header) went through the server's class
    assert 16384 < server_out["sent_bytes"] / requests < 1.1 * (16384 + 40), (server_out, requests)
    # the operational analysis names the server's link, not the workers waiting for it
    experiment = read_experiment(results)
    frame = pd.read_csv(results / "summary.csv")
    analysis, _, _ = analyse_point(0, frame, experiment, os.cpu_count() or 1)
    link = analysis.stage("link server-0 out")
    assert link is not None and link.utilisation >= LINK_SATURATED, analysis.stages
    assert analysis.bottleneck == "link server-0 out", analysis.stages
    with (results / "summary.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    # 100 Mbit/s = 12.5 MB/s out of the server; a 16 KiB GET reply is ~16.4 KB: <= ~760 ops/s
    ceiling = 100e6 / 8 / (16384 + 40)
    throughput = float(row["throughput_ops_per_s"])
    assert 0 < throughput < 1.3 * ceiling, f"{throughput:.0f} ops/s above the link's {ceiling:.0f}"
    assert int(row["misses"]) == 0
