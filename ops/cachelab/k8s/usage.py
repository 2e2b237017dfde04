"""Utilisation of a Kubernetes run: every pod's CPU and every node's network bytes, sampled
from the kubelets' summary API (`/api/v1/nodes/<node>/proxy/stats/summary`, the source of
metrics-server) while the benchmark Job runs, into the same `cpu.csv` as a local run
(cachelab.results.cpu: role `loadgen`, `middleware` or `server`, the pod's name, pid 0, the
pod's cumulative CPU seconds, i.e. its cgroup's `usageCoreNanoSeconds`, stamped with the time
the kubelet read it) and `net.csv`.

`net.csv` columns `epoch_ms,node,pool,rx_bytes,tx_bytes`: per node, the cumulative bytes the
run's pods on it (the release's and the benchmark Job's) received and sent on their interfaces
(the pods' own network namespaces, so the counts are right also where nodes share a kernel, as on
the local cluster, whose kubelets all report the machine's NIC as the node's; other pods, such as
host-network exporters, are not counted, and traffic between two pods of one node is counted
though it never leaves the node). `pool` is the node's pool label value. The kubelet reports a
pod's network only when its cAdvisor reaches the node's container runtime (on the local cluster,
`--containerd` with the node's socket). The thread columns of cpu.csv stay empty (no schedstat
per thread).

Each pod's CPU cap in cores (`cpu_limits`, into point.json's `usage.cpu_limit_cores`): the sum
of its containers' CPU limits, or, when a container has none, its node's allocatable CPU (the
node's size; on the local cluster its cgroup's cap). The operational analysis divides each pod's
CPU by it.

Each pod with the chart's bandwidth annotation (`kubernetes.io/egress-bandwidth`, the CNI
bandwidth plugin's egress limit) is a shaped link, as a local run's htb class is
(cachelab.local.shaping): `links()` gives each one's rate and the bytes its pod sent between the
first and the last sample, named as the local links are: `server-<i> out` per server pod,
`middleware-<j> out` per middleware pod (both directions: a pod has one interface), and the load
generators' pods as one link `clients -> middlewares` (`clients -> servers` without a
middleware) at their rates summed. The runner stores them in point.json's `bandwidth.links`,
where the operational analysis makes each a station.

A pod with the chart's latency sidecar (container `toxiproxy`, chart `links.*`) is two rows,
as a local run's toxiproxy-server is a process of its own: the pod's CPU less the sidecar's under
the pod's role, and the sidecar's, `<pod>/toxiproxy`, under role `toxiproxy` (the summary's
`cpu_toxiproxy_cores`), each with its own cap.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from cachelab.k8s.kube import K8sError, Kube
from cachelab.results.cpu import CpuSample, CpuSampleWriter

KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
NET_COLUMNS = ("epoch_ms", "node", "pool", "rx_bytes", "tx_bytes")
PERIOD_S = 1.0  # how often the nodes are asked; each figure carries the time it was read


def stamp_ms(text: str | None, default_ms: float) -> float:
    """An RFC 3339 time of the summary API in epoch milliseconds (`default_ms` if absent)."""
    if not text:
        return default_ms
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000.0


def cpu_cores(quantity: str) -> float:
    """A Kubernetes CPU quantity ("100m", "0.5", "2") in cores."""
    text = str(quantity)
    return float(text[:-1]) / 1000.0 if text.endswith("m") else float(text)


SIDECAR = "toxiproxy"  # the chart's latency sidecar: its container name and its cpu.csv role
EGRESS_ANNOTATION = "kubernetes.io/egress-bandwidth"
# a Kubernetes quantity's suffixes, as the bandwidth plugin reads its annotations (bits per second)
BIT_RATE_SUFFIXES = {
    "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
}  # fmt: skip


def egress_mbit(pod: dict[str, Any]) -> float | None:
    """The pod's egress limit in Mbit/s from its bandwidth annotation ("100M"; None: none, or
    not a quantity)."""
    text = str(pod["metadata"].get("annotations", {}).get(EGRESS_ANNOTATION, "")).strip()
    longest_first = sorted(BIT_RATE_SUFFIXES, key=len, reverse=True)
    suffix = next((s for s in longest_first if text.endswith(s)), "")
    try:
        bits = float(text.removesuffix(suffix)) * BIT_RATE_SUFFIXES.get(suffix, 1.0)
    except ValueError:
        return None
    return bits / 1e6 if bits > 0 else None


def _ordinal(name: str) -> tuple[int, str]:
    """A StatefulSet pod's ordinal first ("testbed-memcached-10" after "-9"), then its name."""
    tail = name.rsplit("-", 1)[-1]
    return (int(tail) if tail.isdigit() else 0, name)


def limit_cores(
    pod: dict[str, Any], node_cores: float | None, sidecar: bool = False
) -> float | None:
    """The pod's CPU cap: its containers' limits summed (all but the latency sidecar's, or with
    `sidecar` the sidecar's alone), or the node's allocatable when one of them has no limit
    (None when that is unknown too)."""
    total = 0.0
    for container in pod["spec"].get("containers", []):
        if (container.get("name") == SIDECAR) != sidecar:
            continue
        limit = ((container.get("resources") or {}).get("limits") or {}).get("cpu")
        if limit is None:
            return node_cores
        total += cpu_cores(limit)
    return total or node_cores


def role_of(pod: dict[str, Any]) -> str | None:
    """cpu.csv role of a pod of the run (None: not a pod of the experiment)."""
    labels = pod["metadata"].get("labels", {})
    component = labels.get("app.kubernetes.io/component")
    if component == "benchmark":
        return "loadgen"
    if component == "middleware":
        return "middleware"
    if component in ("memcached", "redis"):
        return "server"
    return None


def has_sidecar(pod: dict[str, Any]) -> bool:
    """Whether the pod runs the chart's latency sidecar."""
    return any(c.get("name") == SIDECAR for c in pod["spec"].get("containers", []))


def _container_cpu_s(pod_stats: dict[str, Any], container: str) -> float | None:
    """A container's cumulative CPU seconds in the summary API's pod entry (None: not there)."""
    for entry in pod_stats.get("containers") or []:
        cpu = entry.get("cpu") or {}
        if entry.get("name") == container and "usageCoreNanoSeconds" in cpu:
            return int(cpu["usageCoreNanoSeconds"]) / 1e9
    return None


class UsageSampler:
    """Writes cpu.csv and net.csv of one run. `pods` lists the run's pods (release and
    benchmark Job) on each call; `poll` samples at most every PERIOD_S. Called from the
    runner's thread only."""

    def __init__(
        self,
        kube: Kube,
        run_dir: Path,
        pods: Callable[[], list[dict[str, Any]]],
        pool_label_key: str = "agentpool",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.kube = kube
        self.pods = pods
        self.pool_label_key = pool_label_key
        self.clock = clock
        self.cpu = CpuSampleWriter(run_dir / "cpu.csv")
        self._net_handle: TextIO = (run_dir / "net.csv").open("w", newline="")
        self._net = csv.writer(self._net_handle)
        self._net.writerow(NET_COLUMNS)
        self._last = 0.0
        self._pools: dict[str, str | None] = {}
        self._node_cores: dict[str, float] = {}
        self.cpu_limits: dict[str, float] = {}
        self.errors: list[str] = []
        self._egress: dict[str, tuple[str, float]] = {}  # pod -> (role, Mbit/s)
        self._sent: dict[str, tuple[int, int]] = {}  # pod -> (first, last) tx bytes

    def poll(self) -> None:
        now = self.clock()
        if now - self._last < PERIOD_S:
            return
        self._last = now
        try:
            pods = self.pods()
        except (K8sError, KeyError, ValueError) as error:
            self._error(f"pods: {error}")
            return
        roles = {p["metadata"]["name"]: r for p in pods if (r := role_of(p)) is not None}
        for p in pods:
            name = p["metadata"]["name"]
            if name in roles and (mbit := egress_mbit(p)) is not None:
                self._egress[name] = (roles[name], mbit)
        nodes = sorted({p["spec"].get("nodeName") for p in pods if p["spec"].get("nodeName")})
        for node in nodes:
            if self._node(node) is None:
                continue
            for pod in pods:
                name = pod["metadata"]["name"]
                if name in roles and pod["spec"].get("nodeName") == node:
                    limit = limit_cores(pod, self._node_cores.get(node))
                    if limit is not None:
                        self.cpu_limits[name] = limit
                    if has_sidecar(pod):
                        limit = limit_cores(pod, self._node_cores.get(node), sidecar=True)
                        if limit is not None:
                            self.cpu_limits[f"{name}/{SIDECAR}"] = limit
            try:
                summary = json.loads(self.kube.get_raw(f"/api/v1/nodes/{node}/proxy/stats/summary"))
            except (K8sError, json.JSONDecodeError) as error:
                self._error(f"node {node}: {error}")
                continue
            self._record(node, summary, roles, self.clock() * 1000.0)

    def _node(self, node: str) -> str | None:
        """The node's pool label value, or None for a node without a kubelet (kwok's)."""
        if node not in self._pools:
            try:
                found = self.kube.get("node", node)
                meta = found["metadata"]
            except K8sError as error:
                self._error(f"node {node}: {error}")
                return None
            if meta.get("annotations", {}).get(KWOK_NODE_ANNOTATION):
                self._error(f"node {node} is simulated by kwok: no kubelet statistics")
                self._pools[node] = None
            else:
                self._pools[node] = str(meta.get("labels", {}).get(self.pool_label_key, ""))
                allocatable = (found.get("status") or {}).get("allocatable") or {}
                if "cpu" in allocatable:
                    self._node_cores[node] = cpu_cores(allocatable["cpu"])
        return self._pools[node]

    def _record(
        self, node: str, summary: dict[str, Any], roles: dict[str, str], epoch_ms: float
    ) -> None:
        samples = []
        rx = tx = 0
        for pod in summary.get("pods", []):
            name = pod.get("podRef", {}).get("name", "")
            if name not in roles:
                continue
            network = pod.get("network") or {}
            rx += int(network.get("rxBytes", 0))
            tx += int(network.get("txBytes", 0))
            if "txBytes" in network:
                sent = int(network["txBytes"])
                self._sent[name] = (self._sent.get(name, (sent, sent))[0], sent)
            cpu = pod.get("cpu") or {}
            if "usageCoreNanoSeconds" in cpu:
                # stamped with the time the kubelet read the cgroup, not the time of asking:
                # its stats may be some seconds old
                when_ms = stamp_ms(cpu.get("time"), epoch_ms)
                cpu_s = int(cpu["usageCoreNanoSeconds"]) / 1e9
                sidecar_s = _container_cpu_s(pod, SIDECAR)
                if sidecar_s is not None:  # the latency sidecar's CPU is not the role's
                    cpu_s = max(0.0, cpu_s - sidecar_s)
                    samples.append(CpuSample(when_ms, SIDECAR, f"{name}/{SIDECAR}", 0, sidecar_s))
                samples.append(CpuSample(when_ms, roles[name], name, 0, cpu_s))
        self.cpu.write(samples)
        self._net.writerow([f"{epoch_ms:.0f}", node, self._pools.get(node) or "", rx, tx])
        self._net_handle.flush()

    def links(self) -> list[dict[str, Any]]:
        """The shaped pods as links (module docstring): name, Mbit/s and the bytes sent between
        the first and the last sample, as a local run's `bandwidth.links`; a pod sampled fewer
        than twice is left out."""
        by_role: dict[str, list[tuple[str, float, int]]] = {}
        for name, (role, mbit) in sorted(self._egress.items(), key=lambda e: _ordinal(e[0])):
            first, last = self._sent.get(name, (0, 0))
            if name in self._sent and last >= first:
                by_role.setdefault(role, []).append((name, mbit, last - first))
        found = [
            {"name": f"{role}-{i} out", "pod": name, "mbit": mbit, "sent_bytes": sent}
            for role in ("server", "middleware")
            for i, (name, mbit, sent) in enumerate(by_role.get(role, []))
        ]
        clients = by_role.get("loadgen", [])
        if clients:
            to = "middlewares" if "middleware" in by_role else "servers"
            found.append(
                {
                    "name": f"clients -> {to}",
                    "pod": ",".join(name for name, _, _ in clients),
                    "mbit": sum(mbit for _, mbit, _ in clients),
                    "sent_bytes": sum(sent for _, _, sent in clients),
                }
            )
        return found

    def _error(self, message: str) -> None:
        if message not in self.errors:  # each problem once
            self.errors.append(message)

    def close(self) -> None:
        self.cpu.close()
        self._net_handle.close()
