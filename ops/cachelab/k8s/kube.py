"""kubectl and helm, run as subprocesses against one namespace of one cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachelab.paths import tools_dir

# How often a waiting command's `failure` check runs (Kube._run).
FAILURE_POLL_S = 2.0


class K8sError(RuntimeError):
    """A kubectl or helm command failed, or the cluster did not reach the expected state."""


def find_helm() -> str:
    """helm from $CACHELAB_HELM, the tools `make k8s-tools` built (paths.tools_dir), or PATH."""
    candidates = [
        os.environ.get("CACHELAB_HELM", ""),
        str(tools_dir() / "bin" / "helm"),
        shutil.which("helm") or "",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    raise K8sError(
        "helm not found: run `make k8s-tools` or put helm on PATH (or set CACHELAB_HELM)"
    )


@dataclass(frozen=True)
class Kube:
    """kubectl/helm bound to a namespace. Called from the runner's thread only."""

    namespace: str
    helm_binary: str
    kubectl_binary: str = "kubectl"
    timeout_s: float = 600.0

    def _run(
        self,
        argv: list[str],
        timeout_s: float | None = None,
        failure: Callable[[], str | None] | None = None,
    ) -> str:
        """`argv`'s stdout; K8sError when it fails or outlives `timeout_s`, or as soon as
        `failure` (asked every FAILURE_POLL_S while it runs) names a reason to stop waiting."""
        deadline_s = time.monotonic() + (timeout_s or self.timeout_s)
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except FileNotFoundError:
            raise K8sError(f"{argv[0]} not found on PATH") from None
        with proc:
            while True:
                left_s = deadline_s - time.monotonic()
                poll_s = min(FAILURE_POLL_S, left_s) if failure else left_s
                try:
                    stdout, stderr = proc.communicate(timeout=max(poll_s, 0.0))
                    break
                except subprocess.TimeoutExpired:
                    problem = failure() if failure else None
                    if problem is None and time.monotonic() < deadline_s:
                        continue
                    proc.kill()
                    proc.communicate()
                    raise K8sError(problem or f"timed out: {' '.join(argv)}") from None
        if proc.returncode != 0:
            detail = (stderr or stdout).strip()
            raise K8sError(f"`{' '.join(argv[:4])} ...` failed: {detail}")
        return stdout

    def kubectl(
        self,
        *args: str,
        timeout_s: float | None = None,
        failure: Callable[[], str | None] | None = None,
    ) -> str:
        return self._run([self.kubectl_binary, "-n", self.namespace, *args], timeout_s, failure)

    def helm(
        self,
        *args: str,
        timeout_s: float | None = None,
        failure: Callable[[], str | None] | None = None,
    ) -> str:
        return self._run([self.helm_binary, "-n", self.namespace, *args], timeout_s, failure)

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def get_raw(self, path: str) -> str:
        return self._run([self.kubectl_binary, "get", "--raw", path], 30)

    def logs(self, pod: str, container: str) -> str:
        return self.kubectl("logs", pod, "-c", container, "--tail=-1")

    def cluster_facts(self) -> dict[str, Any]:
        """Server version and the nodes (name, labels, allocatable) for metadata.json."""
        facts: dict[str, Any] = {"namespace": self.namespace}
        try:
            version = json.loads(self._run([self.kubectl_binary, "version", "-o", "json"], 30))
            facts["server_version"] = version.get("serverVersion", {}).get("gitVersion")
            nodes = json.loads(self._run([self.kubectl_binary, "get", "nodes", "-o", "json"], 30))
            facts["nodes"] = [
                {
                    "name": n["metadata"]["name"],
                    "labels": n["metadata"].get("labels", {}),
                    "allocatable": n["status"].get("allocatable", {}),
                }
                for n in nodes["items"]
            ]
        except (K8sError, json.JSONDecodeError, KeyError) as error:
            facts["error"] = str(error)
        return facts
