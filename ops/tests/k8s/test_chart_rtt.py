"""Tier 4 (no cluster needed): the links' round-trip times in the chart (`links.*`). Off by
default, the release renders exactly as without the values; with an RTT, a toxiproxy sidecar in
the pods on the link's far end takes the port the Service targets, the process moves to port +
portOffset, the probes follow it and the NetworkPolicies still admit only the proxied ports. The
sidecar's own script runs here as a process, with busybox and toxiproxy-server, in front of a
real memcached: a round trip takes the RTT, and a toxic it cannot create stops it with a line
that says so."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.k8s import rtt
from cachelab.local.latency import time_round_trips

from .test_job_scripts import free_port, memcached_port  # noqa: F401  (fixture)
from .tools import CHART, ROOT, run, tool

pytestmark = pytest.mark.k8s

RTTS = "links:\n  rttMs: {clientMw: 2.3, mwServer: 2}\n  jitterMs: {mwServer: 0.5}\n"


def render(tmp_path: Path, body: str = "", *files: Path) -> list[dict[str, Any]]:
    values = tmp_path / "values.yaml"
    values.write_text(body or "{}\n")
    args = [a for f in (*files, values) for a in ("-f", str(f))]
    out = run([tool("helm"), "template", "testbed", CHART, *args]).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def pod_spec(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert found, f"no {kind} {name}"
    spec: dict[str, Any] = found[0]["spec"]["template"]["spec"]
    return spec


def container(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in spec["containers"] if c["name"] == name)


def env(c: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in c.get("env", [])}


def ports(c: dict[str, Any]) -> dict[str, int]:
    return {p["name"]: p["containerPort"] for p in c.get("ports", [])}


def probe_ports(c: dict[str, Any]) -> set[str]:
    return {
        c[p]["tcpSocket"]["port"]
        for p in ("startupProbe", "readinessProbe", "livenessProbe")
        if p in c and "tcpSocket" in c[p]
    }


def _without_links(files: list[Path]) -> list[Path]:
    return [f for f in files if "links" not in (yaml.safe_load(f.read_text()) or {})]


@pytest.mark.parametrize(
    "values",
    [
        None,
        *_without_links(sorted((CHART / "ci").glob("*-values.yaml"))),
        *_without_links(sorted((CHART / "examples").glob("*"))),
    ],
    ids=lambda v: v.name if v else "defaults",
)
def test_no_rtt_renders_no_sidecar_and_the_release_as_without_the_values(
    tmp_path: Path, values: Path | None
) -> None:
    files = [values] if values else []
    plain = render(tmp_path, "", *files)
    zeros = "links:\n  rttMs: {clientMw: 0, mwServer: 0, clientServer: 0}\n"
    assert render(tmp_path, zeros, *files) == plain
    text = yaml.safe_dump_all(plain)
    assert "toxiproxy" not in text and "-inner" not in text


def test_client_and_server_links_get_a_sidecar_on_the_port_the_service_targets(
    tmp_path: Path,
) -> None:
    docs = render(tmp_path, RTTS)
    mw = pod_spec(docs, "Deployment", "testbed-middleware")
    proxy, process = container(mw, "toxiproxy"), container(mw, "middleware")
    assert ports(proxy) == {"memcache": 11212}  # the Service's targetPort: memcache
    assert ports(process) == {"memcache-inner": 21212, "metrics": 9102}
    assert process["args"][process["args"].index("-p") + 1] == "21212"
    assert probe_ports(process) == {"memcache-inner"}
    assert env(proxy) == {
        "PROXY": "clientMw",
        "LISTEN_PORT": "11212",
        "UPSTREAM_PORT": "21212",
        "LATENCY_MS": "1.15",  # half the RTT each way
        "JITTER_MS": "0",
        "API_PORT": "8474",
        "LOG_LEVEL": "info",
    }
    service = next(
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "testbed-middleware"
    )
    assert {p["name"]: p["targetPort"] for p in service["spec"]["ports"]}["memcache"] == "memcache"

    server = pod_spec(docs, "StatefulSet", "testbed-memcached")
    proxy, process = container(server, "toxiproxy"), container(server, "memcached")
    assert ports(proxy) == {"memcache": 11211}
    assert ports(process) == {"memcache-inner": 21211}
    assert process["args"][process["args"].index("-p") + 1] == "21211"
    assert probe_ports(process) == {"memcache-inner"}
    assert (env(proxy)["PROXY"], env(proxy)["LATENCY_MS"], env(proxy)["JITTER_MS"]) == (
        "mwServer",
        "1",
        "0.25",
    )
    # ready only while the proxy and both toxics exist; its own resources, not the pool's
    readiness = " ".join(proxy["readinessProbe"]["exec"]["command"])
    assert "/proxies/$PROXY/toxics" in readiness
    assert '"latency-upstream"' in readiness and '"latency-downstream"' in readiness
    assert proxy["resources"] == {
        "requests": {"cpu": "10m", "memory": "16Mi"},
        "limits": {"cpu": "500m", "memory": "64Mi"},
    }
    assert proxy["securityContext"]["readOnlyRootFilesystem"] is True


def test_one_link_only_puts_a_sidecar_on_its_far_end(tmp_path: Path) -> None:
    docs = render(tmp_path, "links:\n  rttMs: {mwServer: 2}\n")
    mw = pod_spec(docs, "Deployment", "testbed-middleware")
    assert [c["name"] for c in mw["containers"]] == ["middleware"]
    assert "toxiproxy" in [
        c["name"] for c in pod_spec(docs, "StatefulSet", "testbed-memcached")["containers"]
    ]


def test_a_baseline_without_middleware_delays_the_loadgens_link_at_the_servers(
    tmp_path: Path,
) -> None:
    body = "middleware:\n  enabled: false\nlinks:\n  rttMs: {clientServer: 0.9}\n"
    server = pod_spec(render(tmp_path, body), "StatefulSet", "testbed-memcached")
    proxy = container(server, "toxiproxy")
    assert (env(proxy)["PROXY"], env(proxy)["LATENCY_MS"]) == ("clientServer", "0.45")


def test_redis_servers_and_their_exporter_follow_the_process_port(tmp_path: Path) -> None:
    body = (
        "memcached:\n  enabled: false\nredis:\n  enabled: true\n"
        "middleware:\n  backend: redis\nlinks:\n  rttMs: {mwServer: 2}\n"
        "  toxiproxy: {gomaxprocs: 72}\n"
    )
    server = pod_spec(render(tmp_path, body), "StatefulSet", "testbed-redis")
    proxy, process = container(server, "toxiproxy"), container(server, "redis")
    assert ports(proxy) == {"redis": 6379}
    assert process["args"][process["args"].index("--port") + 1] == "16379"
    assert probe_ports(process) == {"redis-inner"}
    assert container(server, "exporter")["args"][0] == "--redis.addr=redis://127.0.0.1:16379"
    assert env(proxy)["GOMAXPROCS"] == "72"


def test_network_policies_admit_the_proxied_ports_and_not_the_processes(tmp_path: Path) -> None:
    docs = render(tmp_path, RTTS)
    admitted = set()
    for policy in (d for d in docs if d["kind"] == "NetworkPolicy"):
        for rule in policy["spec"].get("ingress", []):
            admitted |= {p["port"] for p in rule.get("ports", [])}
    assert {11211, 11212} <= admitted
    assert not {21211, 21212, 8474} & admitted


def test_sidecars_count_in_the_pools_fit(tmp_path: Path) -> None:
    body = RTTS + "  toxiproxy:\n    resources:\n      requests: {cpu: 900m}\n"
    values = tmp_path / "values.yaml"
    values.write_text(body)
    rendered = run([tool("helm"), "template", "testbed", CHART, "-f", values], check=False)
    assert rendered.returncode != 0
    assert "(memcached, memcached toxiproxy, memcached exporter) request 1420m CPU" in (
        rendered.stderr
    )


# --- the sidecar's script, run --------------------------------------------------------------


def sidecar_script(tmp_path: Path, body: str = RTTS) -> tuple[str, str]:
    """(script, readiness command) of the memcached pods' sidecar."""
    server = pod_spec(render(tmp_path, body), "StatefulSet", "testbed-memcached")
    proxy = container(server, "toxiproxy")
    return proxy["args"][0], proxy["readinessProbe"]["exec"]["command"][2]


@pytest.fixture
def busybox_path(tmp_path: Path) -> str:
    """A PATH with busybox's applets and toxiproxy-server, as in the image (scripts/images.sh)."""
    built = subprocess.run(
        [ROOT / "scripts" / "toxiproxy.sh"], capture_output=True, text=True, timeout=1200
    )
    assert built.returncode == 0, built.stderr
    folder = tmp_path / "bin"
    folder.mkdir()
    for applet in ("sh", "wget", "grep", "sleep", "kill", "echo"):
        (folder / applet).symlink_to("/bin/busybox")
    (folder / "toxiproxy-server").symlink_to(built.stdout.strip().splitlines()[-1])
    return str(folder)


def start_sidecar(
    script: str, path: str, listen: int, upstream: int, latency: str, log: Path
) -> tuple[subprocess.Popen[bytes], int]:
    api = free_port()
    variables = {
        "PATH": path,
        "PROXY": "mwServer",
        "LISTEN_PORT": str(listen),
        "UPSTREAM_PORT": str(upstream),
        "LATENCY_MS": latency,
        "JITTER_MS": "0",
        "API_PORT": str(api),
        "LOG_LEVEL": "info",
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["/bin/busybox", "sh", "-c", script], env=variables, stdout=out, stderr=out
        )
    return proc, api


def test_the_sidecar_proxies_with_half_the_rtt_each_way_and_is_ready_after(
    tmp_path: Path,
    busybox_path: str,
    memcached_port: int,  # noqa: F811
) -> None:
    script, readiness = sidecar_script(tmp_path)
    listen = free_port()
    log = tmp_path / "sidecar.log"
    proc, api = start_sidecar(script, busybox_path, listen, memcached_port, "1", log)
    try:
        deadline = time.monotonic() + 20
        while "latency 1 ms" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        ready = subprocess.run(
            ["/bin/busybox", "sh", "-c", readiness],
            env={"PATH": busybox_path, "PROXY": "mwServer", "API_PORT": str(api)},
        )
        assert ready.returncode == 0
        achieved = time_round_trips("127.0.0.1", listen, "memcache_text", 50)
        # physical bounds only: at least the RTT (2 ms), far below ten times it
        assert achieved.min_ms >= 2.0 and achieved.p50_ms < 20.0, achieved
        proxy = subprocess.run(
            ["/bin/busybox", "wget", "-q", "-O", "-", f"http://127.0.0.1:{api}/proxies/mwServer"],
            capture_output=True,
            text=True,
        )
        assert json.loads(proxy.stdout)["upstream"] == f"127.0.0.1:{memcached_port}"
        # the runner's calibration: `kubectl exec` of SET_TOXICS in the sidecar
        sidecar_env = {"PATH": busybox_path, "PROXY": "mwServer", "API_PORT": str(api)}
        set_toxics = ["/bin/busybox", "sh", "-c", rtt.SET_TOXICS, "set-toxics", "0.9500", "0.0"]
        assert subprocess.run(set_toxics, env=sidecar_env).returncode == 0
        toxics = subprocess.run(
            [
                "/bin/busybox",
                "wget",
                "-q",
                "-O",
                "-",
                f"http://127.0.0.1:{api}/proxies/mwServer/toxics",
            ],
            capture_output=True,
            text=True,
        )
        assert {t["name"]: t["attributes"]["latency"] for t in json.loads(toxics.stdout)} == {
            "latency-upstream": 0.95,
            "latency-downstream": 0.95,
        }
        missing = subprocess.run(set_toxics, env={**sidecar_env, "PROXY": "nope"})
        assert missing.returncode == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0  # SIGTERM stops toxiproxy-server and the script cleanly


def test_rttprobe_times_the_sidecar_and_the_runner_reads_what_it_prints(
    tmp_path: Path,
    busybox_path: str,
    memcached_port: int,  # noqa: F811
) -> None:
    """The probe pods' program (scripts/images/rttprobe) against a real sidecar, its output read
    by the runner's parser: the image's two halves and the runner agree."""
    from cachelab.spec import load_spec

    probe = tmp_path / "rttprobe"
    subprocess.run(
        ["go", "build", "-o", str(probe), "main.go"],
        cwd=ROOT / "scripts" / "images" / "rttprobe",
        env={**os.environ, "CGO_ENABLED": "0"},
        check=True,
        timeout=300,
    )
    script, _ = sidecar_script(tmp_path)
    listen = free_port()
    log = tmp_path / "sidecar.log"
    proc, _ = start_sidecar(script, busybox_path, listen, memcached_port, "1", log)
    try:
        deadline = time.monotonic() + 20
        while "latency 1 ms" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        address = f"127.0.0.1:{listen}"
        done = subprocess.run(
            [probe, "-protocol", "memcache_text", "-n", "30", address],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    spec = load_spec(ROOT / "ops" / "experiments" / "quickstart.yaml", ["network.profile=asl2017"])
    pod = rtt.probe_pods(spec, "testbed", {}, {"testbed-memcached-0": address})[-1]
    (record,) = rtt.records(pod, done.stdout)
    assert record["achieved"]["n"] == 30
    assert record["achieved"]["min_ms"] >= 2.0 and record["achieved"]["p50_ms"] < 20.0
    refused = subprocess.run(
        [probe, "-wait", "1s", "127.0.0.1:1"], capture_output=True, text=True, timeout=30
    )
    assert refused.returncode == 1 and '"error":' in refused.stdout


def test_a_toxic_it_cannot_create_stops_the_sidecar_with_a_clear_line(
    tmp_path: Path,
    busybox_path: str,
    memcached_port: int,  # noqa: F811
) -> None:
    script, _ = sidecar_script(tmp_path)
    log = tmp_path / "sidecar.log"
    listen = free_port()
    proc, _ = start_sidecar(script, busybox_path, listen, memcached_port, "one", log)
    assert proc.wait(timeout=30) == 1
    lines = [line for line in log.read_text().splitlines() if line.startswith("toxiproxy:")]
    assert lines == [
        "toxiproxy: error: cannot create the upstream latency toxic of mwServer "
        "(POST /proxies/mwServer/toxics): wget: server returned error: HTTP/1.1 400 Bad Request"
    ]
    with pytest.raises(OSError):  # its proxy went with it: no half-made link is left
        socket.create_connection(("127.0.0.1", listen), timeout=1).close()


def test_a_specs_rtts_reach_the_sidecars_through_the_plan(tmp_path: Path) -> None:
    """`cachelab run --target k8s` writes the point's values; the chart takes them as they are."""
    from cachelab.k8s import plan
    from cachelab.spec import load_spec

    spec = load_spec(
        ROOT / "ops" / "experiments" / "asl17-rtt-variant.yaml", ["network.jitter_ms.client_mw=0.2"]
    )
    expected = [("1.15", "1"), ("0.25", "1.25")]  # asl2017, asl2017-fig11: half of each RTT
    for point, (client_mw, mw_server) in zip(spec.points()[::9], expected, strict=True):
        values = plan.release_values(point.spec, plan.Target())
        docs = render(tmp_path, yaml.safe_dump(values))
        mw = container(pod_spec(docs, "Deployment", "testbed-middleware"), "toxiproxy")
        server = container(pod_spec(docs, "StatefulSet", "testbed-memcached"), "toxiproxy")
        assert (env(mw)["LATENCY_MS"], env(mw)["JITTER_MS"]) == (client_mw, "0.1")
        assert env(server)["LATENCY_MS"] == mw_server
        assert "GOMAXPROCS" not in env(mw)  # Go's default: the timerfd waits hold no processor
