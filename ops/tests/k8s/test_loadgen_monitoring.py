"""Tier 4: the cachelab loadgen's metrics on a cluster. The benchmark Job of the loadgen-cachelab
component declares one named metrics port per instance and passes `--metrics-port`; the
monitoring-loadgen component's PodMonitor is accepted by the API server once the PodMonitor CRD
exists (data/podmonitor-crd.yaml, removed again afterwards so that the chart's `auto`
ServiceMonitors stay off in the other tests), and selects the benchmark pods kwok creates, whose
labels give the `release` the dashboards select on. The chart's NetworkPolicy lets scrapers reach
those ports. Without the CRD, loadgen-cachelab alone still applies (no PodMonitor in it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import Cluster
from .kube import wait_for
from .test_manifests import build, config_of
from .tools import CHART, MANIFESTS, run, tool

pytestmark = pytest.mark.k8s

CRD = Path(__file__).parent / "data" / "podmonitor-crd.yaml"
CRD_NAME = "podmonitors.monitoring.coreos.com"
MACHINES = 2


def experiment(folder: Path, *components: str) -> Path:
    """A kustomization in `folder`: the base, the given components, two client machines with
    two loadgen instances each."""
    base = os.path.relpath(MANIFESTS / "base", folder)
    comps = [
        os.path.relpath(MANIFESTS / "components" / c, folder)
        for c in ("clients-pool-a2", "target-middleware", *components)
    ]
    doc = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [base],
        "components": comps,
        "configMapGenerator": [
            {
                "name": "benchmark-config",
                "behavior": "merge",
                "literals": [f"CLIENT_MACHINES={MACHINES}", "INSTANCES=2"],
            }
        ],
        "patches": [
            {
                "target": {"kind": "Job"},
                "patch": yaml.safe_dump(
                    [
                        {"op": "replace", "path": "/spec/completions", "value": MACHINES},
                        {"op": "replace", "path": "/spec/parallelism", "value": MACHINES},
                    ]
                ),
            }
        ],
    }
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


def loadgen_container(job: dict[str, Any]) -> dict[str, Any]:
    containers: list[dict[str, Any]] = job["spec"]["template"]["spec"]["containers"]
    (container,) = [c for c in containers if c["name"] == "loadgen"]
    return container


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


@pytest.fixture
def podmonitor_crd(cluster: Cluster) -> Iterator[None]:
    cluster.kubectl("apply", "-f", CRD)
    try:
        cluster.kubectl("wait", "--for=condition=established", f"crd/{CRD_NAME}", "--timeout=60s")
        yield
    finally:
        cluster.kubectl("delete", "crd", CRD_NAME, "--wait=true", "--timeout=60s", check=False)
        wait_for(
            "the monitoring.coreos.com API to go away",
            lambda: "monitoring.coreos.com" not in cluster.kubectl("api-versions", check=False),
            timeout_s=60,
        )


def test_loadgen_cachelab_alone_applies_without_the_crd(cluster: Cluster, tmp_path: Path) -> None:
    path = experiment(tmp_path, "loadgen-cachelab")
    docs = build(path)
    assert "PodMonitor" not in {d["kind"] for d in docs}
    namespace = cluster.namespace("loadgen-metrics-nocrd")
    try:
        cluster.kubectl("apply", "-n", namespace, "--dry-run=server", "-k", path)
    finally:
        cluster.delete_namespace(namespace)


def test_memtier_gets_no_metrics_port(tmp_path: Path) -> None:
    docs = build(experiment(tmp_path, "loadgen-memtier"))
    config = config_of(docs)
    assert config["LOADGEN"] == "memtier" and config["METRICS_PORT"] == ""
    job = next(d for d in docs if d["kind"] == "Job" and d["metadata"]["name"] == "benchmark")  # type: ignore[index]
    assert "ports" not in loadgen_container(job)


@pytest.mark.usefixtures("podmonitor_crd")
def test_podmonitor_selects_the_benchmark_pods_and_their_metrics_ports(
    cluster: Cluster, tmp_path: Path
) -> None:
    path = experiment(tmp_path, "loadgen-cachelab", "monitoring-loadgen")
    config = config_of(build(path))
    assert config["LOADGEN"] == "cachelab"
    first, count = int(config["METRICS_PORT"]), int(config["METRICS_PORTS"])
    assert count >= int(config["INSTANCES"])
    namespace = cluster.namespace("loadgen-metrics")
    try:
        cluster.kubectl("apply", "-n", namespace, "--dry-run=server", "-k", path)
        cluster.kubectl("apply", "-n", namespace, "-k", path)

        # The Job: one named port per instance, METRICS_PORT + j; the script passes the flag.
        job = cluster.get("job/benchmark", "-n", namespace)
        ports = {p["name"]: p["containerPort"] for p in loadgen_container(job)["ports"]}
        assert ports == {f"metrics-{j}": first + j for j in range(count)}
        scripts = cluster.get("configmaps", "-n", namespace)
        script = next(
            cm["data"]["run-benchmark.sh"]
            for cm in scripts["items"]
            if cm["metadata"]["name"].startswith("benchmark-scripts")
        )
        assert "--metrics-port=$((metrics_base + j))" in script

        # The PodMonitor, as the API server stored it.
        monitor = cluster.get("podmonitor/benchmark-loadgen", "-n", namespace)
        selector = monitor["spec"]["selector"]["matchLabels"]
        endpoints = monitor["spec"]["podMetricsEndpoints"]
        assert sorted(e["port"] for e in endpoints) == sorted(ports)
        for e in endpoints:
            assert e["interval"] == "15s"  # the chart's monitoring.serviceMonitors.interval
            targets = {r["targetLabel"]: r for r in e["relabelings"]}
            assert targets["release"]["sourceLabels"] == [
                "__meta_kubernetes_pod_label_app_kubernetes_io_instance"
            ]
            assert targets["job"]["replacement"] == "loadgen"

        # Release the benchmark; kwok creates its pods, which the PodMonitor must select.
        cluster.kubectl(
            "patch",
            "-n",
            namespace,
            "job/benchmark",
            "--type=merge",
            "-p",
            '{"spec":{"suspend":false}}',
        )
        label_selector = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        pods = wait_for(
            f"{MACHINES} pods selected by the PodMonitor",
            lambda: (
                items
                if len(items := cluster.get("pods", "-n", namespace, "-l", label_selector)["items"])
                == MACHINES
                else None
            ),
        )
        chart_policy = next(
            d
            for d in yaml.safe_load_all(
                run(
                    [
                        tool("helm"),
                        "template",
                        "testbed",
                        CHART,
                        "-s",
                        "templates/networkpolicy.yaml",
                    ]
                ).stdout
            )
            if d and d["metadata"]["name"] == "testbed-loadgen-metrics"
        )
        (rule,) = chart_policy["spec"]["ingress"]
        (allowed,) = rule["ports"]
        release = config["MIDDLEWARE_HOST"].removesuffix("-middleware")
        for pod in pods:
            labels = pod["metadata"]["labels"]
            assert labels["batch.kubernetes.io/job-name"] == "benchmark"
            assert labels["app.kubernetes.io/instance"] == release  # -> `release` of the panels
            assert matches(chart_policy["spec"]["podSelector"]["matchLabels"], labels)
            (container,) = pod["spec"]["containers"]
            for p in container["ports"]:
                assert allowed["port"] <= p["containerPort"] <= allowed["endPort"], p
        # Neither the preload nor the memtier pods carry the metrics label.
        preload = cluster.get("pods", "-n", namespace, "-l", "batch.kubernetes.io/job-name=preload")
        assert all(not matches(selector, p["metadata"]["labels"]) for p in preload["items"])
    finally:
        cluster.delete_namespace(namespace)
