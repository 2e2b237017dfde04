"""The faults' targets in a Kubernetes run: the containers of the release's server and middleware
pods, signalled on the machine that runs them.

`server-<i>` is the backend StatefulSet's pod `<fullname>-<backend>-<i>`; `middleware-<j>` the
j-th of the middleware Deployment's pods by name. A container's processes are found through its
id (the pod's `containerStatuses[].containerID`) in `/proc/<pid>/cgroup`: the local cluster
(scripts/local-cluster.sh) runs every container as processes of this machine, so the runner
signals them as it signals local ones. stop and resume are SIGSTOP and SIGCONT to every process
of the container; kill and restart are SIGKILL to them, after which the kubelet starts the
container again (the pods' restartPolicy is Always): restart's end waits until the pod is ready
with a new container. On a cluster whose nodes are other machines (AKS) the processes are not
here; `k8s_fault_problem` says so before anything runs. slow is not carried out on Kubernetes
(the local cluster shapes each node's link by its pool instead). Called from the injector's
thread; `resolve` from the runner's.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachelab.k8s.kube import K8sError
from cachelab.spec import Spec

PROC = Path("/proc")
READY_TIMEOUT_S = 120.0
MIDDLEWARE_CONTAINER = "middleware"
SCALE_LABEL = "cachelab.dev/scale"  # node label of the local cluster (scripts/local-cluster.sh)


class K8sFaultError(K8sError):
    """A fault that cannot be carried out on this cluster (one line saying why)."""


def k8s_fault_problem(spec: Spec, local_cluster: bool) -> str | None:
    """Why the spec's faults cannot run on this cluster (one line), or None."""
    for index, fault in enumerate(spec.faults):
        where = f"faults.{index}: {fault.action} on {fault.target}"
        if fault.action == "slow":
            return (
                f"{where}: slow is not carried out on Kubernetes (the local cluster shapes "
                "each node's link by its pool: CLUSTER_PROFILE); use stop, kill or restart"
            )
        if not local_cluster:
            return (
                f"{where}: on Kubernetes the runner signals the target's container on the "
                "machine that runs it, which is this one only on the local cluster "
                "(scripts/local-cluster.sh; docs/kubernetes.md says what AKS needs)"
            )
    return None


def container_pids(container_id: str, proc: Path = PROC) -> list[int]:
    """The processes whose cgroup names the container (ascending; the first is its init)."""
    pids = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cgroup = (entry / "cgroup").read_text()
        except OSError:
            continue  # gone meanwhile
        if container_id in cgroup:
            pids.append(int(entry.name))
    return sorted(pids)


def _container_status(pod: dict[str, Any], container: str) -> dict[str, Any]:
    for status in pod.get("status", {}).get("containerStatuses", []):
        if status.get("name") == container:
            return dict(status)
    raise K8sFaultError(f"pod {pod['metadata']['name']}: no container {container!r}")


def _container_id(status: dict[str, Any]) -> str:
    raw = str(status.get("containerID") or "")
    if not raw:
        raise K8sFaultError(f"container {status.get('name')!r} has no id (not started)")
    return raw.split("://", 1)[-1]


@dataclass
class K8sFaultTargets:
    """Targets by name: (pod, container). `get_pod(name)` returns the pod's JSON."""

    pods: dict[str, tuple[str, str]]
    get_pod: Callable[[str], dict[str, Any]]
    proc: Path = PROC
    signal_pid: Callable[[int, int], None] = os.kill
    _stopped: dict[str, list[int]] = field(default_factory=dict)
    _restarts: dict[str, int] = field(default_factory=dict)
    _pids: dict[str, list[int]] = field(default_factory=dict)

    def prepare(self) -> None:
        """Find every target's processes now (the runner's thread, before the benchmark), so
        that a fault's signals go out at its time and not a /proc scan later."""
        for target in self.pods:
            self._pids[target] = self._lookup(target)

    def _status(self, target: str) -> dict[str, Any]:
        if target not in self.pods:
            raise K8sFaultError(f"{target}: no such pod in the release")
        pod, container = self.pods[target]
        return _container_status(self.get_pod(pod), container)

    def _lookup(self, target: str) -> list[int]:
        pids = container_pids(_container_id(self._status(target)), self.proc)
        if not pids:
            raise K8sFaultError(
                f"{target}: no process of its container on this machine (is this the local "
                "cluster?)"
            )
        return pids

    def _signal(self, target: str, signum: int) -> list[int]:
        pids = self._pids.get(target) or self._lookup(target)
        try:
            for pid in pids:
                self.signal_pid(pid, signum)
        except ProcessLookupError:  # the container was started again since: look again
            pids = self._lookup(target)
            for pid in pids:
                self.signal_pid(pid, signum)
        self._pids[target] = pids
        return pids

    def stop(self, target: str) -> int:
        pids = self._signal(target, signal.SIGSTOP)
        self._stopped[target] = pids
        return pids[0]

    def resume(self, target: str) -> None:
        for pid in self._stopped.pop(target, []):
            try:
                self.signal_pid(pid, signal.SIGCONT)
            except ProcessLookupError:
                continue

    def kill(self, target: str) -> int:
        self._restarts[target] = int(self._status(target).get("restartCount", 0))
        pid = self._signal(target, signal.SIGKILL)[0]
        self._pids.pop(target, None)  # a new container comes with new processes
        return pid

    def start_again(self, target: str) -> int:
        """The kubelet starts the container again by itself: wait until it is ready."""
        before = self._restarts.get(target, 0)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            status = self._status(target)
            if int(status.get("restartCount", 0)) > before and status.get("ready"):
                pids = container_pids(_container_id(status), self.proc)
                if pids:
                    self._pids[target] = pids
                return pids[0] if pids else 0
            time.sleep(0.5)
        raise K8sFaultError(f"{target}: not ready again after {READY_TIMEOUT_S:.0f} s")

    def slow(self, target: str, mbit: float) -> None:
        raise K8sFaultError("slow is not carried out on Kubernetes")

    def unslow(self, target: str) -> None:
        raise K8sFaultError("slow is not carried out on Kubernetes")

    def resume_all(self) -> None:
        """SIGCONT to everything still stopped (the run is over or interrupted)."""
        for target in list(self._stopped):
            self.resume(target)


def is_local_cluster(facts: dict[str, Any]) -> bool:
    """Whether the cluster is scripts/local-cluster.sh's (its nodes run on this machine)."""
    nodes = facts.get("nodes") or []
    return bool(nodes) and all(
        SCALE_LABEL in (n.get("labels") or {}) or str(n.get("name", "")).startswith("cachelab-")
        for n in nodes
    )


def resolve(
    spec: Spec, server_pods: Iterable[str], middleware_pods: Iterable[str], fullname: str
) -> dict[str, tuple[str, str]]:
    """The (pod, container) of every target the spec's faults name; K8sFaultError (one line)
    for a target the release has no pod for."""
    backend = spec.topology.backend
    servers = set(server_pods)
    middlewares = sorted(middleware_pods)
    found: dict[str, tuple[str, str]] = {}
    for fault in spec.faults:
        if fault.role == "server":
            pod = f"{fullname}-{backend}-{fault.index}"
            if pod not in servers:
                raise K8sFaultError(
                    f"faults: {fault.target}: no pod {pod} (the release's {backend} pods: "
                    f"{', '.join(sorted(servers)) or 'none'})"
                )
            found[fault.target] = (pod, backend)
        else:
            if fault.index >= len(middlewares):
                raise K8sFaultError(
                    f"faults: {fault.target}: the release has {len(middlewares)} middleware pod(s)"
                )
            found[fault.target] = (middlewares[fault.index], MIDDLEWARE_CONTAINER)
    return found
