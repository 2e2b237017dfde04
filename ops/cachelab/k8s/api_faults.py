"""The faults of a Kubernetes run carried out through the API server alone, on any cluster where
the user may delete pods, add ephemeral containers to them and exec into them (what `kubectl
debug` needs): the `api` way, beside cachelab.k8s.faults' `node` way (signals and tc from this
machine, the local cluster only).

- kill and restart delete the target's pod (`kubectl delete pod --grace-period=1`): its
  StatefulSet or Deployment makes a new one at once; restart's end waits until the new pod is
  ready. The new pod comes when the controller and the node make it, not after `for_s`.
- stop and resume send SIGSTOP and SIGCONT to the target's server process from an ephemeral
  container (the release's helper image, a busybox with `kill` and `pidof`) added to its pod
  before the benchmark starts, with `kubectl exec` into it. The server is its container's PID 1,
  and the kernel drops SIGSTOP sent to a PID namespace's init from inside that namespace (which
  is where `kubectl debug --target` puts the ephemeral container), so the release's pods then
  share one process namespace (the chart's `shareProcessNamespace`): the pause process
  is init and the server an ordinary process. The server images have no shell and no `kill`, so
  `kubectl exec` into the target container itself cannot do it.
- slow is not possible through the API alone (a pod's link is shaped in the node's network
  namespace); `api_fault_problem` says so before anything runs.

Called from the injector's thread; `prepare` from the runner's.
"""

from __future__ import annotations

import functools
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cachelab.k8s.faults import READY_TIMEOUT_S, K8sFaultError, resolve
from cachelab.k8s.images import image_reference
from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.release import PULL_FAILURES, ReleaseKeeper
from cachelab.spec import Spec

SIGNALLER = "cachelab-signal"  # the ephemeral containers' name prefix
SIGNALLER_LIFETIME_S = 86_400  # the ephemeral container's sleep (it cannot be removed)
SIGNALLER_START_S = 120.0
API_ACTIONS = ("stop", "kill", "restart")
PROCESS_NAMES = {"memcached": "memcached", "redis": "redis-server", "middleware": "java"}
# What `kubectl auth can-i` must allow for each action of the api way.
API_VERBS: dict[str, tuple[tuple[str, str], ...]] = {
    "kill": (("delete", "pods"),),
    "restart": (("delete", "pods"),),
    "stop": (("update", "pods/ephemeralcontainers"), ("create", "pods/exec")),
}


def needs_shared_processes(spec: Spec) -> bool:
    """Whether the api way needs the release's pods to share a process namespace (a stop)."""
    return any(f.action == "stop" for f in spec.faults)


def api_fault_problem(spec: Spec, can_i: Callable[[str, str], bool]) -> str | None:
    """Why the spec's faults cannot run through the API on this cluster (one line naming the
    fault's action and what the cluster lacks), or None. `can_i(verb, resource)` answers as
    `kubectl auth can-i` does."""
    for index, fault in enumerate(spec.faults):
        where = f"faults.{index}: {fault.action} on {fault.target}"
        if fault.action not in API_ACTIONS:
            return (
                f"{where}: the Kubernetes API has no way to shape a pod's link (it needs the "
                "node's network namespace: --faults-via node on the local cluster; on another "
                "cluster see docs/kubernetes.md)"
            )
        for verb, resource in API_VERBS[fault.action]:
            if not can_i(verb, resource):
                return f"{where}: this cluster does not let you {verb} {resource} here"
    return None


def _ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def signaller_running(pod: dict[str, Any], name: str) -> bool:
    """Whether the pod's ephemeral container `name` runs; K8sFaultError at once when the
    kubelet cannot pull its image (it would wait in back-off until the deadline)."""
    for status in pod.get("status", {}).get("ephemeralContainerStatuses", []):
        if status.get("name") != name:
            continue
        state = status.get("state", {})
        waiting = state.get("waiting", {})
        if waiting.get("reason") in PULL_FAILURES:
            raise K8sFaultError(
                f"the ephemeral container {name} in pod {pod['metadata']['name']}: "
                f"{waiting['reason']}: {waiting.get('message', '')} (the release's helper image "
                "comes from its global.imageRegistry: `make push REGISTRY=<registry>`)"
            )
        return "running" in state
    return False


@dataclass
class ApiFaultTargets:
    """Targets by name: (pod, container), and the label selector of each target's role (to find
    the pod a controller made anew). `image` is the helper image of the ephemeral containers.
    Called from the injector's thread; `prepare` from the runner's, before the injector runs."""

    kube: Kube
    pods: dict[str, tuple[str, str]]
    selectors: dict[str, str]
    image: str
    stops: frozenset[str] = frozenset()  # the targets some fault stops
    _signallers: dict[str, str] = field(default_factory=dict)  # target -> ephemeral container
    _pids: dict[str, int] = field(default_factory=dict)
    _stopped: set[str] = field(default_factory=set)
    _deleted: dict[str, str] = field(default_factory=dict)  # target -> uid of the deleted pod

    def prepare(self) -> None:
        """An ephemeral container in the pod of every target that a fault stops, running, and
        the target's server process found (the runner's thread, before the benchmark)."""
        for target in sorted(self.stops):
            self._add_signaller(target)

    def _add_signaller(self, target: str) -> None:
        pod_name, container = self.pods[target]
        pod = self.kube.get("pod", pod_name)
        taken = {c["name"] for c in pod["spec"].get("ephemeralContainers", [])}
        name = next(
            f"{SIGNALLER}-{n}" for n in range(len(taken) + 1) if f"{SIGNALLER}-{n}" not in taken
        )
        self.kube.kubectl(
            "debug", pod_name, "-c", name, f"--image={self.image}", f"--target={container}",
            "--profile=restricted", "--", "sleep", str(SIGNALLER_LIFETIME_S), timeout_s=60,
        )  # fmt: skip
        deadline = time.monotonic() + SIGNALLER_START_S
        while not signaller_running(self.kube.get("pod", pod_name), name):
            if time.monotonic() > deadline:
                raise K8sFaultError(
                    f"{target}: the ephemeral container {name} in pod {pod_name} did not run "
                    f"within {SIGNALLER_START_S:.0f} s (kubectl describe pod {pod_name})"
                )
            time.sleep(0.5)
        process = PROCESS_NAMES.get(container, container)
        found = self._exec(target, name, "pidof", process).split()
        pids = [int(p) for p in found if p.isdigit() and int(p) != 1]
        if not pids:
            raise K8sFaultError(
                f"{target}: no {process} process other than init seen from {name} in pod "
                f"{pod_name} (does the pod share its process namespace? "
                "shareProcessNamespace)"
            )
        self._signallers[target] = name
        self._pids[target] = min(pids)

    def _exec(self, target: str, signaller: str, *command: str) -> str:
        pod_name = self.pods[target][0]
        try:
            return self.kube.kubectl(
                "exec", pod_name, "-c", signaller, "--", *command, timeout_s=30
            )
        except K8sError as error:
            raise K8sFaultError(
                f"{target}: {' '.join(command)} in pod {pod_name}: {error}"
            ) from None

    def _signal(self, target: str, signum: signal.Signals) -> int:
        if target not in self._signallers:
            self._add_signaller(target)
        pid = self._pids[target]
        self._exec(target, self._signallers[target], "kill", f"-{signum.name[3:]}", str(pid))
        return pid

    def stop(self, target: str) -> int:
        pid = self._signal(target, signal.SIGSTOP)
        self._stopped.add(target)
        return pid

    def resume(self, target: str) -> None:
        if target in self._stopped:
            self._signal(target, signal.SIGCONT)
            self._stopped.discard(target)

    def kill(self, target: str) -> int:
        """Deletes the target's pod (its controller makes a new one); 0: no pid is known."""
        pod_name = self.pods[target][0]
        pod = self.kube.get("pod", pod_name)
        self._deleted[target] = pod["metadata"]["uid"]
        self.kube.kubectl("delete", "pod", pod_name, "--grace-period=1", "--wait=false")
        self._signallers.pop(target, None)  # went with the pod
        self._stopped.discard(target)
        return self._pids.pop(target, 0)

    def start_again(self, target: str) -> int:
        """Waits until the pod the controller made instead of the deleted one is ready (a server
        keeps its StatefulSet name; a middleware gets a new one, which becomes the target's)."""
        gone = self._deleted.get(target, "")
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            pods = self.kube.get("pods", "-l", self.selectors[target])["items"]
            known = {name for name, _ in self.pods.values()}
            for pod in pods:
                meta = pod["metadata"]
                fresh = meta["uid"] != gone and "deletionTimestamp" not in meta
                if (
                    fresh
                    and _ready(pod)
                    and (meta["name"] == self.pods[target][0] or meta["name"] not in known)
                ):
                    self.pods[target] = (meta["name"], self.pods[target][1])
                    return 0
            time.sleep(0.5)
        raise K8sFaultError(
            f"{target}: no new pod ready {READY_TIMEOUT_S:.0f} s after its deletion"
        )

    def slow(self, target: str, mbit: float) -> None:
        raise K8sFaultError(
            f"{target}: slow needs the node's network namespace (--faults-via node)"
        )

    def unslow(self, target: str) -> None:
        """Nothing was slowed."""

    def resume_all(self) -> None:
        """SIGCONT to every target still stopped (the run is over or interrupted)."""
        for target in sorted(self._stopped):
            try:
                self.resume(target)
            except K8sFaultError:
                continue  # its pod is gone


def can_i(kube: Kube) -> Callable[[str, str], bool]:
    """`kubectl auth can-i VERB RESOURCE` in the runner's namespace, as a predicate (each
    question asked once)."""

    @functools.cache
    def ask(verb: str, resource: str) -> bool:
        try:
            return kube.kubectl("auth", "can-i", verb, resource, timeout_s=30).strip() == "yes"
        except K8sError:
            return False  # kubectl exits 1 with "no"

    return ask


def helper_image(values: dict[str, Any]) -> str:
    """The release's helper image (`helm get values --all`'s `helper.image`), moved by its
    `global.imageRegistry` as the chart moves it."""
    return image_reference(values["helper"]["image"], values)


def api_fault_targets(
    kube: Kube,
    release: ReleaseKeeper,
    fullname: str,
    spec: Spec,
    middlewares: dict[str, dict[str, Any]],
    release_values: dict[str, Any],
) -> ApiFaultTargets:
    """The pods the spec's faults hit, an ephemeral container running in each one a fault
    stops (K8sFaultError names a missing pod or a container that did not start)."""
    backend = spec.topology.backend
    selector = release.component_selector(backend)
    servers = [p["metadata"]["name"] for p in kube.get("pod", "-l", selector)["items"]]
    pods = resolve(spec, servers, list(middlewares), fullname)
    selectors = {
        target: release.component_selector(backend if target.startswith("server") else "middleware")
        for target in pods
    }
    targets = ApiFaultTargets(
        kube,
        pods,
        selectors,
        helper_image(release_values),
        stops=frozenset(f.target for f in spec.faults if f.action == "stop"),
    )
    targets.prepare()
    return targets
