"""Probes of the NetworkPolicy tests: busybox pods with chosen labels (and node), and memcached
or HTTP requests sent from inside a pod with busybox's nc. An admitted path answers; a refused one
gets no reply: Cilium drops it (nc gives up after its timeout), kube-router rejects it (nc gives up
at once)."""

from __future__ import annotations

import json
import time
from typing import Any

from k8s.conftest import Cluster

from .conftest import NAMESPACE, RELEASE

BUSYBOX = "cachelab.local/busybox:1.35.0"
PROBE_TIMEOUT_S = 3
RELEASE_LABELS = {"app.kubernetes.io/name": "testbed", "app.kubernetes.io/instance": RELEASE}
LOADGEN_LABELS = {**RELEASE_LABELS, "cachelab.dev/role": "loadgen"}
VERSION = "version\\r\\n"
GET = "get policy-probe\\r\\n"
HTTP_GET = "GET /metrics HTTP/1.0\\r\\n\\r\\n"


def probe_pod(cluster: Cluster, name: str, labels: dict[str, str], node: str | None = None) -> str:
    """A busybox pod with the given labels (on `node` if given), running; returns its name."""
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 1,
        "containers": [
            {
                "name": "probe",
                "image": BUSYBOX,
                "imagePullPolicy": "IfNotPresent",
                "command": ["sleep", "3600"],
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
            }
        ],
    }
    if node is not None:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": spec,
    }
    path = cluster.workdir / f"{name}.json"
    path.write_text(json.dumps(manifest))
    cluster.kubectl("apply", "-f", path)
    cluster.kubectl("wait", "-n", NAMESPACE, "--for=condition=Ready", f"pod/{name}", "--timeout=2m")
    return name


def memcache_probe(
    cluster: Cluster, pod: str, ip: str, port: int, request: str, container: str = "probe"
) -> str:
    """Send a request with nc from inside `pod`; the reply, or '' if nothing came back."""
    script = f"printf '{request}' | nc -w {PROBE_TIMEOUT_S} {ip} {port}; true"
    return cluster.kubectl(
        "exec", "-n", NAMESPACE, pod, "-c", container, "--", "sh", "-c", script, timeout_s=60
    )  # fmt: skip


def admitted_probe(
    cluster: Cluster,
    pod: str,
    ip: str,
    port: int,
    request: str,
    container: str = "probe",
    limit_s: float = 60.0,
) -> tuple[str, int]:
    """memcache_probe until it answers or `limit_s` passes (the policy engine applies a new pod
    or a changed policy a moment after the API server has it); the reply and the number of
    probes sent. An answered probe takes nc's timeout too: memcached keeps the connection open."""
    started = time.monotonic()
    reply, probes = "", 0
    while not reply and time.monotonic() - started < limit_s:
        reply = memcache_probe(cluster, pod, ip, port, request, container)
        probes += 1
    return reply, probes


def pod_of(cluster: Cluster, selector: str) -> dict[str, Any]:
    """The first pod of the release's namespace matching `selector`."""
    items: list[dict[str, Any]] = cluster.get("pods", "-n", NAMESPACE, "-l", selector)["items"]
    assert items, selector
    return items[0]


def pod_ip(cluster: Cluster, selector: str) -> str:
    ip: str = pod_of(cluster, selector)["status"]["podIP"]
    return ip
