"""The chart's NetworkPolicies enforced across the nodes of the default local cluster (nodes a1 x 3,
a4, a2 x 3 in network namespaces of their own): kube-router's firewall runs in every node's
namespace (CLUSTER_NETWORK_POLICY=kube-router, the multi-node default) and drops what the
policies do not admit, on the node of the receiving pod and on the node of the sending one.

The release is the tier's (examples/local-values.yaml, policies on): a memcached server on an a1
node, the middleware on the a4 node. Probe pods (busybox nc, 3 s timeout) are placed by node: a
stranger (labels outside every policy) and a client of the release (role loadgen) on an a2 node,
and a second stranger on the server's own node, whose traffic to the server crosses that node's
pod bridge instead of the links between nodes. Each refusal has an admitted path on the same port
or from the same pod, and with the policies deleted the strangers reach the server at once, so
the refusal is the policies' doing, not a slow machine's."""

from __future__ import annotations

import time
from typing import Any

import pytest

from .conftest import NAMESPACE, RELEASE, LocalCluster
from .probes import (
    GET,
    HTTP_GET,
    LOADGEN_LABELS,
    PROBE_TIMEOUT_S,
    VERSION,
    admitted_probe,
    memcache_probe,
    pod_of,
    probe_pod,
)

pytestmark = pytest.mark.k8s_real

SERVER_SELECTOR = "statefulset.kubernetes.io/pod-name=testbed-memcached-0"
MIDDLEWARE_SELECTOR = "cachelab.dev/role=middleware"


@pytest.fixture(scope="module")
def placed(real_cluster: LocalCluster, release: str) -> dict[str, Any]:
    """The server, the middleware and the probe pods, with the node each runs on."""
    policies = real_cluster.get("networkpolicies", "-n", NAMESPACE)["items"]
    assert len(policies) == 5, [p["metadata"]["name"] for p in policies]
    server = pod_of(real_cluster, SERVER_SELECTOR)
    middleware = pod_of(real_cluster, MIDDLEWARE_SELECTOR)
    server_node = server["spec"]["nodeName"]
    a2_node = next(str(n["name"]) for n in real_cluster.layout() if n["pool"] == "a2")
    probes = {
        "stranger": probe_pod(real_cluster, "stranger", {"app": "stranger"}, a2_node),
        "neighbour": probe_pod(real_cluster, "neighbour", {"app": "stranger"}, server_node),
        "client": probe_pod(real_cluster, "client-probe", LOADGEN_LABELS, a2_node),
    }
    nodes = {
        name: real_cluster.get("pod", "-n", NAMESPACE, pod)["spec"]["nodeName"]
        for name, pod in probes.items()
    }
    nodes |= {"server": server_node, "middleware": middleware["spec"]["nodeName"]}
    pools = {name: real_cluster.node_pool(node) for name, node in nodes.items()}
    assert pools == {
        "stranger": "a2", "neighbour": "a1", "client": "a2", "server": "a1", "middleware": "a4",
    }, nodes  # fmt: skip
    assert nodes["neighbour"] == nodes["server"]
    return {
        "probes": probes,
        "nodes": nodes,
        "server": server["status"]["podIP"],
        "middleware": middleware["status"]["podIP"],
        "middleware_pod": middleware["metadata"]["name"],
    }


def test_policies_refuse_pods_outside_the_allowed_set_across_nodes(
    real_cluster: LocalCluster, placed: dict[str, Any]
) -> None:
    server, middleware = placed["server"], placed["middleware"]
    stranger, neighbour, client = (placed["probes"][k] for k in ("stranger", "neighbour", "client"))
    mw_pod = placed["middleware_pod"]
    nodes = placed["nodes"]
    print("placement: " + ", ".join(f"{k} on {v}" for k, v in sorted(nodes.items())))
    outcome: dict[str, str] = {}

    # Admitted paths first, each until it answers: the engine applies a new pod a moment after
    # the API server has it.
    reply, probes = admitted_probe(
        real_cluster, mw_pod, server, 11211, VERSION, container="middleware"
    )
    outcome["middleware (a4) -> server (a1):11211"] = reply
    assert reply.startswith("VERSION "), reply
    print(f"middleware -> server answered the probe number {probes}")
    reply, probes = admitted_probe(real_cluster, client, middleware, 11212, GET)
    outcome["client (a2) -> middleware (a4):11212"] = reply
    assert reply.strip() == "END", reply  # the memcached reply to a miss
    print(f"client -> middleware answered the probe number {probes}")

    # DNS (CoreDNS on the a4 node) and the middleware's Service by name, from the client.
    service = real_cluster.get("service", "-n", NAMESPACE, f"{RELEASE}-middleware")
    name = f"{RELEASE}-middleware.{NAMESPACE}.svc.cluster.local"
    looked_up = real_cluster.kubectl(
        "exec", "-n", NAMESPACE, client, "--", "nslookup", name, timeout_s=60
    )  # fmt: skip
    assert service["spec"]["clusterIP"] in looked_up, looked_up
    reply, _ = admitted_probe(real_cluster, client, name, 11212, GET)
    outcome["client (a2) -> middleware Service by name:11212"] = reply
    assert reply.strip() == "END", reply

    # The runner's scrape path: the API server's pod proxy to the middleware's metrics port.
    metrics = real_cluster.kubectl(
        "get", "--raw", f"/api/v1/namespaces/{NAMESPACE}/pods/{mw_pod}:9102/proxy/metrics"
    )  # fmt: skip
    assert "cachelab_" in metrics, metrics[:500]
    outcome["runner scrape (API server pod proxy) -> middleware:9102"] = "answered"

    # Refused: every probe once (kube-router rejects, so nc gives up before its timeout).
    refused = {
        "stranger (a2) -> server (a1):11211": (stranger, server, 11211, VERSION),
        "stranger (a1, the server's node) -> server:11211": (neighbour, server, 11211, VERSION),
        "client (a2) -> server (a1):11211": (client, server, 11211, VERSION),
        "stranger (a2) -> middleware (a4):11212": (stranger, middleware, 11212, GET),
        "stranger (a2) -> middleware (a4):9102": (stranger, middleware, 9102, HTTP_GET),
        "client (a2) -> middleware (a4):9102": (client, middleware, 9102, HTTP_GET),
    }
    for path, (pod, ip, port, request) in refused.items():
        outcome[path] = memcache_probe(real_cluster, pod, ip, port, request)

    for path, reply in outcome.items():
        verdict = "answered" if reply else "refused (no reply)"
        print(f"{path}: {verdict}")
    assert sorted(p for p, r in outcome.items() if not r) == sorted(refused), outcome


def test_without_the_policies_the_stranger_reaches_the_server_at_once(
    real_cluster: LocalCluster, placed: dict[str, Any]
) -> None:
    """The refusals above are the policies' doing: with them deleted the same probes answer."""
    saved = real_cluster.kubectl("get", "networkpolicies", "-n", NAMESPACE, "-o", "yaml")
    path = real_cluster.workdir / "policies.yaml"
    path.write_text(saved)
    real_cluster.kubectl("delete", "networkpolicies", "-n", NAMESPACE, "--all")
    try:
        for name in ("stranger", "neighbour"):
            started = time.monotonic()
            reply, probes = admitted_probe(
                real_cluster, placed["probes"][name], placed["server"], 11211, VERSION
            )
            took_s = time.monotonic() - started
            print(f"without the policies: {name} -> server answered the probe number {probes}")
            print(f"  ({took_s:.1f} s with nc's {PROBE_TIMEOUT_S} s wait on the open connection)")
            assert reply.startswith("VERSION "), reply
    finally:
        real_cluster.kubectl("apply", "-f", path)
    started = time.monotonic()
    deadline = started + 60
    reply = "unrefused"
    while reply and time.monotonic() < deadline:  # the restored policies refuse it again
        reply = memcache_probe(
            real_cluster, placed["probes"]["stranger"], placed["server"], 11211, VERSION
        )
    print(f"policies restored: refused again after {time.monotonic() - started:.1f} s")
    assert not reply, reply
