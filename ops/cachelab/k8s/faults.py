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
here; `k8s_fault_problem` says so before anything runs, and cachelab.k8s.api_faults does the
same faults (but slow) through the API server instead. slow puts an htb class at the fault's
rate on both ends of the pod's link: its own `eth0` (what it sends), entered through the
container's network namespace, and the peer of `eth0` in the node (what it receives), entered
through the namespace of the container's parent, the runtime's shim, which runs in the node's;
each end's previous root qdisc is put back afterwards (the default, or the one the CNI bandwidth
plugin set for the pod's annotations, which the fault replaces while it lasts). Called from the
injector's thread; `resolve` from the runner's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.release import ReleaseKeeper
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
        if not local_cluster:
            return (
                f"{where}: --faults-via node signals the target's container from this machine, "
                "which runs it only on the local cluster (scripts/local-cluster.sh); this "
                "cluster's nodes are other machines (--faults-via api: through the API server)"
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


def parent_pid(pid: int, proc: Path = PROC) -> int:
    """The parent of `pid` (field 4 of /proc/<pid>/stat, after the command in parentheses)."""
    stat = (proc / str(pid) / "stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def netns_run(netns: Path, command: list[str]) -> str:
    """`command` inside the network namespace at `netns`; K8sFaultError with its own last line
    when it fails."""
    done = subprocess.run(
        ["nsenter", f"--net={netns}", *command], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        error = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise K8sFaultError(f"{' '.join(command)} in {netns}: {error}")
    return done.stdout


def run_tc(netns: Path, args: list[str]) -> str:
    """`tc ARGS` inside the network namespace at `netns`."""
    return netns_run(netns, ["tc", *args])


@dataclass
class LinkShaper:
    """One end of a pod's link limited by htb at a rate, its previous root qdisc kept to be put
    back: `tc qdisc show` prints it, and a root that is not the default (noqueue, or a
    multi-queue's mq/pfifo_fast) is re-added as shown."""

    netns: Path
    device: str
    run: Callable[[Path, list[str]], str] = run_tc
    previous: str = ""

    def apply(self, mbit: float) -> None:
        shown = self.run(self.netns, ["qdisc", "show", "dev", self.device, "root"]).strip()
        default = not shown or shown.split()[1] in ("noqueue", "mq", "pfifo_fast")
        self.previous = "" if default else shown
        rate = f"{max(1, round(mbit))}mbit"
        self.run(
            self.netns,
            [
                "qdisc",
                "replace",
                "dev",
                self.device,
                "root",
                "handle",
                "7e:",
                "htb",
                "default",
                "1",
            ],
        )
        self.run(
            self.netns,
            ["class", "add", "dev", self.device, "parent", "7e:", "classid", "7e:1", "htb",
             "rate", rate, "ceil", rate],
        )  # fmt: skip

    def clear(self) -> None:
        self.run(self.netns, ["qdisc", "del", "dev", self.device, "root"])
        if self.previous:  # e.g. "qdisc tbf 1: root refcnt 2 rate 100Mbit burst ... lat ..."
            words = self.previous.split()
            kind, handle, options = words[1], words[2], words[3:]
            if options[:1] == ["root"]:
                options = options[1:]
            if options[:1] == ["refcnt"]:
                options = options[2:]
            self.run(
                self.netns,
                ["qdisc", "add", "dev", self.device, "root", "handle", handle, kind, *options],
            )


def pod_link_ends(pid: int, proc: Path = PROC) -> tuple[Path, Path, str]:
    """(the pod's netns, the node's netns, the name of eth0's peer in the node) for a process of
    the pod's container."""
    pod_netns = proc / str(pid) / "ns" / "net"
    node_netns = proc / str(parent_pid(pid, proc)) / "ns" / "net"
    peer_index = netns_run(pod_netns, ["ip", "-o", "link", "show", "dev", "eth0"])
    # "3: eth0@if17: <...>": the peer's ifindex in the node after "@if"
    index = peer_index.split(":", 2)[1].split("@if", 1)[1]
    for line in netns_run(node_netns, ["ip", "-o", "link"]).splitlines():
        number, name = line.split(":", 2)[:2]
        if number.strip() == index:
            return pod_netns, node_netns, name.strip().split("@", 1)[0]
    raise K8sFaultError(f"no peer of the pod's eth0 (ifindex {index}) in its node")


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
    _shapers: dict[str, list[LinkShaper]] = field(default_factory=dict)

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
        """Both ends of the target's link at `mbit` (what it sends and what it receives)."""
        pid = (self._pids.get(target) or self._lookup(target))[0]
        pod_netns, node_netns, peer = pod_link_ends(pid, self.proc)
        shapers = [LinkShaper(pod_netns, "eth0"), LinkShaper(node_netns, peer)]
        self._shapers[target] = []
        for shaper in shapers:
            shaper.apply(mbit)
            self._shapers[target].append(shaper)

    def unslow(self, target: str) -> None:
        for shaper in self._shapers.pop(target, []):
            try:
                shaper.clear()
            except K8sFaultError:
                continue  # the pod is gone (restarted): its link went with it

    def resume_all(self) -> None:
        """SIGCONT to everything still stopped and every link at its own rate again (the run is
        over or interrupted)."""
        for target in list(self._stopped):
            self.resume(target)
        for target in list(self._shapers):
            self.unslow(target)


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


def fault_targets(
    kube: Kube,
    release: ReleaseKeeper,
    fullname: str,
    spec: Spec,
    middlewares: dict[str, dict[str, Any]],
) -> K8sFaultTargets:
    """The pods and containers the spec's faults hit (K8sFaultError names a missing one)."""
    backend = spec.topology.backend
    selector = release.component_selector(backend)
    servers = [p["metadata"]["name"] for p in kube.get("pod", "-l", selector)["items"]]
    pods = resolve(spec, servers, list(middlewares), fullname)
    targets = K8sFaultTargets(pods, lambda name: kube.get("pod", name))
    targets.prepare()
    return targets
