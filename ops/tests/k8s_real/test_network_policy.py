"""The chart's NetworkPolicies enforced on the real local cluster: Cilium's agent chained after the
bridge plugin (CLUSTER_NETWORK_POLICY=cilium, built by `CILIUM=1 make k8s-tools`) drops what the
policies do not admit. Cilium runs on the one-node cluster (CLUSTER_NODES=1, docs/kubernetes.md).

Probes run inside pods with busybox's nc and a memcached `version` or `get` request: an admitted
path answers, a refused one stays silent until nc's timeout. Every refused probe is paired with an
admitted one from the same pod or to the same port, so a silent reply means the policy, not a slow
machine. The runner's metrics path is the API server's pod proxy (from the node's address)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator

import pytest
from k8s.conftest import Cluster
from k8s.tools import CHART, TOOLS_BIN

from .conftest import NAMESPACE, ONE_NODE_VALUES, RELEASE, local_cluster
from .probes import PROBE_TIMEOUT_S, RELEASE_LABELS, memcache_probe, pod_ip, probe_pod

pytestmark = [pytest.mark.k8s_real, pytest.mark.cilium]


def cilium_built() -> bool:
    return (TOOLS_BIN / "cilium-agent").exists() and (TOOLS_BIN / "cilium-cni").exists()


@pytest.fixture(scope="module")
def policed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The local cluster with Cilium enforcing, and the testbed release (policies on) in it."""
    if not cilium_built():
        raise AssertionError("Cilium is not built: run CILIUM=1 make k8s-tools")
    assert shutil.which("curl"), "curl is needed to ask the Cilium agent for its health"
    with local_cluster(tmp_path_factory, network_policy="cilium", nodes="1") as cluster:
        cluster.kubectl("create", "namespace", NAMESPACE)
        cluster.helm(
            "install", RELEASE, CHART, "-n", NAMESPACE, "-f", ONE_NODE_VALUES,
            "--wait", "--timeout", "240s", timeout_s=300,
        )  # fmt: skip
        policies = cluster.get("networkpolicies", "-n", NAMESPACE)["items"]
        assert len(policies) == 5, [p["metadata"]["name"] for p in policies]
        yield cluster


def test_policies_refuse_a_pod_outside_the_allowed_set_and_admit_the_allowed(
    policed: Cluster,
) -> None:
    server = pod_ip(policed, "statefulset.kubernetes.io/pod-name=testbed-memcached-0")
    middleware = pod_ip(policed, "cachelab.dev/role=middleware")
    stranger = probe_pod(policed, "stranger", {"app": "stranger"})
    loadgen_labels = {**RELEASE_LABELS, "cachelab.dev/role": "loadgen"}
    loadgen = probe_pod(policed, "loadgen-probe", loadgen_labels)
    version = "version\\r\\n"
    get = "get policy-probe\\r\\n"
    outcome: dict[str, str] = {}

    # memcached port: only the middleware may reach the servers.
    mw_pod = policed.get("pods", "-n", NAMESPACE, "-l", "cachelab.dev/role=middleware")["items"][0]
    reply = memcache_probe(
        policed, mw_pod["metadata"]["name"], server, 11211, version, container="middleware"
    )
    outcome["middleware -> server:11211"] = reply
    assert reply.startswith("VERSION "), reply
    outcome["stranger -> server:11211"] = memcache_probe(policed, stranger, server, 11211, version)
    outcome["loadgen -> server:11211"] = memcache_probe(policed, loadgen, server, 11211, version)

    # middleware port: clients (role loadgen of the release) only.
    reply = memcache_probe(policed, loadgen, middleware, 11212, get)
    outcome["loadgen -> middleware:11212"] = reply
    assert reply.strip() == "END", reply  # the memcached reply to a miss
    reply = memcache_probe(policed, stranger, middleware, 11212, get)
    outcome["stranger -> middleware:11212"] = reply

    # metrics port: the runner's scrape through the API server's pod proxy gets through...
    started = time.monotonic()
    metrics = policed.kubectl(
        "get", "--raw",
        f"/api/v1/namespaces/{NAMESPACE}/pods/{mw_pod['metadata']['name']}:9102/proxy/metrics",
    )  # fmt: skip
    assert "cachelab_" in metrics, metrics[:500]
    took_s = time.monotonic() - started
    print(f"metrics through the pod proxy: {len(metrics)} bytes in {took_s:.1f} s")
    # ...a pod of the release's namespace does not.
    http = "GET /metrics HTTP/1.0\\r\\n\\r\\n"
    for name, pod in (("stranger", stranger), ("loadgen", loadgen)):
        reply = memcache_probe(policed, pod, middleware, 9102, http)
        outcome[f"{name} -> middleware:9102"] = reply

    for path, reply in outcome.items():
        verdict = "answered" if reply else f"refused (no reply in {PROBE_TIMEOUT_S} s)"
        print(f"{path}: {verdict}")
    refused = [p for p, r in outcome.items() if not r]
    assert sorted(refused) == sorted(
        [
            "stranger -> server:11211",
            "loadgen -> server:11211",
            "stranger -> middleware:11212",
            "stranger -> middleware:9102",
            "loadgen -> middleware:9102",
        ]
    ), outcome


def test_without_the_policies_the_stranger_gets_through(policed: Cluster) -> None:
    """The refusals above are the policies' doing: with them deleted the same probes answer."""
    saved = policed.kubectl("get", "networkpolicies", "-n", NAMESPACE, "-o", "yaml")
    path = policed.workdir / "policies.yaml"
    path.write_text(saved)
    policed.kubectl("delete", "networkpolicies", "-n", NAMESPACE, "--all")
    try:
        server = pod_ip(policed, "statefulset.kubernetes.io/pod-name=testbed-memcached-0")
        stranger = probe_pod(policed, "stranger", {"app": "stranger"})
        deadline = time.monotonic() + 60
        reply = ""
        while not reply and time.monotonic() < deadline:  # the agent applies the change
            reply = memcache_probe(policed, stranger, server, 11211, "version\\r\\n")
        assert reply.startswith("VERSION "), reply
    finally:
        policed.kubectl("apply", "-f", path)
