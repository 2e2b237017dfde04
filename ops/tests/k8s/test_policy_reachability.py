"""Tier 4 (no cluster needed): the chart's NetworkPolicies evaluated as a reachability table.

The real local cluster enforces the policies (kube-router on every node, Cilium on one node;
ops/tests/k8s_real/test_network_policy*.py, docs/kubernetes.md); this tier evaluates the rendered
policies without any cluster, by the rules of the NetworkPolicy API (a pod selected by a policy of
a direction allows only what some rule of such a policy admits; peers by pod/namespace selectors
or ipBlock; ports) for the release's pods, a pod of the monitoring namespace, an unrelated pod,
the API server's (and the host's) address and a node's."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .test_chart_rendering import render
from .tools import CHART

pytestmark = pytest.mark.k8s

RELEASE = {"app.kubernetes.io/name": "testbed", "app.kubernetes.io/instance": "testbed"}


@dataclass(frozen=True)
class Peer:
    name: str
    namespace: str = "cachelab"
    labels: dict[str, str] = field(default_factory=dict)
    ip: str = "10.244.131.50"  # pods: the multi-node cluster's 10.244.128.0/17
    is_pod: bool = True


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, f"unsupported selector {selector}"
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def peer_admitted(rule_peer: dict[str, Any], peer: Peer, policy_ns: str) -> bool:
    if "ipBlock" in rule_peer:
        return ipaddress.ip_address(peer.ip) in ipaddress.ip_network(rule_peer["ipBlock"]["cidr"])
    if not peer.is_pod:
        return False
    ns_labels = {"kubernetes.io/metadata.name": peer.namespace}
    if "namespaceSelector" in rule_peer:
        if not matches(rule_peer["namespaceSelector"], ns_labels):
            return False
    elif peer.namespace != policy_ns:
        return False
    return matches(rule_peer.get("podSelector", {}), peer.labels)


def port_admitted(ports: list[dict[str, Any]] | None, port: int) -> bool:
    if not ports:
        return True
    return any(p["port"] <= port <= p.get("endPort", p["port"]) for p in ports)


def allowed(policies: list[dict[str, Any]], src: Peer, dst: Peer, port: int) -> bool:
    def side(pod: Peer, other: Peer, kind: str, key: str, peers_key: str) -> bool:
        selecting = [
            p
            for p in policies
            if pod.is_pod
            and p["metadata"].get("namespace", "cachelab") == pod.namespace
            and kind in p["spec"]["policyTypes"]
            and matches(p["spec"]["podSelector"], pod.labels)
        ]
        if not selecting:
            return True  # not isolated in this direction
        return any(
            port_admitted(rule.get("ports"), port)
            and (
                not rule.get(peers_key)
                or any(peer_admitted(x, other, pod.namespace) for x in rule[peers_key])
            )
            for p in selecting
            for rule in p["spec"].get(key, [])
        )

    return side(src, dst, "Egress", "egress", "to") and side(dst, src, "Ingress", "ingress", "from")


LOADGEN = Peer("loadgen", labels={**RELEASE, "cachelab.dev/role": "loadgen"}, ip="10.244.134.20")
MIDDLEWARE = Peer("middleware", labels={**RELEASE, "cachelab.dev/role": "middleware"})
SERVER = Peer("server", labels={**RELEASE, "cachelab.dev/role": "server"}, ip="10.244.128.30")
MONITORING = Peer("prometheus", namespace="monitoring", labels={"app": "prometheus"})
STRANGER = Peer("stranger", labels={"app": "other"}, ip="10.244.128.40")
API_SERVER = Peer("apiserver", ip="10.244.0.1", is_pod=False)  # also the host's tests
NODE = Peer("node", ip="10.244.0.11", is_pod=False)  # the host's Service traffic, masqueraded

# (source, destination, port, allowed) with charts/testbed/examples/local-values.yaml
TABLE = [
    (LOADGEN, MIDDLEWARE, 11212, True),
    (LOADGEN, SERVER, 11211, False),  # clients go through the middleware
    (MIDDLEWARE, SERVER, 11211, True),
    (MIDDLEWARE, LOADGEN, 9500, False),
    (STRANGER, MIDDLEWARE, 11212, False),
    (STRANGER, SERVER, 11211, False),
    (MONITORING, MIDDLEWARE, 9102, True),
    (MONITORING, MIDDLEWARE, 11212, False),
    (MONITORING, LOADGEN, 9500, True),
    (MONITORING, LOADGEN, 9503, True),
    (MONITORING, LOADGEN, 9504, False),
    (API_SERVER, MIDDLEWARE, 9102, True),  # the runner's scrape through the pod proxy
    (API_SERVER, SERVER, 11211, True),  # clientsFromCidrs: the host's tests are clients
    (NODE, MIDDLEWARE, 11212, True),
    (NODE, LOADGEN, 9500, False),
    (LOADGEN, MIDDLEWARE, 9102, False),
    (SERVER, MIDDLEWARE, 11212, False),
]


@pytest.mark.parametrize(
    ("src", "dst", "port", "expected"),
    TABLE,
    ids=[f"{s.name}->{d.name}:{p}" for s, d, p, _ in TABLE],
)
def test_policy_reachability_table(
    tmp_path: Path, src: Peer, dst: Peer, port: int, expected: bool
) -> None:
    objs = render(tmp_path, "", CHART / "examples" / "local-values.yaml")
    policies = [o for (kind, _), o in objs.items() if kind == "NetworkPolicy"]
    assert len(policies) == 5
    assert allowed(policies, src, dst, port) is expected


def test_without_client_cidrs_no_address_outside_the_cluster_reaches_the_data_ports(
    tmp_path: Path,
) -> None:
    objs = render(tmp_path, "")  # the chart's defaults: clientsFromCidrs empty
    policies = [o for (kind, _), o in objs.items() if kind == "NetworkPolicy"]
    for dst, port in ((MIDDLEWARE, 11212), (SERVER, 11211)):
        assert not allowed(policies, API_SERVER, dst, port), (dst.name, port)
        assert not allowed(policies, NODE, dst, port), (dst.name, port)


def test_baseline_without_middleware_lets_clients_reach_servers(tmp_path: Path) -> None:
    objs = render(tmp_path, "middleware:\n  enabled: false\n")
    policies = [o for (kind, _), o in objs.items() if kind == "NetworkPolicy"]
    assert allowed(policies, LOADGEN, SERVER, 11211)
    assert not allowed(policies, STRANGER, SERVER, 11211)
