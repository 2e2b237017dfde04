"""Utilisation of a Kubernetes run from the kubelets' summary API: each pod's CPU into cpu.csv
(the local runner's format, read by the same code that makes the report's CPU columns and
bottlenecks) and each node's pod network bytes into net.csv. The summaries here are in the
kubelet's stats/summary layout, with figures made up for the test."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from cachelab.k8s.kube import K8sError
from cachelab.k8s.usage import UsageSampler
from cachelab.results.cpu import measured_cpu, read_cpu_samples
from cachelab.results.trim import MeasuredInterval

T0_MS = 1_790_000_000_000.0


def _stamp(ms: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat().replace("+00:00", "Z")


def pod(name: str, node: str, component: str, *cpu_limits: str) -> dict[str, Any]:
    """A pod of a role; one container per CPU limit given ("" for a container without one)."""
    containers = [{"resources": {"limits": {"cpu": c}} if c else {}} for c in cpu_limits]
    return {
        "metadata": {"name": name, "labels": {"app.kubernetes.io/component": component}},
        "spec": {"nodeName": node, "containers": containers},
    }


def summary(t_ms: float, *pods: tuple[str, float, int, int]) -> str:
    """A node's stats/summary: (pod name, CPU seconds, rx bytes, tx bytes) per pod."""
    return json.dumps(
        {
            "node": {"nodeName": "n"},
            "pods": [
                {
                    "podRef": {"name": name, "namespace": "exp", "uid": name},
                    "cpu": {"time": _stamp(t_ms), "usageCoreNanoSeconds": int(cpu_s * 1e9)},
                    "network": {"name": "eth0", "rxBytes": rx, "txBytes": tx},
                }
                for name, cpu_s, rx, tx in pods
            ],
        }
    )


class FakeKube:
    """The two calls the sampler makes, answered from canned summaries per node."""

    def __init__(self, nodes: dict[str, dict[str, Any]]) -> None:
        self.nodes = nodes
        self.summaries: dict[str, str] = {}

    def get(self, kind: str, name: str) -> dict[str, Any]:
        assert kind == "node"
        meta = {k: v for k, v in self.nodes[name].items() if k != "allocatable"}
        return {"metadata": meta, "status": {"allocatable": self.nodes[name].get("allocatable")}}

    def get_raw(self, path: str) -> str:
        node = path.split("/")[4]
        if node not in self.summaries:
            raise K8sError(f"no summary of {node}")
        return self.summaries[node]


class Clock:
    def __init__(self) -> None:
        self.now_s = T0_MS / 1000

    def __call__(self) -> float:
        return self.now_s


def test_pod_cpu_and_node_network_are_sampled_into_the_run_folder(tmp_path: Path) -> None:
    kube = FakeKube(
        {
            "a2-0": {"labels": {"agentpool": "a2"}, "allocatable": {"cpu": "200m"}},
            "a4-0": {"labels": {"agentpool": "a4"}, "allocatable": {"cpu": "800m"}},
            "kwok-0": {"labels": {}, "annotations": {"kwok.x-k8s.io/node": "fake"}},
        }
    )
    pods = [
        pod("benchmark-0-x", "a2-0", "benchmark", ""),  # no limit: its node's allocatable
        pod("testbed-middleware-1", "a4-0", "middleware", "1"),
        pod("testbed-memcached-0", "a4-0", "memcached", "100m", "50m"),  # with an exporter
        pod("testbed-test", "kwok-0", "test"),
    ]
    clock = Clock()
    sampler = UsageSampler(kube, tmp_path, lambda: pods, clock=clock)  # type: ignore[arg-type]
    for second in range(11):
        t_ms = T0_MS + second * 1000
        kube.summaries["a2-0"] = summary(t_ms, ("benchmark-0-x", 0.9 * second, 0, 100 * second))
        kube.summaries["a4-0"] = summary(
            t_ms - 500,  # the kubelet's figures are older than the question
            ("testbed-middleware-1", 1.5 * second, 100 * second, 60 * second),
            ("testbed-memcached-0", 0.25 * second, 60 * second, 0),
            ("not-ours", 5.0 * second, 7, 7),  # another pod on the node (an exporter): not counted
        )
        sampler.poll()
        sampler.poll()  # within the period: no second sample
        clock.now_s += 1.0
    sampler.close()

    samples = read_cpu_samples(tmp_path / "cpu.csv")
    assert {(s.role, s.name) for s in samples} == {
        ("loadgen", "benchmark-0-x"),
        ("middleware", "testbed-middleware-1"),
        ("server", "testbed-memcached-0"),
    }
    assert len(samples) == 3 * 11
    interval = MeasuredInterval.of_run(1, 1, 10)
    cores = {p.name: p.cores for p in measured_cpu(samples, T0_MS, interval)}
    assert cores == pytest.approx(
        {"benchmark-0-x": 0.9, "testbed-middleware-1": 1.5, "testbed-memcached-0": 0.25}
    )
    rows = list(csv.DictReader((tmp_path / "net.csv").open()))
    assert [(r["node"], r["pool"]) for r in rows[:2]] == [("a2-0", "a2"), ("a4-0", "a4")]
    last = {r["node"]: r for r in rows[-2:]}
    assert (last["a4-0"]["rx_bytes"], last["a4-0"]["tx_bytes"]) == ("1600", "600")
    assert sampler.errors == ["node kwok-0 is simulated by kwok: no kubelet statistics"]
    assert sampler.cpu_limits == pytest.approx(
        {"benchmark-0-x": 0.2, "testbed-middleware-1": 1.0, "testbed-memcached-0": 0.15}
    )


def test_a_k8s_runs_cpu_makes_the_summary_columns_and_the_bottleneck_rows(
    tmp_path: Path,
) -> None:
    """The recorded quickstart results with each run's cpu.csv replaced by what the sampler
    writes for pods using 0.8 (loadgen), 0.6 (middleware) and 3 x 0.1 (servers) cores, with
    their CPU caps in point.json as the runner records them (the servers' 0.105 cores): each
    pod's CPU is over its cap, the loadgen's and middleware's pods are stations, and the
    servers, 95 % of their cap, are the bottleneck, as on the local cluster's a1 nodes."""
    import shutil

    from cachelab.report import build_report
    from cachelab.results.run import client_stats
    from cachelab.summary import build_summary

    results = tmp_path / "results"
    shutil.copytree(Path(__file__).parent / "data" / "results-recorded-quickstart", results)
    cores = {"benchmark-0-x": 0.8, "testbed-middleware-0": 0.6}
    cores |= {f"testbed-memcached-{k}": 0.1 for k in range(3)}
    components = {"benchmark-0-x": "benchmark", "testbed-middleware-0": "middleware"}
    limits = {"benchmark-0-x": "2", "testbed-middleware-0": "8"}
    pods = [
        pod(name, "a4-0", components.get(name, "memcached"), limits.get(name, "105m"))
        for name in cores
    ]
    for run_dir in sorted((results / "raw").iterdir()):
        record = json.loads((run_dir / "point.json").read_text())
        record["target"] = "k8s"
        (run_dir / "point.json").write_text(json.dumps(record))
        interval = MeasuredInterval.of_run(2, 2, 10)
        origin_ms = client_stats(run_dir / "loadgen-0.json", interval).start_epoch_ms
        assert origin_ms is not None
        kube = FakeKube({"a4-0": {"labels": {"agentpool": "a4"}}})
        clock = Clock()
        clock.now_s = origin_ms / 1000 - 1
        sampler = UsageSampler(kube, run_dir, lambda: pods, clock=clock)  # type: ignore[arg-type]
        for second in range(13):
            t_ms = origin_ms + (second - 1) * 1000
            kube.summaries["a4-0"] = summary(
                t_ms, *((name, c * second, 0, 0) for name, c in cores.items())
            )
            sampler.poll()
            clock.now_s += 1.0
        sampler.close()
        record["usage"] = {"cpu_limit_cores": sampler.cpu_limits}
        (run_dir / "point.json").write_text(json.dumps(record))
    build_summary(results)
    build_report(results)
    rows = list(csv.DictReader((results / "summary.csv").open()))
    for row in rows:
        assert float(row["cpu_loadgen_cores"]) == pytest.approx(0.8)
        assert float(row["cpu_middleware_cores"]) == pytest.approx(0.6)
        assert float(row["cpu_server_cores"]) == pytest.approx(0.3)
    found = list(csv.DictReader((results / "report" / "bottlenecks.csv").open()))
    stages = {r["stage"]: r for r in found if r["point"] == "0"}
    assert "cpu testbed-middleware-0" in stages and "cpu benchmark-0-x" in stages
    assert float(stages["cpu benchmark-0-x"]["utilisation_frac"]) == pytest.approx(0.4)
    assert float(stages["pod CPU loadgen"]["utilisation_frac"]) == pytest.approx(0.4)
    assert float(stages["pod CPU middleware"]["utilisation_frac"]) == pytest.approx(0.075)
    server = stages["backend testbed-memcached-0"]
    assert float(server["servers"]) == pytest.approx(0.105)
    assert float(server["utilisation_frac"]) == pytest.approx(0.1 / 0.105)
    assert "host CPU" not in stages  # the pods are not on one shared host
    assert {r["stage"] for r in found if r["bottleneck"] == "True"} == {
        "backend testbed-memcached-0"
    }


def test_the_latency_sidecars_cpu_is_its_own_role_not_the_pods(tmp_path: Path) -> None:
    """A pod with the chart's toxiproxy sidecar: its CPU less the sidecar's is the server's,
    the sidecar's is role toxiproxy (as a local run's toxiproxy-server), each with its own cap."""
    kube = FakeKube({"a1-0": {"labels": {"agentpool": "a1"}, "allocatable": {"cpu": "88m"}}})
    server = pod("testbed-memcached-0", "a1-0", "memcached", "88m", "500m")
    server["spec"]["containers"][0]["name"] = "memcached"
    server["spec"]["containers"][1]["name"] = "toxiproxy"
    clock = Clock()
    sampler = UsageSampler(kube, tmp_path, lambda: [server], clock=clock)  # type: ignore[arg-type]
    for second in range(11):
        t_ms = T0_MS + second * 1000
        stats = json.loads(summary(t_ms, ("testbed-memcached-0", 0.05 * second, 0, 0)))
        stats["pods"][0]["containers"] = [
            {"name": "memcached", "cpu": {"usageCoreNanoSeconds": int(0.03 * second * 1e9)}},
            {"name": "toxiproxy", "cpu": {"usageCoreNanoSeconds": int(0.02 * second * 1e9)}},
        ]
        kube.summaries["a1-0"] = json.dumps(stats)
        sampler.poll()
        clock.now_s += 1.0
    sampler.close()

    samples = read_cpu_samples(tmp_path / "cpu.csv")
    assert {(s.role, s.name) for s in samples} == {
        ("server", "testbed-memcached-0"),
        ("toxiproxy", "testbed-memcached-0/toxiproxy"),
    }
    interval = MeasuredInterval.of_run(1, 1, 10)
    cores = {p.name: p.cores for p in measured_cpu(samples, T0_MS, interval)}
    assert cores == pytest.approx(
        {"testbed-memcached-0": 0.03, "testbed-memcached-0/toxiproxy": 0.02}
    )
    assert sampler.cpu_limits == pytest.approx(
        {"testbed-memcached-0": 0.088, "testbed-memcached-0/toxiproxy": 0.5}
    )


def _shaped(name: str, node: str, component: str, egress: str | None) -> dict[str, Any]:
    found = pod(name, node, component, "1")
    if egress is not None:
        found["metadata"]["annotations"] = {"kubernetes.io/egress-bandwidth": egress}
    return found


def test_the_pods_egress_limits_are_links_with_the_bytes_each_pod_sent(tmp_path: Path) -> None:
    """asl2017 on the cluster: servers 100M, the middleware 700M, each load generator 200M; the
    links as a local run names them, the load generators' pods one link at their rates summed,
    their bytes counted from the first sample, not from the pod's start."""
    kube = FakeKube({"n": {"labels": {"agentpool": "a2"}, "allocatable": {"cpu": "2"}}})
    pods = [
        _shaped("benchmark-0-x", "n", "benchmark", "200M"),
        _shaped("benchmark-1-y", "n", "benchmark", "200M"),
        _shaped("testbed-middleware-7f-a", "n", "middleware", "700M"),
        _shaped("testbed-memcached-10", "n", "memcached", "100M"),
        _shaped("testbed-memcached-9", "n", "memcached", "0.1G"),
        _shaped("testbed-memcached-2", "n", "memcached", None),  # not shaped: no link
    ]
    clock = Clock()
    sampler = UsageSampler(kube, tmp_path, lambda: pods, clock=clock)  # type: ignore[arg-type]
    for second in range(4):
        t_ms = T0_MS + second * 1000
        kube.summaries["n"] = summary(
            t_ms,
            ("benchmark-0-x", 0.1, 0, 5_000 + 60 * second),
            ("benchmark-1-y", 0.1, 0, 9_000 + 40 * second),
            ("testbed-middleware-7f-a", 0.5, 0, 1_000 * second),
            ("testbed-memcached-10", 0.1, 0, 3_000 + 1_124 * second),
            ("testbed-memcached-9", 0.1, 0, 2_000 * second),
            ("testbed-memcached-2", 0.1, 0, 7 * second),
        )
        sampler.poll()
        clock.now_s += 1.0
    sampler.close()
    assert sampler.links() == [
        {"name": "server-0 out", "pod": "testbed-memcached-9", "mbit": 100.0, "sent_bytes": 6_000},
        {"name": "server-1 out", "pod": "testbed-memcached-10", "mbit": 100.0, "sent_bytes": 3_372},
        {
            "name": "middleware-0 out", "pod": "testbed-middleware-7f-a", "mbit": 700.0,
            "sent_bytes": 3_000,
        },
        {
            "name": "clients -> middlewares", "pod": "benchmark-0-x,benchmark-1-y", "mbit": 400.0,
            "sent_bytes": 300,
        },
    ]  # fmt: skip


def test_an_egress_annotation_is_read_as_the_bandwidth_plugin_reads_it() -> None:
    from cachelab.k8s.usage import egress_mbit

    def rate(text: str) -> float | None:
        return egress_mbit(_shaped("p", "n", "memcached", text))

    assert [rate(t) for t in ("100M", "1G", "250000k", "1Mi", "5e6")] == pytest.approx(
        [100.0, 1000.0, 250.0, 1.048576, 5.0]
    )
    assert [rate(t) for t in ("", "fast", "-1M", "0")] == [None] * 4
    assert egress_mbit(pod("p", "n", "memcached")) is None
