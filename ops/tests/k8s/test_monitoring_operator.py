"""Tier 4: monitoring as kube-prometheus-stack does it, on kwok. The Prometheus Operator's own
CRDs (v0.85.0, example/prometheus-operator-crd of its module, copied by `make k8s-tools`) install,
manifests/monitoring (the operator, a `Prometheus` selecting `release: kps`, node exporter,
the kubelets' cAdvisor) is accepted by the API server, and the chart's ServiceMonitors and the
loadgen's PodMonitor carry the label that Prometheus selects, while a release installed with
`monitoring.serviceMonitors.labels.release: testbed` (the testbed's release name in place of the
monitoring release's, the classic mislabelled monitor) is reported by the
check behind `make monitoring-check`. Then the operator built by `make k8s-tools` runs as a
process against the kwok API server and does what it does in a cluster: it turns the `Prometheus`
into the StatefulSet prometheus-kps (our images) and writes the scrape configuration it
discovered into the Secret prometheus-kps, which holds a job for each labelled monitor, the node
exporter and the kubelets' cAdvisor, and none for the mislabelled release. kwok runs no
containers, so nothing is scraped here; the CRDs are deleted at the end so that the chart's `auto`
ServiceMonitors stay off in other tests."""

from __future__ import annotations

import base64
import gzip
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from .conftest import Cluster
from .kube import wait_for
from .tools import MANIFESTS, ROOT, TOOLS_BIN, tool

pytestmark = pytest.mark.k8s

CRDS = TOOLS_BIN.parent / "prometheus-operator-crd"


def check(cluster: Cluster) -> subprocess.CompletedProcess[str]:
    """`make monitoring-check` against the kwok cluster."""
    return subprocess.run(
        [sys.executable, "-m", "cachelab.k8s.monitors"],
        env={**os.environ, **cluster.env},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT / "ops",
        check=False,
    )


@contextmanager
def operator(cluster: Cluster, workdir: Path) -> Iterator[None]:
    """The operator as a process on loopback, bound to the kwok cluster."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (workdir / "operator.log").open("w")
    proc = subprocess.Popen(
        [
            tool("prometheus-operator"),
            f"--web.listen-address=127.0.0.1:{port}",
            "--kubelet-service=kube-system/kubelet",
            "--prometheus-config-reloader=cachelab.local/prometheus-operator:0.85.0",
        ],
        env={**os.environ, **cluster.env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def scrape_jobs(cluster: Cluster) -> list[str] | None:
    """The job names of the configuration the operator generated (None: not written yet)."""
    found = cluster.get("secrets", "-n", "monitoring")["items"]
    secret = next((x for x in found if x["metadata"]["name"] == "prometheus-kps"), None)
    if secret is None or "prometheus.yaml.gz" not in secret.get("data", {}):
        return None
    config = yaml.safe_load(gzip.decompress(base64.b64decode(secret["data"]["prometheus.yaml.gz"])))
    return [job["job_name"] for job in config.get("scrape_configs") or []]


def test_the_chart_monitors_carry_the_label_the_operators_prometheus_selects(
    cluster: Cluster, tmp_path: Path
) -> None:
    assert CRDS.is_dir(), f"{CRDS} is missing: run `make k8s-tools`"
    crds = sorted(CRDS.glob("*.yaml"))
    assert len(crds) == 10, crds
    good = cluster.namespace("monitored")
    bad = cluster.namespace("mislabelled")
    try:
        cluster.kubectl("apply", "--server-side", "-f", CRDS, timeout_s=180)
        cluster.kubectl(
            "wait", "--for=condition=Established", "--timeout=60s", "-f", CRDS, timeout_s=90
        )
        cluster.kubectl("apply", "-k", MANIFESTS / "monitoring")
        prometheus = cluster.get("prometheus/kps", "-n", "monitoring")
        for field in ("serviceMonitorSelector", "podMonitorSelector", "ruleSelector"):
            assert prometheus["spec"][field] == {"matchLabels": {"release": "kps"}}, field
        wait_for(
            "the node exporter on every node",
            lambda: (
                (ds := cluster.get("daemonset/node-exporter", "-n", "monitoring"))["status"].get(
                    "desiredNumberScheduled", 0
                )
                > 0
                and ds
            ),
        )
        assert check(cluster).returncode == 0  # node-exporter and kubelet monitors: selected

        cluster.install(good, ROOT / "charts" / "testbed" / "values.yaml")
        mislabelled = tmp_path / "mislabelled.yaml"
        mislabelled.write_text("monitoring:\n  serviceMonitors:\n    labels: {release: testbed}\n")
        cluster.install(bad, mislabelled)
        monitors = cluster.get("servicemonitors", "-n", good)["items"]
        assert sorted(m["metadata"]["name"] for m in monitors) == [
            "testbed-memcached",
            "testbed-middleware",
        ]
        assert all(m["metadata"]["labels"]["release"] == "kps" for m in monitors)
        loadgen = MANIFESTS / "components" / "monitoring-loadgen" / "loadgen-podmonitor.yaml"
        cluster.kubectl("apply", "-n", good, "-f", loadgen)

        result = check(cluster)
        assert result.returncode == 1, result.stdout + result.stderr
        lines = result.stdout.splitlines()
        assert lines[:-1] == [
            f"servicemonitors {bad}/testbed-{component}: no Prometheus selects it "
            "(Prometheus monitoring/kps wants release=kps)"
            for component in ("memcached", "middleware")
        ] + [
            f"prometheusrules {bad}/testbed: no Prometheus selects it "
            "(Prometheus monitoring/kps wants release=kps)"
        ]
        total = json.loads(
            cluster.kubectl(
                "get", "servicemonitors,podmonitors,prometheusrules", "-A", "-o", "json"
            )
        )
        assert lines[-1] == (
            f"{len(total['items']) - 3} of {len(total['items'])} monitors and rules selected by "
            "a Prometheus"
        )

        with operator(cluster, tmp_path):
            jobs = wait_for(
                "the operator's scrape configuration with the loadgen's PodMonitor",
                lambda: (
                    (j := scrape_jobs(cluster)) and any("benchmark-loadgen" in x for x in j) and j
                ),
                timeout_s=120,
            )
            statefulset = wait_for(
                "the StatefulSet prometheus-kps",
                lambda: next(
                    (
                        x
                        for x in cluster.get("statefulsets", "-n", "monitoring")["items"]
                        if x["metadata"]["name"] == "prometheus-kps"
                    ),
                    None,
                ),
            )
        assert sorted(jobs) == sorted(
            [f"podMonitor/{good}/benchmark-loadgen/{port}" for port in range(4)]
            + [
                f"serviceMonitor/{good}/testbed-memcached/0",
                f"serviceMonitor/{good}/testbed-middleware/0",
                "serviceMonitor/monitoring/kubelet/0",
                "serviceMonitor/monitoring/node-exporter/0",
            ]
        ), (tmp_path / "operator.log").read_text()[-3000:]
        images = {
            c["name"]: c["image"] for c in statefulset["spec"]["template"]["spec"]["containers"]
        }
        assert images == {
            "prometheus": "cachelab.local/prometheus:3.5.0",
            "config-reloader": "cachelab.local/prometheus-operator:0.85.0",
        }
    finally:
        cluster.delete_namespace(good)
        cluster.delete_namespace(bad)
        cluster.kubectl("delete", "-k", MANIFESTS / "monitoring", "--wait=false", check=False)
        cluster.kubectl("delete", "-f", CRDS, "--wait=true", check=False, timeout_s=180)
