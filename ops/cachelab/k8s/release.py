"""The testbed release as a Kubernetes run's points need it: upgraded to each point's values only
when they or the release changed, and what a preload's data depends on, so that a point whose
servers still hold the last preload can skip it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cachelab.k8s.kube import K8sError, Kube
from cachelab.spec import Spec

# Why a container cannot start because its image cannot be had; the kubelet says so within
# seconds of the first pull (ImagePullBackOff then repeats it with growing back-off;
# ErrImageNeverPull: pullPolicy Never and the node does not have it).
PULL_FAILURES = frozenset(
    {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}
)

PRELOAD_KEPT = (
    "the servers hold the previous point's preload: same release revision, server pods neither"
    " restarted nor replaced, same protocol, keys and value size"
)

DESCRIPTION_PREFIX = "cachelab inputs sha256:"  # the release's description: what it was made of


def inputs_digest(chart: Path, values_files: list[Path]) -> str:
    """sha256 over the chart's files (paths and contents) and the values files' text, in order:
    equal digests install equal releases."""
    digest = hashlib.sha256()
    for path in sorted(p for p in chart.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(chart)).encode() + b"\0" + path.read_bytes() + b"\0")
    for path in values_files:
        digest.update(b"values\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def pod_identities(pods: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """Each pod's uid and its containers' restarts, sorted: equal lists, the same processes."""
    return sorted(
        (
            pod["metadata"]["uid"],
            sum(c.get("restartCount", 0) for c in pod["status"].get("containerStatuses", [])),
        )
        for pod in pods
    )


def rolled_out(workload: dict[str, Any]) -> bool:
    """Whether a Deployment or StatefulSet has every replica of its current spec ready."""
    status, wanted = workload.get("status", {}), workload["spec"].get("replicas", 1)
    current = status.get("observedGeneration", 0) >= workload["metadata"].get("generation", 0)
    ready = [status.get(k, 0) for k in ("updatedReplicas", "readyReplicas")]
    revisions = status.get("currentRevision") == status.get("updateRevision")
    settled = status.get("replicas", 0) == wanted  # no old pod still terminating
    return current and settled and revisions and ready == [wanted, wanted]


def _revision(status: dict[str, Any]) -> int | None:
    revision = status.get("version")
    return revision if isinstance(revision, int) else None


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
        self._revision: int | None = None  # the revision the last upgrade made or found
        self._values: tuple[int | None, dict[str, Any]] | None = None  # values of a revision

    def upgrade(self, values_file: Path) -> bool:
        """`helm upgrade --install --wait` with `values_file` and the extra values files, the
        release described by a digest of the chart's files and the values files' text; skipped
        (False) when the deployed release already carries that digest (a repetition, a point that
        varies only the clients, or an earlier run or search step at the same values), and then
        only the release's Deployments and StatefulSets are waited for, as `--wait` would."""
        files = [values_file, *self.extra_values]
        description = DESCRIPTION_PREFIX + inputs_digest(self.chart, files)
        status = self.status()
        info = status.get("info", {}) if status is not None else {}
        if (
            status is not None
            and info.get("status") == "deployed"
            and info.get("description") == description
        ):
            self._wait_rolled_out()
            self._revision = _revision(status)
            return False
        self.kube.helm(
            "upgrade", "--install", self.name, str(self.chart),
            *[a for v in files for a in ("-f", str(v))],
            "--description", description,
            "--wait", "--timeout", f"{int(self.timeout_s)}s", timeout_s=self.timeout_s + 30,
            failure=self.image_pull_failure,
        )  # fmt: skip
        self._revision = self.revision()
        return True

    @property
    def upgraded_revision(self) -> int | None:
        """The revision the last `upgrade` made or found (None before the first)."""
        return self._revision

    def values(self) -> dict[str, Any]:
        """The release's computed values (`helm get values --all`), read once per revision."""
        if self._values is None or self._values[0] != self._revision or self._revision is None:
            read = json.loads(self.kube.helm("get", "values", self.name, "--all", "-o", "json"))
            self._values = (self._revision, dict(read))
        return self._values[1]

    def status(self) -> dict[str, Any] | None:
        """`helm status` of the release (None if it has none)."""
        try:
            return dict(json.loads(self.kube.helm("status", self.name, "-o", "json")))
        except K8sError:
            return None

    def revision(self) -> int | None:
        """The release's current revision (None if it has none)."""
        status = self.status()
        return _revision(status) if status is not None else None

    def image_pull_failure(self) -> str | None:
        """What stops a rollout of the release for good: a pod of it whose image cannot be
        pulled (None while there is none, or the pods cannot be read just now)."""
        try:
            pods = self.kube.get("pods", "-l", f"app.kubernetes.io/instance={self.name}")
        except K8sError:
            return None
        return pull_failure(pods["items"])

    def component_selector(self, component: str) -> str:
        """The label selector of the release's pods of `component` (memcached, redis,
        middleware)."""
        return component_selector(self.name, component)

    def preload_key(self, spec: Spec) -> str:
        """What a preload's data depends on: the revision of the last upgrade (servers, routing,
        replication), each server pod's identity and restarts (a restarted or replaced server is
        empty), and the keys and values the preload writes. An equal key: the data is there."""
        selector = self.component_selector(spec.topology.backend)
        servers = pod_identities(self.kube.get("pods", "-l", selector)["items"])
        return json.dumps(
            {
                "revision": self._revision,
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
        previous point deleted is back and ready): one look at their status, and `kubectl
        rollout status` for those that are not yet."""
        workloads = self.kube.get(
            "deployments,statefulsets", "-l", f"app.kubernetes.io/instance={self.name}"
        )["items"]
        names = [
            f"{w['kind'].lower()}/{w['metadata']['name']}" for w in workloads if not rolled_out(w)
        ]
        for name in names:
            self.kube.kubectl(
                "rollout", "status", name, f"--timeout={int(self.timeout_s)}s",
                timeout_s=self.timeout_s + 30, failure=self.image_pull_failure,
            )  # fmt: skip


def pull_failure(pods: list[dict[str, Any]]) -> str | None:
    """The first container of `pods` whose image cannot be pulled, as a message naming the image,
    the kubelet's reason, and how images get into the registry the release names."""
    for pod in pods:
        status = pod.get("status", {})
        for container in [
            *status.get("initContainerStatuses", []),
            *status.get("containerStatuses", []),
        ]:
            waiting = container.get("state", {}).get("waiting") or {}
            if waiting.get("reason") in PULL_FAILURES:
                return (
                    f"pod {pod['metadata']['name']}: image {container['image']} cannot be pulled"
                    f" ({waiting['reason']}: {waiting.get('message', '').strip()}); push the"
                    " project's images to the registry the release names (global.imageRegistry)"
                    " with `make push REGISTRY=<registry>` (docs/kubernetes.md, Images)"
                )
    return None
