"""The links' round-trip times on the local cluster in its default layout (3 x a1, a4, 3 x a2):
the chart's toxiproxy sidecars (`links.rttMs`: client <-> middleware 2 ms, middleware <->
servers 2 ms) in front of the middleware and each memcached, a round trip through the
middleware's Service, and `cachelab run --target k8s` of a spec with the asl2017 profile, whose
probe pods time each link into summary.csv.

Bounds are physical, not tight: a round trip is at least the RTTs it crosses and well under ten
times them (the machine is shared; the sidecars add a proxy hop each).
"""

from __future__ import annotations

import csv
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from k8s.tools import CHART, ROOT, TOOLS_BIN

from cachelab.cli import main

from .conftest import LOCAL_VALUES, LocalCluster

pytestmark = pytest.mark.k8s_real

NAMESPACE = "rtt"
RELEASE = "testbed"
RTT_MS = 2.0  # each link
LINKS = {"links": {"rttMs": {"clientMw": RTT_MS, "mwServer": RTT_MS}}}


@pytest.fixture(scope="module")
def rtt_release(real_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The release with both links at 2 ms; `--wait` returns once every sidecar has its
    toxics (their readiness)."""
    values = tmp_path_factory.mktemp("rtt") / "links.yaml"
    values.write_text(yaml.safe_dump(LINKS))
    real_cluster.kubectl("create", "namespace", NAMESPACE)
    started = time.monotonic()
    real_cluster.helm(
        "install", RELEASE, CHART, "-n", NAMESPACE, "-f", LOCAL_VALUES, "-f", values,
        "--wait", "--timeout", "300s", timeout_s=360,
    )  # fmt: skip
    print(f"release with RTT sidecars: helm install --wait {time.monotonic() - started:.1f} s")
    return NAMESPACE


def timed_round_trips(host: str, port: int, request: bytes, until: bytes, n: int) -> list[float]:
    """Round trips on one connection, one at a time, in ms."""
    samples = []
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(n):
            start = time.perf_counter()
            sock.sendall(request)
            reply = b""
            while not reply.endswith(until):
                chunk = sock.recv(65536)
                assert chunk, f"connection closed after {reply!r}"
                reply += chunk
            samples.append((time.perf_counter() - start) * 1000.0)
    return sorted(samples)


def test_sidecars_run_in_the_middleware_and_every_server_pod(
    real_cluster: LocalCluster, rtt_release: str
) -> None:
    pods = real_cluster.get("pods", "-n", rtt_release)["items"]
    for pod in pods:
        component = pod["metadata"]["labels"].get("app.kubernetes.io/component")
        if component not in ("middleware", "memcached"):
            continue
        names = [c["name"] for c in pod["spec"]["containers"]]
        assert "toxiproxy" in names, (pod["metadata"]["name"], names)
        log = real_cluster.kubectl(
            "logs", "-n", rtt_release, pod["metadata"]["name"], "-c", "toxiproxy"
        )
        link = "clientMw" if component == "middleware" else "mwServer"
        assert f"toxiproxy: {link}: 0.0.0.0:" in log and "latency 1 ms" in log, log


def test_a_get_through_the_middleware_crosses_both_links(
    real_cluster: LocalCluster, rtt_release: str
) -> None:
    ip = real_cluster.get("service", "-n", rtt_release, f"{RELEASE}-middleware")["spec"][
        "clusterIP"
    ]
    value = b"x" * 64
    stored = timed_round_trips(ip, 11212, b"set rtt 0 0 64\r\n" + value + b"\r\n", b"\r\n", 1)
    assert stored
    # `mn` is answered by the middleware itself: the client <-> middleware link alone
    mn = timed_round_trips(ip, 11212, b"mn\r\n", b"MN\r\n", 50)
    # a get goes on to a server: both links
    gets = timed_round_trips(ip, 11212, b"get rtt\r\n", b"END\r\n", 50)
    p50_mn, p50_get = mn[len(mn) // 2], gets[len(gets) // 2]
    print(f"through the middleware: mn p50 {p50_mn:.2f} ms, get p50 {p50_get:.2f} ms")
    assert mn[0] >= RTT_MS and p50_mn < 10 * RTT_MS
    assert gets[0] >= 2 * RTT_MS and p50_get < 10 * 2 * RTT_MS


@pytest.fixture
def cachelab_cli(
    real_cluster: LocalCluster, rtt_release: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("KUBECONFIG", str(real_cluster.kubeconfig))
    monkeypatch.setenv("CACHELAB_K8S_NAMESPACE", rtt_release)
    monkeypatch.setenv("CACHELAB_K8S_TIMEOUT_S", "300")
    monkeypatch.setenv("PATH", f"{TOOLS_BIN}:{os.environ['PATH']}")
    yield


def test_cachelab_run_target_k8s_times_each_link_into_the_summary(
    real_cluster: LocalCluster, rtt_release: str, cachelab_cli: None, tmp_path: Path
) -> None:
    """quickstart with the asl2017 profile (client <-> middleware 2.3 ms, middleware <->
    servers 2 ms), one short point: each link's achieved p50 in summary.csv, the sidecars' CPU
    apart as role toxiproxy."""
    spec = ROOT / "ops" / "experiments" / "quickstart.yaml"
    started = time.monotonic()
    code = main(
        [
            "run", str(spec), "--target", "k8s", "--results", str(tmp_path / "r"),
            "--values", str(LOCAL_VALUES), "--only", "0",
            "--set", "network.profile=asl2017", "--set", "run.repetitions=1",
            "--set", "run.duration_s=6", "--set", "run.warmup_s=1", "--set", "run.cooldown_s=1",
        ]
    )  # fmt: skip
    print(f"cachelab run --target k8s with RTTs: 1 point in {time.monotonic() - started:.1f} s")
    assert code == 0
    (results,) = (tmp_path / "r" / "quickstart").iterdir()
    (row,) = list(csv.DictReader((results / "summary.csv").open()))
    achieved = {k: row[k] for k in ("rtt_client_mw_p50_ms", "rtt_mw_server_p50_ms")}
    print({**achieved, "status": row["status"]})
    assert row["status"] == "ok", row
    assert 2.3 <= float(achieved["rtt_client_mw_p50_ms"]) < 23.0
    assert 2.0 <= float(achieved["rtt_mw_server_p50_ms"]) < 20.0
    run = results / "raw" / "p0-r0"
    network = json.loads((run / "point.json").read_text())["network"]
    print([(r["proxy"], r["toxic_one_way_ms"], r["achieved"]["p50_ms"]) for r in network["links"]])
    assert len(network["links"]) == 4 and network["problems"] == []  # 1 middleware, 3 servers
    # calibrated: each toxic below half the RTT by what the network and the proxy add
    assert all(r["toxic_one_way_ms"] < r["rtt_ms"] / 2 for r in network["links"])
    # the sidecars' CPU is its own role, each sidecar with its own cap (a 6 s run is too short
    # for the summary's CPU columns: the kubelets read every 2 s)
    rows = [line.split(",") for line in (run / "cpu.csv").read_text().splitlines()[1:]]
    sidecars = {name for _, role, name, *_ in rows if role == "toxiproxy"}
    assert len(sidecars) == 4 and all(n.endswith("/toxiproxy") for n in sidecars), sidecars
    assert {"middleware", "server", "loadgen"} <= {role for _, role, *_ in rows}
    limits = json.loads((run / "point.json").read_text())["usage"]["cpu_limit_cores"]
    assert sidecars <= set(limits)
    probes = real_cluster.get(
        "pods", "-n", rtt_release, "-l", "app.kubernetes.io/component=rtt-probe"
    )
    assert probes["items"] == [] or all(
        p["metadata"].get("deletionTimestamp") for p in probes["items"]
    )  # the probe pods go once they have answered
