"""Tier 4: the kustomize experiment manifests. Every component builds on the base alone, and every
overlay is applied with `kubectl apply -k` to the kwok cluster next to a release installed with the
overlay's own testbed-values.yaml; the preload Job completes, then the benchmark Job (created
suspended) is released and completes with one pod per client machine on the client pool."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from cachelab.spec import parse_spec

from .conftest import Cluster
from .kube import wait_for
from .tools import MANIFESTS, run

pytestmark = pytest.mark.k8s

OVERLAYS = sorted(p.name for p in (MANIFESTS / "overlays").iterdir() if p.is_dir())
COMPONENTS = sorted(p.name for p in (MANIFESTS / "components").iterdir() if p.is_dir())


def build(kustomization_dir: Path) -> list[dict[str, object]]:
    out = run(["kubectl", "kustomize", kustomization_dir]).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def config_of(docs: list[dict[str, object]]) -> dict[str, str]:
    for d in docs:
        if d["kind"] == "ConfigMap" and str(d["metadata"]["name"]).startswith("benchmark-config"):  # type: ignore[index]
            return dict(d["data"])  # type: ignore[arg-type]
    raise AssertionError("no benchmark-config ConfigMap")


def test_every_overlay_of_the_asl2017_sections_exists() -> None:
    sections = {name.split("-")[1] for name in OVERLAYS if name.startswith("asl17-")}
    assert {"2", "3", "4", "5"} <= sections, OVERLAYS


@pytest.mark.parametrize("component", COMPONENTS)
def test_component_builds_on_the_base_alone(tmp_path: Path, component: str) -> None:
    # kustomize refuses absolute roots; relative ones may leave the kustomization's folder.
    base = os.path.relpath(MANIFESTS / "base", tmp_path)
    comp = os.path.relpath(MANIFESTS / "components" / component, tmp_path)
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources: [{base}]\ncomponents: [{comp}]\n"
    )
    docs = build(tmp_path)
    kinds = sorted(str(d["kind"]) for d in docs)
    assert kinds.count("Job") == 2, kinds


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_jobs_complete_on_the_client_pool(cluster: Cluster, overlay: str) -> None:
    path = MANIFESTS / "overlays" / overlay
    machines = int(config_of(build(path))["CLIENT_MACHINES"])
    namespace = cluster.namespace(f"overlay-{overlay}")
    try:
        cluster.install(namespace, path / "testbed-values.yaml")
        cluster.kubectl("apply", "-n", namespace, "--dry-run=server", "-k", path)
        cluster.kubectl("apply", "-n", namespace, "-k", path)
        cluster.kubectl(
            "wait", "-n", namespace, "--for=condition=complete", "job/preload", "--timeout=90s"
        )
        job = cluster.get("job/benchmark", "-n", namespace)
        assert job["spec"]["suspend"] is True, "benchmark must wait for the preload"
        cluster.kubectl(
            "patch",
            "-n",
            namespace,
            "job/benchmark",
            "--type=merge",
            "-p",
            '{"spec":{"suspend":false}}',
        )
        cluster.kubectl(
            "wait", "-n", namespace, "--for=condition=complete", "job/benchmark", "--timeout=90s"
        )
        pods = wait_for(
            f"{machines} benchmark pods",
            lambda: (
                items
                if len(
                    items := cluster.get(
                        "pods", "-n", namespace, "-l", "batch.kubernetes.io/job-name=benchmark"
                    )["items"]
                )
                == machines
                else None
            ),
        )
        indices = sorted(
            int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"])
            for p in pods
        )
        assert indices == list(range(machines))
        nodes = {p["spec"]["nodeName"] for p in pods}
        assert all(n.startswith("a2-") for n in nodes), nodes
        # One client machine per node is a required pod anti-affinity, which the scheduler
        # enforces among pods that are not finished. kwok completes Job pods the moment they run,
        # so a later index may legally land where an earlier, finished one was: placement alone
        # cannot show the rule here (it raced in CI), so the rule itself must be on every pod.
        for p in pods:
            (term,) = p["spec"]["affinity"]["podAntiAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]
            assert term["topologyKey"] == "kubernetes.io/hostname"
            assert term["labelSelector"]["matchLabels"] == {
                "app.kubernetes.io/component": "benchmark"
            }
            assert p["metadata"]["labels"]["app.kubernetes.io/component"] == "benchmark"
        for p in pods:
            assert p["metadata"]["annotations"]["kubernetes.io/egress-bandwidth"] == "200M"
            assert p["spec"]["subdomain"] == "benchmark-peers"
        # the point, for `cachelab collect`: a one-point spec of the same client machines
        point = cluster.get("configmap/cachelab-point", "-n", namespace)
        spec = parse_spec(yaml.safe_load(point["data"]["spec.yaml"]))
        assert len(spec.points()) == 1 and spec.topology.client_machines == machines
    finally:
        cluster.delete_namespace(namespace)
