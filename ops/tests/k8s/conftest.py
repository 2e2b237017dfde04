"""Fixtures of the Kubernetes tier: one throwaway kwok cluster per test session.

The cluster (scripts/kwok-cluster.sh) has a real etcd, kube-apiserver, kube-controller-manager
and kube-scheduler; kwok plays the kubelets of the nodes of pools a1 (1 cpu, 1.75 GiB), a2 (2 cpu,
3.5 GiB) and a4 (8 cpu, 14 GiB). Its name is unique and its ports are picked free,
so parallel test sessions cannot collide; it is deleted at the end of the session, also on failure.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .tools import CHART, ROOT, TOOLS_BIN, run, tool

# Namespaces whose loadgen containers get the recorded memtier JSON as their log (ClusterLogs):
# the runner's test, and the test of `cachelab collect` on an overlay's Jobs.
RECORDED_LOGS_NAMESPACE = "cachelab-run"
COLLECT_NAMESPACE = "cachelab-collect"
REPEAT_NAMESPACE = "cachelab-repeat"
RECORDED_JSON = Path(__file__).parent / "data" / "memtier-sample.json"


@dataclass(frozen=True)
class Cluster:
    """A running kwok cluster: kubectl and helm bound to its kubeconfig."""

    name: str
    kubeconfig: Path
    workdir: Path

    @property
    def env(self) -> dict[str, str]:
        return {"KUBECONFIG": str(self.kubeconfig)}

    def kubectl(self, *args: str | Path, check: bool = True, timeout_s: float = 120) -> str:
        return run(["kubectl", *args], env=self.env, check=check, timeout_s=timeout_s).stdout

    def helm(self, *args: str | Path, check: bool = True, timeout_s: float = 180) -> str:
        return run([tool("helm"), *args], env=self.env, check=check, timeout_s=timeout_s).stdout

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def namespace(self, name: str) -> str:
        self.kubectl("create", "namespace", name)
        return name

    def install(self, namespace: str, *values: Path, release: str = "testbed") -> None:
        files = [a for v in values for a in ("-f", str(v))]
        self.helm("install", release, CHART, "-n", namespace, *files, "--wait", "--timeout", "90s")

    def delete_namespace(self, name: str) -> None:
        # Not waited for: the pools have room for the next test meanwhile (POOL_NODES below).
        self.kubectl("delete", "namespace", name, "--wait=false")


def cri_log(lines: list[str]) -> str:
    """Lines in the CRI log format that kwok serves as a container log."""
    stamp = "2025-11-21T12:00:00.000000000Z"
    return "".join(f"{stamp} stdout F {line}\n" for line in lines)


def recorded_benchmark_log() -> str:
    """Log of a benchmark pod with one memtier instance: the recorded JSON between markers."""
    body = RECORDED_JSON.read_text().splitlines()
    begin = "=== cachelab-result-begin job=benchmark machine=0 instance=0 ==="
    end = "=== cachelab-result-end job=benchmark machine=0 instance=0 ==="
    return cri_log(
        [
            "[benchmark-0] barrier passed",
            begin,
            *body,
            end,
            "[benchmark-0] results emitted: status 0",
        ]
    )


def cluster_logs_config(workdir: Path) -> Path:
    """kwokctl config: kwok serves recorded logs to the Jobs of RECORDED_LOGS_NAMESPACE."""
    log_file = workdir / "benchmark.log"
    log_file.write_text(recorded_benchmark_log())
    preload_file = workdir / "preload.log"
    preload_file.write_text(cri_log(["[preload-0] preload done: zero misses"]))
    config = workdir / "cluster-logs.yaml"
    docs = [
        {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "ClusterLogs",
            "metadata": {"name": f"recorded-{container}"},
            "spec": {
                "selector": {
                    "matchNamespaces": [
                        RECORDED_LOGS_NAMESPACE,
                        COLLECT_NAMESPACE,
                        REPEAT_NAMESPACE,
                    ]
                },
                "logs": [{"containers": [container], "logsFile": str(path), "follow": False}],
            },
        }
        for container, path in (("loadgen", log_file), ("preload", preload_file))
    ]
    config.write_text("\n---\n".join(json.dumps(d) for d in docs) + "\n")
    return config


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    for name in ("kwokctl", "kwok", "kube-apiserver", "helm"):
        tool(name)  # fails early with `make k8s-tools` if one is missing
    workdir = tmp_path_factory.mktemp("kwok")
    name = f"cachelab-t{os.getpid()}-{secrets.token_hex(3)}"
    env = {
        "TOOLS_DIR": str(TOOLS_BIN.parent),
        "KWOK_WORKDIR": str(workdir),
        "KWOK_CONFIG": str(cluster_logs_config(workdir)),
        # Enough nodes that a test never waits for the previous test's pods to go away.
        "POOL_NODES": "a1=12 a2=12 a4=8",
    }
    script = ROOT / "scripts" / "kwok-cluster.sh"
    try:
        out = run([script, "up", name], env=env, timeout_s=300).stdout
        kubeconfig = Path(out.strip().splitlines()[-1])
        yield Cluster(name=name, kubeconfig=kubeconfig, workdir=workdir)
    finally:
        run([script, "down", name], env=env, check=False, timeout_s=120)
