"""Tier 4: `helm install` of charts/testbed on the kwok cluster, checked by Kubernetes itself.

The real scheduler places the pods, so pool placement and resource fit are its verdict; the test
reads them back with `kubectl get pods -o wide` and the nodes' labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Cluster
from .kube import cpu_millis, memory_bytes, pod_requests, wait_for
from .tools import CHART, run, tool

pytestmark = pytest.mark.k8s

ASL2017_EGRESS = {"server": "100M", "middleware": "700M", "loadgen": "200M"}
AZURE_V2_EGRESS = {"a1": "250M", "a2": "500M", "a4": "1000M"}

# The default key is AKS's agentpool; kind setups may label their own key (kwok nodes carry both).
OWN_LABEL_VALUES = "nodePools:\n  labelKey: cachelab.dev/pool\n"
NO_MATCHING_NODE_VALUES = "nodePools:\n  labelKey: example.com/no-such-label\n"
DOES_NOT_FIT_VALUES = """# memcached asks for 2 cpu on pool a1, whose nodes have 1 cpu; the values
# claim 4 cpu per a1 node, so the chart's own fit check passes and only the scheduler can tell.
nodePools:
  sizes:
    a1: {cpu: 4}
memcached:
  replicas: 2
  resources:
    requests: {cpu: "2", memory: 1Gi}
    limits: {cpu: "2", memory: 1Gi}
"""


def values_files(tmp_path: Path) -> dict[str, list[Path]]:
    own_label = tmp_path / "own-label-values.yaml"
    own_label.write_text(OWN_LABEL_VALUES)
    ci = CHART / "ci"
    return {
        "defaults": [],
        "redis": [ci / "02-redis-values.yaml"],
        "redis-middleware": [ci / "06-redis-middleware-values.yaml"],
        "two-middlewares-sharded": [ci / "03-two-middlewares-sharded-values.yaml"],
        "bandwidth-off": [ci / "04-bandwidth-off-values.yaml"],
        "azure-v2-hash": [ci / "05-azure-v2-hash-values.yaml"],
        "link-rtts": [ci / "07-link-rtts-values.yaml"],
        "own-label-key": [own_label],
    }


def pods_wide(cluster: Cluster, namespace: str) -> dict[str, str]:
    """Pod name -> node name, from `kubectl get pods -o wide` (the NODE column)."""
    out = cluster.kubectl("get", "pods", "-n", namespace, "-o", "wide", "--no-headers")
    placement = {}
    for line in out.splitlines():
        cols = line.split()
        placement[cols[0]] = cols[6]  # NAME READY STATUS RESTARTS AGE IP NODE ...
    return placement


def node_pools(cluster: Cluster, label_key: str) -> dict[str, str]:
    """Node name -> pool, from `kubectl get nodes -L <label key>`."""
    out = cluster.kubectl("get", "nodes", "-L", label_key, "--no-headers")
    return {line.split()[0]: line.split()[-1] for line in out.splitlines()}


def expected_pool(values: dict[str, Any], pod: dict[str, Any]) -> str:
    component = pod["metadata"]["labels"]["app.kubernetes.io/component"]
    if component == "helm-test":
        return str(values["clients"]["pool"])
    return str(values[component]["pool"])


def expected_egress(values: dict[str, Any], pod: dict[str, Any], pool: str) -> str | None:
    profile = values["bandwidth"]["profile"]
    role = pod["metadata"]["labels"]["cachelab.dev/role"]
    if profile == "asl2017":
        return ASL2017_EGRESS[role] if role != "loadgen" else None  # the test pod is not shaped
    if profile == "azure-v2":
        return AZURE_V2_EGRESS[pool] if role != "loadgen" else None
    return None


def check_release(cluster: Cluster, namespace: str) -> dict[str, Any]:
    values: dict[str, Any] = json.loads(
        cluster.helm("get", "values", "testbed", "-n", namespace, "--all", "-o", "json")
    )
    label_key = values["nodePools"]["labelKey"]
    pools = node_pools(cluster, label_key)
    placement = pods_wide(cluster, namespace)
    pods = cluster.get("pods", "-n", namespace)["items"]
    assert pods, "the release created no pods"
    nodes = {n["metadata"]["name"]: n for n in cluster.get("nodes")["items"]}
    used: dict[str, list[int]] = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        assert pod["status"]["phase"] in ("Running", "Succeeded"), f"{name}: {pod['status']}"
        node = placement[name]
        want = expected_pool(values, pod)
        assert pools[node] == want, f"{name} runs on {node} (pool {pools[node]}), expected {want}"
        cpu, mem = pod_requests(pod)
        alloc = nodes[node]["status"]["allocatable"]
        assert cpu <= cpu_millis(alloc["cpu"]) and mem <= memory_bytes(alloc["memory"]), name
        if pod["status"]["phase"] == "Running":
            total = used.setdefault(node, [0, 0])
            total[0] += cpu
            total[1] += mem
        egress = pod["metadata"].get("annotations", {}).get("kubernetes.io/egress-bandwidth")
        assert egress == expected_egress(values, pod, want), f"{name}: egress {egress}"
        for c in pod["spec"]["containers"]:
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
            assert sc["capabilities"]["drop"] == ["ALL"], f"{name}/{c['name']}"
            assert "limits" in c["resources"], f"{name}/{c['name']} has no limits"
        assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    for node, (cpu, mem) in used.items():
        alloc = nodes[node]["status"]["allocatable"]
        assert cpu <= cpu_millis(alloc["cpu"]), f"{node}: {cpu}m requested"
        assert mem <= memory_bytes(alloc["memory"]), f"{node}: {mem} bytes requested"
    check_policies(cluster, namespace, values)
    return values


def check_policies(cluster: Cluster, namespace: str, values: dict[str, Any]) -> None:
    policies = {
        p["metadata"]["name"]: p for p in cluster.get("networkpolicy", "-n", namespace)["items"]
    }
    if not values["networkPolicy"]["enabled"]:
        assert policies == {}
        return
    mw = values["middleware"]["enabled"]
    expected = {
        "testbed-default-deny",
        "testbed-servers",
        "testbed-clients",
        "testbed-loadgen-metrics",
    }
    if mw:
        expected.add("testbed-middleware")
    assert set(policies) == expected
    # Scrapers reach the loadgen metrics ports of every loadgen pod of the release, also the
    # experiment Jobs' (which lack the chart's name label).
    lm = values["monitoring"]["loadgenMetrics"]
    scrape = policies["testbed-loadgen-metrics"]["spec"]
    assert scrape["podSelector"]["matchLabels"] == {
        "app.kubernetes.io/instance": "testbed",
        "cachelab.dev/role": "loadgen",
    }
    (rule,) = scrape["ingress"]
    assert rule["from"] == [
        {"namespaceSelector": values["networkPolicy"]["monitoringNamespaceSelector"]}
    ]
    (port,) = rule["ports"]
    assert (port["port"], port.get("endPort", port["port"])) == (
        lm["port"],
        lm["port"] + lm["ports"] - 1,
    )
    deny = policies["testbed-default-deny"]["spec"]
    assert deny["policyTypes"] == ["Ingress", "Egress"] and "ingress" not in deny
    sources = [
        f["podSelector"]["matchLabels"].get("cachelab.dev/role")
        for rule in policies["testbed-servers"]["spec"]["ingress"]
        for f in rule["from"]
        if "podSelector" in f
    ]
    clients_direct = values["networkPolicy"]["clientsToServers"] or not mw
    assert ("loadgen" in sources) == clients_direct, sources
    assert ("middleware" in sources) is True


@pytest.mark.parametrize(
    "scenario",
    [
        "defaults",
        "redis",
        "redis-middleware",
        "two-middlewares-sharded",
        "bandwidth-off",
        "azure-v2-hash",
        "link-rtts",
        "own-label-key",
    ],
)
def test_install_places_every_pod_on_its_pool(
    cluster: Cluster, tmp_path: Path, scenario: str
) -> None:
    namespace = cluster.namespace(f"install-{scenario}")
    try:
        cluster.install(namespace, *values_files(tmp_path)[scenario])
        values = check_release(cluster, namespace)
        out = cluster.helm("test", "testbed", "-n", namespace, "--timeout", "90s")
        assert "Phase:          Succeeded" in out
        pods = cluster.get("pods", "-n", namespace, "-l", "app.kubernetes.io/component=helm-test")
        test_pod = pods["items"][0]
        node = test_pod["spec"]["nodeName"]
        assert node.startswith(values["clients"]["pool"] + "-")
    finally:
        cluster.delete_namespace(namespace)


def test_requests_that_do_not_fit_leave_pods_pending(cluster: Cluster, tmp_path: Path) -> None:
    values = tmp_path / "does-not-fit-values.yaml"
    values.write_text(DOES_NOT_FIT_VALUES)
    namespace = cluster.namespace("does-not-fit")
    try:
        cluster.helm("install", "testbed", CHART, "-n", namespace, "-f", values)

        def unschedulable() -> list[str] | None:
            pods = cluster.get(
                "pods", "-n", namespace, "-l", "app.kubernetes.io/component=memcached"
            )
            messages = []
            for pod in pods["items"]:
                cond = [
                    c for c in pod["status"].get("conditions", []) if c["type"] == "PodScheduled"
                ]
                if pod["status"]["phase"] != "Pending" or not cond or cond[0]["status"] != "False":
                    return None
                messages.append(cond[0].get("message", ""))
            return messages if len(messages) == 2 else None

        messages = wait_for("memcached pods reported unschedulable", unschedulable)
        for m in messages:
            assert "Insufficient cpu" in m, m
        # The other roles still fit and run: only the oversized servers are stuck.
        wait_for(
            "the middleware (which fits its pool) to run",
            lambda: (
                [
                    p["status"]["phase"]
                    for p in cluster.get(
                        "pods", "-n", namespace, "-l", "app.kubernetes.io/component=middleware"
                    )["items"]
                ]
                == ["Running"]
            ),
        )
        wide = cluster.kubectl("get", "pods", "-n", namespace, "-o", "wide")
        print(wide)  # shown with -rA: Pending, NODE <none>
        assert all(
            "Pending" in line and "<none>" in line
            for line in wide.splitlines()
            if "memcached" in line
        )
    finally:
        cluster.delete_namespace(namespace)


def test_install_fails_clearly_when_no_node_carries_a_pool_label(
    cluster: Cluster, tmp_path: Path
) -> None:
    values = tmp_path / "no-matching-node-values.yaml"
    values.write_text(NO_MATCHING_NODE_VALUES)
    namespace = cluster.namespace("no-matching-node")
    try:
        args = ["install", "testbed", CHART, "-n", namespace, "-f", values]
        failed = run([tool("helm"), *args], env=cluster.env, check=False)
        assert failed.returncode != 0, failed.stdout
        assert "NODE POOLS: no node carries the label of pool(s) " in failed.stderr
        for pool in ("a1", "a2", "a4"):
            assert f"{pool} (example.com/no-such-label={pool})" in failed.stderr, failed.stderr
        assert cluster.helm("list", "-n", namespace, "-q").strip() == ""  # nothing Pending
    finally:
        cluster.delete_namespace(namespace)
