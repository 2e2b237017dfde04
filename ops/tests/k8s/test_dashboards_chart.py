"""Tier 4: the chart ships the Grafana dashboards as ConfigMaps the Grafana sidecar picks up.

`helm template` renders one ConfigMap per dashboard file (label `grafana_dashboard: "1"`,
annotation `grafana_folder`), none unless `monitoring.dashboards.enabled`; `helm install` on the
kwok cluster creates them, and the API server returns each dashboard unchanged. With
ServiceMonitors forced on, each endpoint relabels the Helm release into `release`, the label
every dashboard query selects on (docs/interfaces.md §5).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import Cluster
from .tools import CHART, run, tool

pytestmark = pytest.mark.k8s

DASHBOARD_DIR = CHART / "dashboards"


def _render(*sets: str) -> list[dict[str, Any]]:
    argv: list[str | Path] = [tool("helm"), "template", "dash", CHART, "--namespace", "bench"]
    for s in sets:
        argv += ["--set", s]
    return [d for d in yaml.safe_load_all(run(argv).stdout) if d]


def _dashboard_configmaps(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        d
        for d in docs
        if d["kind"] == "ConfigMap"
        and d["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "dashboards"
    ]


def _check_dashboard_maps(maps: list[dict[str, Any]], release: str, namespace: str) -> None:
    files = sorted(p.name for p in DASHBOARD_DIR.glob("*.json"))
    assert len(files) == 3
    assert sorted(k for m in maps for k in m["data"]) == files
    for cm in maps:
        meta = cm["metadata"]
        assert meta["labels"]["grafana_dashboard"] == "1"
        assert meta["labels"]["app.kubernetes.io/instance"] == release
        assert meta["annotations"]["grafana_folder"] == "cachelab"
        assert meta["namespace"] == namespace
        assert len(meta["name"]) <= 63
        ((name, text),) = cm["data"].items()
        assert json.loads(text) == json.loads((DASHBOARD_DIR / name).read_text())


def test_enabled_dashboards_render_one_labelled_configmap_per_file() -> None:
    maps = _dashboard_configmaps(_render("monitoring.dashboards.enabled=true"))
    _check_dashboard_maps(maps, "dash", "bench")


def test_dashboards_are_off_unless_enabled() -> None:
    assert _dashboard_configmaps(_render()) == []
    assert _dashboard_configmaps(_render("monitoring.dashboards.enabled=false")) == []


def test_service_monitors_relabel_the_release_for_the_dashboards() -> None:
    # redis on its own pool: beside memcached it would not fit one a1 node (the chart refuses).
    docs = _render("monitoring.serviceMonitors.enabled=true", "redis.enabled=true", "redis.pool=a2")
    monitors = [d for d in docs if d["kind"] == "ServiceMonitor"]
    assert {m["metadata"]["labels"]["app.kubernetes.io/component"] for m in monitors} == {
        "middleware",
        "memcached",
        "redis",
    }
    for monitor in monitors:
        for endpoint in monitor["spec"]["endpoints"]:
            assert {
                "sourceLabels": ["__meta_kubernetes_service_label_app_kubernetes_io_instance"],
                "targetLabel": "release",
            } in endpoint["relabelings"]  # action: replace is the default


def test_dashboard_configmaps_install_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    namespace = cluster.namespace("dashboards")
    values = tmp_path / "dashboards-values.yaml"
    values.write_text("monitoring:\n  dashboards:\n    enabled: true\n")
    try:
        cluster.install(namespace, values, release="obs")
        listed = cluster.get("configmaps", "-n", namespace, "-l", "grafana_dashboard=1")
        _check_dashboard_maps(listed["items"], "obs", namespace)
    finally:
        cluster.helm("uninstall", "obs", "-n", namespace, check=False)
        cluster.delete_namespace(namespace)
