"""Fresh servers for a Kubernetes run (`run.restart_servers`): the release's server pods deleted
and recreated by their StatefulSet. Called from the runner's thread only."""

from __future__ import annotations

import time

from cachelab.k8s import plan
from cachelab.k8s.jobs import POLL_S
from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.release import ReleaseKeeper
from cachelab.spec import Spec


class ServerRestarts:
    """Restarts the release's server pods and waits until they are ready again."""

    def __init__(
        self, kube: Kube, target: plan.Target, release: ReleaseKeeper, timeout_s: float
    ) -> None:
        self.kube = kube
        self.target = target
        self.release = release
        self.timeout_s = timeout_s

    def restart(self, spec: Spec) -> None:
        """Fresh (empty) servers for this run: delete the server pods at once (the StatefulSet's
        Parallel pod management recreates them together) and wait until all are ready again."""
        backend = spec.topology.backend
        selector = self.release.component_selector(backend)
        old_uids = self._pod_uids(selector)
        # Not `--wait=true`: the StatefulSet recreates the pods under the same names at once, and
        # kubectl's wait for deletion was seen to hang on that for good (kwok, kubectl 1.32).
        # Wait instead, bounded, until no pod with an old UID is left.
        self.kube.kubectl("delete", "pod", "-l", selector, "--wait=false")
        deadline = time.monotonic() + self.timeout_s
        while old_uids & self._pod_uids(selector):
            if time.monotonic() > deadline:
                raise K8sError(
                    f"server pods ({selector}) still not deleted after {self.timeout_s:.0f} s"
                )
            time.sleep(POLL_S)
        self.kube.kubectl(
            "rollout", "status", f"statefulset/{self.target.fullname}-{backend}",
            f"--timeout={int(self.timeout_s)}s", timeout_s=self.timeout_s + 30,
        )  # fmt: skip

    def _pod_uids(self, selector: str) -> set[str]:
        pods = self.kube.get("pod", "-l", selector)
        return {str(p["metadata"]["uid"]) for p in pods.get("items", [])}
