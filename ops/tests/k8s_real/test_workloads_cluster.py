"""What the chart and the experiment Jobs can do, run for real on the local cluster in its default
layout (make k8s-up: 3 x a1, 1 x a4, 3 x a2, the ASL 2017 §3 shape): redis behind the
middleware's redis front end with hash routing and replication, sharded multi-gets over three
memcached servers, two middlewares on the a4 node, a shipped three-client overlay applied
unmodified (three client machines on three a2 nodes behind the start barrier, collected and
reported), `cachelab run --target k8s` of an ASL 2017 §4.1 spec, locust's master and workers on
the client nodes, and an overlay applied before its release, which fails naming the command
that installs it.

Order matters: the overlay without a release is applied first and checked after the redis
release's tests and the overlay release's own (its Job waits RELEASE_WAIT_S, 60 s, before it
fails, and holds an a2 node's room until then, so it must be done before the overlay's Jobs
start), and each release is removed before the next one needs the a4 node.
"""

from __future__ import annotations

import csv
import json
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s.kube import wait_for
from k8s.tools import CHART, MANIFESTS, ROOT, TOOLS_BIN

from cachelab.cli import main
from cachelab.k8s.collect import result_blocks

from .conftest import LOCAL_VALUES, LocalCluster, from_cluster_registry
from .test_real_cluster import memcache_exchange

pytestmark = pytest.mark.k8s_real

OVERLAY = MANIFESTS / "overlays" / "asl17-5-multiget-sharded"  # 3 clients, 2 MWs, 3 servers
UNRELEASED_OVERLAY = MANIFESTS / "overlays" / "asl17-3-one-middleware"
UNRELEASED_NS = "no-release"
REDIS_NS = "redis-hash"
NAMESPACE = "shape"
RELEASE = "testbed"  # the release every overlay targets
REDIS_VALUES = {
    "memcached": {"enabled": False},
    "redis": {"enabled": True, "replicas": 3},
    "middleware": {
        "backend": "redis", "routing": "hash", "replication": 2, "sharded": True, "workers": 2,
    },
}  # fmt: skip


def pods(cluster: LocalCluster, namespace: str, selector: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = cluster.get("pods", "-n", namespace, "-l", selector)["items"]
    return items


def service_ip(cluster: LocalCluster, namespace: str) -> str:
    ip: str = cluster.get("service", "-n", namespace, f"{RELEASE}-middleware")["spec"]["clusterIP"]
    return ip


# ---------------------------------------------------------------- RESP (redis) from the host


def resp_command(*args: str) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        data = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(data), data)
    return out


class RespReader:
    """Reads RESP2 replies from a socket: simple strings, errors, integers, bulk strings, arrays."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            assert chunk, f"connection closed after {self.buf!r}"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            assert chunk, "connection closed inside a bulk string"
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2 :]
        return data

    def reply(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b"-"):
            return rest.decode() if kind == b"+" else RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return None if int(rest) < 0 else self._exactly(int(rest)).decode()
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise AssertionError(f"not RESP: {line!r}")


def redis_call(host: str, port: int, *commands: tuple[str, ...]) -> list[Any]:
    """Send the commands on one connection (pipelined) and return their replies."""
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"".join(resp_command(*c) for c in commands))
        reader = RespReader(sock)
        return [reader.reply() for _ in commands]


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def unreleased(real_cluster: LocalCluster, tmp_path_factory: Any) -> float:
    """An overlay applied unmodified (but for the registry of its images) in a namespace without
    the release; when it was applied."""
    real_cluster.kubectl("create", "namespace", UNRELEASED_NS)
    moved = from_cluster_registry(UNRELEASED_OVERLAY, tmp_path_factory.mktemp("unreleased") / "k")
    real_cluster.kubectl("apply", "-n", UNRELEASED_NS, "-k", moved)
    return time.monotonic()


@pytest.fixture(scope="module")
def redis_release(real_cluster: LocalCluster, unreleased: float, tmp_path_factory: Any) -> str:
    """A release with three redis servers behind the middleware's redis front end, hash routing
    with two replicas per key and sharded multi-gets; removed when the module's memcached
    release needs the a4 node."""
    values = tmp_path_factory.mktemp("redis") / "redis.yaml"
    values.write_text(yaml.safe_dump(REDIS_VALUES))
    real_cluster.kubectl("create", "namespace", REDIS_NS)
    started = time.monotonic()
    real_cluster.helm(
        "install", RELEASE, CHART, "-n", REDIS_NS, "-f", LOCAL_VALUES, "-f", values,
        "--wait", "--timeout", "240s", timeout_s=300,
    )  # fmt: skip
    print(f"redis release: helm install --wait {time.monotonic() - started:.1f} s")
    return REDIS_NS


@pytest.fixture(scope="module")
def overlay_release(real_cluster: LocalCluster) -> Iterator[str]:
    """The release of the shipped overlay, as its header says: its testbed-values.yaml, then
    this cluster's values file."""
    real_cluster.kubectl("delete", "namespace", REDIS_NS, "--wait=false", check=False)
    real_cluster.kubectl("create", "namespace", NAMESPACE)
    started = time.monotonic()
    real_cluster.helm(
        "upgrade", "--install", RELEASE, CHART, "-n", NAMESPACE,
        "-f", OVERLAY / "testbed-values.yaml", "-f", LOCAL_VALUES,
        "--wait", "--timeout", "240s", timeout_s=300,
    )  # fmt: skip
    print(f"{OVERLAY.name} release: helm upgrade --wait {time.monotonic() - started:.1f} s")
    yield NAMESPACE


Cachelab = Callable[..., tuple[int, str]]


@pytest.fixture
def cachelab(
    real_cluster: LocalCluster,
    overlay_release: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Cachelab]:
    """`cachelab ARGS...` in this process against the cluster and the overlay's namespace:
    its exit code and what it printed. The test's own prints pass through (pytest -s)."""
    monkeypatch.setenv("KUBECONFIG", str(real_cluster.kubeconfig))
    monkeypatch.setenv("CACHELAB_K8S_NAMESPACE", overlay_release)
    monkeypatch.setenv("CACHELAB_K8S_TIMEOUT_S", "300")
    monkeypatch.setenv("PATH", f"{TOOLS_BIN}:{os.environ['PATH']}")

    def passed_on() -> None:
        printed = capsys.readouterr().out
        with capsys.disabled():
            print(printed, end="")

    def cli(*args: str) -> tuple[int, str]:
        passed_on()
        code = main(list(args))
        return code, capsys.readouterr().out

    yield cli
    passed_on()


# ---------------------------------------------------------------- redis, hash routing, replication


def test_redis_set_get_round_trip_through_the_middlewares_redis_front_end(
    real_cluster: LocalCluster, redis_release: str
) -> None:
    (mw,) = pods(real_cluster, redis_release, "app.kubernetes.io/component=middleware")
    args = mw["spec"]["containers"][0]["args"]
    assert args[args.index("--protocol") + 1] == "redis", args
    servers = pods(real_cluster, redis_release, "app.kubernetes.io/component=redis")
    assert len({p["spec"]["nodeName"] for p in servers}) == 3  # one redis per a1 node
    value = f"redis-{time.time_ns()}"
    ip = service_ip(real_cluster, redis_release)
    replies = redis_call(ip, 11212, ("SET", "k8s-redis", value), ("GET", "k8s-redis"))
    assert replies == ["OK", value], replies


def test_hash_routing_replicates_each_set_and_a_multi_get_spans_the_servers(
    real_cluster: LocalCluster, redis_release: str
) -> None:
    """Twelve keys SET through the middleware: each is on exactly two of the three servers
    (replication 2), the keys' replica sets differ (the ring spreads them), and one MGET of all
    of them through the middleware (split by primary, merged in key order) returns every value."""
    keys = [f"ring-{i}" for i in range(12)]
    values = [f"v{i}-{time.time_ns()}" for i in range(12)]
    ip = service_ip(real_cluster, redis_release)
    sets = redis_call(ip, 11212, *[("SET", k, v) for k, v in zip(keys, values, strict=True)])
    assert sets == ["OK"] * 12, sets
    servers = sorted(
        pods(real_cluster, redis_release, "app.kubernetes.io/component=redis"),
        key=lambda p: p["metadata"]["name"],
    )
    holders: dict[str, set[str]] = {k: set() for k in keys}
    for pod in servers:
        got = redis_call(pod["status"]["podIP"], 6379, ("MGET", *keys))[0]
        for key, value, held in zip(keys, values, got, strict=True):
            if held is not None:
                assert held == value, (pod["metadata"]["name"], key, held)
                holders[key].add(pod["metadata"]["name"])
    print({k: sorted(v) for k, v in holders.items()})
    assert all(len(h) == 2 for h in holders.values()), holders
    assert len({frozenset(h) for h in holders.values()}) >= 2, holders
    (merged,) = redis_call(ip, 11212, ("MGET", *keys))
    assert merged == values


# ---------------------------------------------------------------- the overlay's release


def test_two_middlewares_on_the_a4_node_each_serve(
    real_cluster: LocalCluster, overlay_release: str
) -> None:
    mws = pods(real_cluster, overlay_release, "app.kubernetes.io/component=middleware")
    assert len(mws) == 2, [p["metadata"]["name"] for p in mws]
    for pod in mws:
        assert real_cluster.node_pool(pod["spec"]["nodeName"]) == "a4", pod["spec"]["nodeName"]
        value = f"{pod['metadata']['name']}-{time.time_ns()}".encode()
        request = b"set mw-own 0 60 %d\r\n%s\r\nget mw-own\r\n" % (len(value), value)
        reply = memcache_exchange(pod["status"]["podIP"], 11212, request, b"END\r\n")
        assert reply == b"STORED\r\nVALUE mw-own 0 %d\r\n%s\r\nEND\r\n" % (len(value), value)
        print(f"{pod['metadata']['name']} on {pod['spec']['nodeName']}: set/get ok")


def summary_rows(results: Path) -> list[dict[str, str]]:
    with (results / "summary.csv").open() as f:
        return list(csv.DictReader(f))


def memcached_gets(ip: str) -> int:
    reply = memcache_exchange(ip, 11211, b"stats\r\n", b"END\r\n").decode()
    (gets,) = re.findall(r"^STAT cmd_get (\d+)\r$", reply, re.MULTILINE)
    return int(gets)


def test_a_sharded_multi_get_is_split_over_the_three_servers(
    real_cluster: LocalCluster, overlay_release: str
) -> None:
    """sharded: true (the overlay's release): a 9-key get through one middleware reaches every
    server (3 keys each) and returns every value in the client's order; the round-robin
    writes put each SET on all three servers."""
    servers = sorted(
        pods(real_cluster, overlay_release, "app.kubernetes.io/component=memcached"),
        key=lambda p: p["metadata"]["name"],
    )
    assert len({p["spec"]["nodeName"] for p in servers}) == 3
    ip = service_ip(real_cluster, overlay_release)
    keys = [f"shard-{i}" for i in range(9)]
    request = b"".join(b"set %s 0 60 2\r\nv%d\r\n" % (k.encode(), i) for i, k in enumerate(keys))
    stored = memcache_exchange(ip, 11212, request, b"STORED\r\n" * 9)
    assert stored == b"STORED\r\n" * 9
    for pod in servers:  # every server holds every key
        reply = memcache_exchange(pod["status"]["podIP"], 11211, b"get shard-4\r\n", b"END\r\n")
        assert reply == b"VALUE shard-4 0 2\r\nv4\r\nEND\r\n", pod["metadata"]["name"]
    before = [memcached_gets(p["status"]["podIP"]) for p in servers]
    (mw, *_) = pods(real_cluster, overlay_release, "app.kubernetes.io/component=middleware")
    reply = memcache_exchange(
        mw["status"]["podIP"], 11212, b"get " + " ".join(keys).encode() + b"\r\n", b"END\r\n"
    )
    want = b"".join(b"VALUE %s 0 2\r\nv%d\r\n" % (k.encode(), i) for i, k in enumerate(keys))
    assert reply == want + b"END\r\n"
    after = [memcached_gets(p["status"]["podIP"]) for p in servers]
    split = [a - b for a, b in zip(after, before, strict=True)]
    print(f"9-key get split over the servers: {split}")
    assert split == [3, 3, 3], split


def test_an_overlay_applied_before_its_release_fails_naming_what_to_install(
    real_cluster: LocalCluster, unreleased: float
) -> None:
    """The Job's pod fails after RELEASE_WAIT_S, its log and its termination message (shown by
    `kubectl describe pod`) name the helm command of the overlay."""

    def failed() -> dict[str, Any] | None:
        job = real_cluster.get("job", "-n", UNRELEASED_NS, "preload")
        conditions = {c["type"]: c["status"] for c in job["status"].get("conditions", [])}
        return job if conditions.get("Failed") == "True" else None

    wait_for("the preload Job without a release to fail", failed, timeout_s=240)
    print(f"failed {time.monotonic() - unreleased:.0f} s after kubectl apply")
    hint = (
        "Install it first: helm upgrade --install testbed charts/testbed -f "
        f"manifests/overlays/{UNRELEASED_OVERLAY.name}/testbed-values.yaml --wait"
    )
    log = real_cluster.kubectl("logs", "-n", UNRELEASED_NS, "job/preload")
    line = "no testbed release in this namespace: testbed-middleware does not resolve after 60s."
    assert f"{line} {hint}" in log, log
    (pod,) = pods(real_cluster, UNRELEASED_NS, "batch.kubernetes.io/job-name=preload")
    message = pod["status"]["containerStatuses"][0]["state"]["terminated"]["message"]
    assert hint in message, message
    describe = real_cluster.kubectl("describe", "pod", "-n", UNRELEASED_NS, pod["metadata"]["name"])
    assert hint in describe
    real_cluster.kubectl("delete", "namespace", UNRELEASED_NS, "--wait=false")


def test_the_shipped_three_client_overlay_runs_unmodified_and_is_collected(
    real_cluster: LocalCluster, overlay_release: str, tmp_path: Path, cachelab: Cachelab
) -> None:
    """`kubectl apply -k` of the overlay as shipped (its images from the cluster's registry, as
    the image-registry component sets them): the preload completes, the benchmark's three
    pods run on the three a2 nodes and pass the start barrier together, and `cachelab collect`
    and `cachelab report` turn their logs into a results folder with six loadgen instances."""
    ns = overlay_release
    started = time.monotonic()
    real_cluster.kubectl("apply", "-n", ns, "-k", from_cluster_registry(OVERLAY, tmp_path / "k"))
    real_cluster.kubectl(
        "wait", "-n", ns, "--for=condition=complete", "job/preload", "--timeout=300s",
        timeout_s=330,
    )  # fmt: skip
    preload_s = time.monotonic() - started
    real_cluster.kubectl(
        "patch", "-n", ns, "job/benchmark", "--type=merge", "-p", '{"spec":{"suspend":false}}'
    )
    real_cluster.kubectl(
        "wait", "-n", ns, "--for=condition=complete", "job/benchmark", "--timeout=300s",
        timeout_s=330,
    )  # fmt: skip
    print(f"preload {preload_s:.0f} s, benchmark {time.monotonic() - started - preload_s:.0f} s")
    bench = pods(real_cluster, ns, "batch.kubernetes.io/job-name=benchmark")
    nodes = sorted(p["spec"]["nodeName"] for p in bench)
    print(f"benchmark pods on {nodes}")
    assert len(set(nodes)) == 3 and {real_cluster.node_pool(n) for n in nodes} == {"a2"}
    passed, up = [], []
    for pod in bench:
        log = real_cluster.kubectl("logs", "-n", ns, pod["metadata"]["name"], "--timestamps")
        (line,) = [x for x in log.splitlines() if "barrier passed: 3 machines up" in x]
        passed.append(datetime.fromisoformat(line.split(" ", 1)[0].replace("Z", "+00:00")))
        (status,) = pod["status"]["containerStatuses"]
        up.append(datetime.fromisoformat(status["state"]["terminated"]["startedAt"]))
    spread_s = (max(passed) - min(passed)).total_seconds()
    print(f"start barrier passed within {spread_s:.1f} s on the three machines")
    # a barrier: no machine passed it before the last of them had started (startedAt is cut
    # to the second, so it is never later than the start); how close together they passed
    # depends on DNS polls on a busy machine, and is printed
    assert min(passed) >= max(up), (passed, up)

    code, out = cachelab("collect", "-n", ns, "--results", str(tmp_path / "r"))
    assert code == 0, out
    (summary,) = (tmp_path / "r").rglob("summary.csv")
    results = summary.parent
    loadgens = sorted(results.rglob("loadgen-*.json"))
    assert len(loadgens) == 6, loadgens  # 3 machines x 2 instances
    starts = []
    for path in loadgens:
        data = json.loads(path.read_text())
        starts.append(data["ALL STATS"]["Runtime"]["Start time"])
        assert float(data["ALL STATS"]["Totals"]["Ops/sec"]) > 0, path
    print(f"loadgen instances started within {(max(starts) - min(starts)) / 1000:.1f} s")
    code, out = cachelab("report", str(results))
    assert code == 0, out
    assert list(results.rglob("index.html")), sorted(results.iterdir())
    (row,) = summary_rows(results)
    print({k: row[k] for k in ("status", "throughput_ops_per_s", "p50_ms", "misses")})
    assert row["status"] == "ok" and float(row["throughput_ops_per_s"]) > 0, row
    real_cluster.kubectl("delete", "-n", ns, "job", "preload", "benchmark")


def test_cachelab_run_target_k8s_of_an_asl2017_spec_on_three_client_nodes(
    real_cluster: LocalCluster, overlay_release: str, tmp_path: Path, cachelab: Cachelab
) -> None:
    """asl17-writes (§4.1: 3 client machines x 2 instances -> 2 middlewares -> 3 servers), one
    point shortened with --only and --set, with the options --values and --loadgen."""
    spec = ROOT / "ops" / "experiments" / "asl17-writes.yaml"
    started = time.monotonic()
    code, out = cachelab(
        "run", str(spec), "--target", "k8s", "--results", str(tmp_path / "r"),
        "--values", str(LOCAL_VALUES), "--loadgen", "cachelab", "--only", "0",
        "--set", "run.repetitions=1", "--set", "run.duration_s=6", "--set", "run.warmup_s=1",
        "--set", "run.cooldown_s=1", "--set", "workload.key_maximum=1000",
    )  # fmt: skip
    print(out[-3000:])
    print(f"cachelab run --target k8s: 1 point in {time.monotonic() - started:.1f} s")
    assert code == 0
    (results,) = (tmp_path / "r" / "asl17-writes").iterdir()
    (row,) = summary_rows(results)
    print(
        {
            k: row.get(k)
            for k in ("status", "throughput_ops_per_s", "p50_ms", "cpu_middleware_cores")
        }
    )
    assert row["status"] == "ok" and float(row["throughput_ops_per_s"]) > 0, row
    assert len(list(results.rglob("loadgen-*.json"))) == 6
    mws = pods(real_cluster, overlay_release, "app.kubernetes.io/component=middleware")
    assert len(mws) == 2 and {real_cluster.node_pool(p["spec"]["nodeName"]) for p in mws} == {"a4"}
    bench = pods(real_cluster, overlay_release, "app.kubernetes.io/component=benchmark")
    assert len({p["spec"]["nodeName"] for p in bench}) == 3
    assert {real_cluster.node_pool(p["spec"]["nodeName"]) for p in bench} == {"a2"}


def test_locust_master_and_workers_on_the_client_nodes_count_requests(
    real_cluster: LocalCluster, overlay_release: str, tmp_path: Path
) -> None:
    """The shipped locust overlay (the project's locust image), shortened to 10 s and 1,000 keys
    by a kustomization on top of it: the master (index 0) and its two workers run on the three a2
    nodes, and the master's final stats count requests, which in distributed mode only the
    workers make."""
    ns = overlay_release
    real_cluster.kubectl("delete", "-n", ns, "job", "preload", "benchmark", "--ignore-not-found")
    short = tmp_path / "locust-short"
    short.mkdir()
    moved = from_cluster_registry(MANIFESTS / "overlays" / "locust-distributed", tmp_path / "k")
    base = os.path.relpath(moved, short)
    (short / "kustomization.yaml").write_text(
        yaml.safe_dump({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": [base],
            "configMapGenerator": [{
                "name": "benchmark-config", "behavior": "merge",
                "literals": ["DURATION_S=10", "KEY_MAXIMUM=1000"],
            }],
        })
    )  # fmt: skip
    real_cluster.kubectl("apply", "-n", ns, "-k", short)
    for job, patch in (("preload", False), ("benchmark", True)):
        if patch:
            real_cluster.kubectl(
                "patch", "-n", ns, f"job/{job}", "--type=merge", "-p", '{"spec":{"suspend":false}}'
            )
        real_cluster.kubectl(
            "wait", "-n", ns, "--for=condition=complete", f"job/{job}", "--timeout=240s",
            timeout_s=270,
        )  # fmt: skip
    bench = {
        int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]): p
        for p in pods(real_cluster, ns, "batch.kubernetes.io/job-name=benchmark")
    }
    assert sorted(bench) == [0, 1, 2]
    nodes = {i: p["spec"]["nodeName"] for i, p in bench.items()}
    print(f"locust master on {nodes[0]}, workers on {nodes[1]} and {nodes[2]}")
    assert len(set(nodes.values())) == 3
    assert {real_cluster.node_pool(n) for n in nodes.values()} == {"a2"}
    registry = yaml.safe_load(LOCAL_VALUES.read_text())["global"]["imageRegistry"]
    assert all(p["spec"]["containers"][0]["image"].startswith(f"{registry}/locust:")
               for p in bench.values())  # fmt: skip
    log = real_cluster.kubectl("logs", "-n", ns, bench[0]["metadata"]["name"])
    (block,) = [b for b in result_blocks(log) if b.machine == "0"]
    stats = json.loads(block.text)
    requests = sum(int(s["num_requests"]) for s in stats)
    failures = sum(int(s["num_failures"]) for s in stats)
    print(f"locust: {requests} requests, {failures} failures in 10 s from 2 workers")
    assert requests > 0 and failures == 0, stats
