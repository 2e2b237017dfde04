"""Tier 4: monitoring as kube-prometheus-stack does it, on kwok. The Prometheus Operator's own
CRDs (v0.85.0, example/prometheus-operator-crd of its module, copied by `make k8s-tools`) install,
manifests/monitoring (the operator, a `Prometheus` selecting `release: kps`, node exporter,
the kubelets' cAdvisor) is accepted by the API server, and the chart's ServiceMonitors and the
loadgen's PodMonitor carry the label that Prometheus selects, while a release installed with
`monitoring.serviceMonitors.labels: {}` (the classic mislabelled monitor) is reported by the
check behind `make monitoring-check`. kwok runs no containers, so nothing is scraped here; the
CRDs are deleted at the end so that the chart's `auto` ServiceMonitors stay off in other tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Cluster
from .kube import wait_for
from .tools import MANIFESTS, ROOT, TOOLS_BIN

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
        mislabelled.write_text("monitoring:\n  serviceMonitors:\n    labels: {}\n")
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
        ]
        total = json.loads(
            cluster.kubectl("get", "servicemonitors,podmonitors", "-A", "-o", "json")
        )
        assert lines[-1] == (
            f"{len(total['items']) - 2} of {len(total['items'])} monitors and rules selected by "
            "a Prometheus"
        )
    finally:
        cluster.delete_namespace(good)
        cluster.delete_namespace(bad)
        cluster.kubectl("delete", "-k", MANIFESTS / "monitoring", "--wait=false", check=False)
        cluster.kubectl("delete", "-f", CRDS, "--wait=true", check=False, timeout_s=180)
