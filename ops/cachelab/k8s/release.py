"""The testbed release as a Kubernetes run's points need it: upgraded to each point's values only
when they or the release changed, and what a preload's data depends on, so that a point whose
servers still hold the last preload can skip it."""

from __future__ import annotations

import json
from pathlib import Path

from cachelab.k8s.kube import K8sError, Kube
from cachelab.spec import Spec

PRELOAD_KEPT = (
    "the servers hold the previous point's preload: same release revision, server pods neither"
    " restarted nor replaced, same protocol, keys and value size"
)


def component_selector(release: str, component: str) -> str:
    """The label selector of the pods of `component` (memcached, redis, middleware) of the
    release named `release`."""
    return f"app.kubernetes.io/instance={release},app.kubernetes.io/component={component}"


class ReleaseKeeper:
    """One Helm release of charts/testbed in the runner's namespace. Called from the runner's
    thread only."""

    def __init__(
        self, kube: Kube, name: str, chart: Path, extra_values: list[Path], timeout_s: float
    ) -> None:
        self.kube = kube
        self.name = name
        self.chart = chart
        self.extra_values = extra_values
        self.timeout_s = timeout_s
        # The values files' text of the last upgrade and the revision it made: an unchanged pair
        # skips the next upgrade.
        self._upgraded: tuple[str, int | None] | None = None

    def upgrade(self, values_file: Path) -> bool:
        """`helm upgrade --install --wait` with `values_file` and the extra values files; skipped
        (False) when neither they nor the release's revision changed since the last upgrade (a
        repetition, or a point that varies only the clients), and then only the release's
        Deployments and StatefulSets are waited for, as `--wait` would."""
        files = [values_file, *self.extra_values]
        inputs = "\n---\n".join(v.read_text() for v in files)
        if self._upgraded is not None and self._upgraded == (inputs, self.revision()):
            self._wait_rolled_out()
            return False
        self.kube.helm(
            "upgrade", "--install", self.name, str(self.chart),
            *[a for v in files for a in ("-f", str(v))],
            "--wait", "--timeout", f"{int(self.timeout_s)}s", timeout_s=self.timeout_s + 30,
        )  # fmt: skip
        self._upgraded = (inputs, self.revision())
        return True

    def revision(self) -> int | None:
        """The release's current revision (None if it has none)."""
        try:
            status = json.loads(self.kube.helm("status", self.name, "-o", "json"))
        except K8sError:
            return None
        revision = status.get("version")
        return revision if isinstance(revision, int) else None

    def component_selector(self, component: str) -> str:
        """The label selector of the release's pods of `component` (memcached, redis,
        middleware)."""
        return component_selector(self.name, component)

    def preload_key(self, spec: Spec) -> str:
        """What a preload's data depends on: the revision of the last upgrade (servers, routing,
        replication), each server pod's identity and restarts (a restarted or replaced server is
        empty), and the keys and values the preload writes. An equal key: the data is there."""
        selector = self.component_selector(spec.topology.backend)
        servers = sorted(
            (
                pod["metadata"]["uid"],
                sum(c.get("restartCount", 0) for c in pod["status"].get("containerStatuses", [])),
            )
            for pod in self.kube.get("pods", "-l", selector)["items"]
        )
        return json.dumps(
            {
                "revision": self._upgraded[1] if self._upgraded is not None else None,
                "servers": servers,
                "workload": spec.workload.model_dump(
                    mode="json", include={"protocol", "value_bytes", "key_maximum"}
                ),
                "preload": spec.preload.model_dump(mode="json"),
            },
            sort_keys=True,
        )

    def _wait_rolled_out(self) -> None:
        """Every Deployment and StatefulSet of the release rolled out (a pod that a fault of the
        previous point deleted is back and ready)."""
        names = self.kube.kubectl(
            "get", "deployments,statefulsets", "-o", "name",
            "-l", f"app.kubernetes.io/instance={self.name}",
        ).split()  # fmt: skip
        for name in names:
            self.kube.kubectl(
                "rollout", "status", name, f"--timeout={int(self.timeout_s)}s",
                timeout_s=self.timeout_s + 30,
            )  # fmt: skip
