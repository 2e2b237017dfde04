"""Tier 4 (no cluster needed): every shipped overlay fits the local cluster's default layout
(scripts/local-cluster/layout.py at the factor a 2-core machine gets). Its release, rendered with
its testbed-values.yaml and charts/testbed/examples/local-values.yaml, puts on each node what the
node's allocatable holds, with room for one more middleware during a rolling upgrade; its Jobs
ask for no more than an a2 node has, and there is an a2 node for each of its client machines."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from .tools import CHART, MANIFESTS, ROOT, run, tool

pytestmark = pytest.mark.k8s

OVERLAYS = sorted(p for p in (MANIFESTS / "overlays").iterdir() if p.is_dir())
LOCAL_VALUES = CHART / "examples" / "local-values.yaml"
COREDNS_MCPU, COREDNS_MIB = 50, 32  # scripts/local-cluster/coredns.yaml, on the a4 node
MEMORY_MIB = 24 * 1024  # the 2-core machine of the default


def _layout_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "layout", ROOT / "scripts" / "local-cluster" / "layout.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def allocatable() -> tuple[dict[str, tuple[int, int]], Counter[str]]:
    """(cpu_m, memory_mib) of one node of each pool, and the node count of each pool."""
    layout = _layout_module()
    _, nodes = layout.layout(layout.DEFAULT_NODES, "auto", "asl2017", 2, MEMORY_MIB, 500)
    sizes = {pool: (cpu, mib) for _, pool, cpu, mib, _ in nodes}
    return sizes, Counter(pool for _, pool, _, _, _ in nodes)


def milli(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def mebi(q: str) -> int:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    return int(float(q[:-2]) * units[q[-2:]]) if q[-2:] in units else int(q) // 2**20


def requests(pod: dict[str, Any]) -> tuple[int, int]:
    cpu = mib = 0
    for c in pod["containers"]:
        r = c.get("resources", {}).get("requests", {})
        cpu += milli(str(r.get("cpu", "0")))
        mib += mebi(str(r.get("memory", "0")))
    return cpu, mib


def workloads(docs: list[dict[str, Any]]) -> list[tuple[str, int, dict[str, Any]]]:
    """(kind/name, replicas, pod spec) of the Deployments and StatefulSets."""
    out = []
    for d in docs:
        if d and d["kind"] in ("Deployment", "StatefulSet"):
            name = f"{d['kind']}/{d['metadata']['name']}"
            out.append((name, d["spec"]["replicas"], d["spec"]["template"]["spec"]))
    return out


@pytest.mark.parametrize("overlay", OVERLAYS, ids=[p.name for p in OVERLAYS])
def test_the_overlays_release_and_jobs_fit_the_default_local_nodes(overlay: Path) -> None:
    sizes, counts = allocatable()
    out = run(
        [tool("helm"), "template", "testbed", CHART,
         "-f", overlay / "testbed-values.yaml", "-f", LOCAL_VALUES]
    ).stdout  # fmt: skip
    used = {pool: [[0, 0] for _ in range(n)] for pool, n in counts.items()}  # per node: cpu_m, mib
    used["a4"][0] = [COREDNS_MCPU, COREDNS_MIB]
    surge: dict[str, tuple[int, int]] = {}
    for name, replicas, pod in workloads(list(yaml.safe_load_all(out))):
        (pool,) = pod["nodeSelector"].values()
        cpu, mib = requests(pod)
        spread = "podAntiAffinity" in pod.get("affinity", {})
        nodes = used[pool]
        assert not spread or replicas <= len(nodes), f"{name}: {replicas} on {len(nodes)} nodes"
        for i in range(replicas):  # spread: one per node; else all on one node (the worst case)
            node = nodes[i % len(nodes)] if spread else nodes[0]
            node[0] += cpu
            node[1] += mib
        if name.startswith("Deployment/") and not spread:
            surge[pool] = (cpu, mib)  # a rolling upgrade starts one more pod first
    for pool, nodes in used.items():
        cpu_m, mib = sizes[pool]
        extra = surge.get(pool, (0, 0))
        for i, (cpu, memory) in enumerate(nodes):
            assert cpu + extra[0] <= cpu_m, f"{overlay.name}: {pool} node {i}: {cpu}m + {extra}"
            assert memory + extra[1] <= mib, f"{overlay.name}: {pool} node {i}: {memory} MiB"
    jobs = run(["kubectl", "kustomize", overlay])
    for doc in yaml.safe_load_all(jobs.stdout):
        if not doc or doc["kind"] != "Job":
            continue
        pod = doc["spec"]["template"]["spec"]
        cpu, mib = requests(pod)
        assert pod["nodeSelector"] == {"agentpool": "a2"}
        assert cpu <= sizes["a2"][0] and mib <= sizes["a2"][1], (doc["metadata"]["name"], cpu, mib)
        # one client machine per node (required anti-affinity): a node for each
        assert doc["spec"]["parallelism"] <= counts["a2"], doc["metadata"]["name"]
