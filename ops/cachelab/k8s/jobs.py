"""The point's Jobs of a Kubernetes run: `preload` and the suspended `benchmark`, applied from a
kustomization of manifests/base on the client pool's nodes, released, waited for, and their pods'
logs read with the result blocks in them (cachelab.k8s.collect). Called from the runner's thread
only."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from cachelab.k8s import plan
from cachelab.k8s.collect import ResultBlock, UnterminatedBlock, result_blocks
from cachelab.k8s.images import registry_of
from cachelab.k8s.kube import K8sError, Kube
from cachelab.spec import Spec

BARRIER_TIMEOUT_S = 600  # manifests/base: BARRIER_TIMEOUT_S
POLL_S = 1.0  # how often the runner looks at pods while it waits for them to start or go
WAIT_POLL_S = 0.3  # how often it looks at a Job's pods while it waits for them to finish
JOB_EVERY = 10  # and at the Job itself, every this many looks (its failure conditions)
LOG_READS = 5  # reads of a finished pod's log that ends inside a result block
LOG_REREAD_S = 2.0


def with_job_resources(kustomization: str, resources: dict[str, Any]) -> str:
    """The kustomization with the Jobs' container resources set to the release's client pool's
    (`nodePools.sizes.<pool>.resources`): the pool's nodes size them, as they size the chart's
    pods, also where a node is smaller than the Azure size of the clients-pool component."""
    doc = yaml.safe_load(kustomization)
    path = "/spec/template/spec/containers/0/resources"
    operation = [{"op": "replace", "path": path, "value": resources}]
    doc["patches"].append({"target": {"kind": "Job"}, "patch": yaml.safe_dump(operation)})
    return str(yaml.safe_dump(doc, sort_keys=False))


def completion_index(pod: dict[str, Any]) -> int:
    annotations = pod["metadata"].get("annotations", {})
    return int(annotations.get("batch.kubernetes.io/job-completion-index", -1))


def exit_code(pod: dict[str, Any]) -> int | None:
    for cs in pod["status"].get("containerStatuses", []):
        terminated = cs.get("state", {}).get("terminated")
        if terminated is not None:
            return int(terminated.get("exitCode", 0))
    return None


# run-benchmark.sh's last line before its log drain: every result block is in the log above it.
RESULTS_EMITTED = re.compile(r"^\[[\w-]+\] results emitted: status (\d+)$", re.MULTILINE)
EMITTED_TAIL_LINES = 5


def emitted_status(log_tail: str) -> int | None:
    """The exit status a benchmark pod's log says its results were emitted with, or None."""
    found = RESULTS_EMITTED.findall(log_tail)
    return int(found[-1]) if found else None


def succeeded_indices(pods: list[dict[str, Any]]) -> set[int]:
    """The completion indices that have a pod in phase Succeeded."""
    return {completion_index(p) for p in pods if p["status"].get("phase") == "Succeeded"}


class Jobs:
    """The Jobs of one point in the runner's namespace, for the release `target.release`."""

    def __init__(self, kube: Kube, target: plan.Target, manifests: Path) -> None:
        self.kube = kube
        self.target = target
        self.manifests = manifests
        self.last_pods: list[dict[str, Any]] = []  # the pods the last `wait` saw last
        # pod name -> the status its log reported with its results (a pod still draining its log)
        self.emitted: dict[str, int] = {}

    def delete(self) -> None:
        """The previous point's Jobs gone (and their pods)."""
        self.kube.kubectl(
            "delete", "job", "preload", "benchmark",
            "--ignore-not-found", "--cascade=foreground", "--wait=true",
        )  # fmt: skip

    def apply(
        self, spec: Spec, labels: dict[str, str], k8s_dir: Path, release_values: dict[str, Any]
    ) -> str:
        """The point's Jobs (preload, suspended benchmark) applied on the client pool's nodes,
        by the release's values (`helm get values --all`); returns the node label key of its
        pools."""
        pools = release_values["nodePools"]
        label_key = str(pools["labelKey"])
        client_pool = pools["sizes"].get(spec.topology.hosts.client, {})
        label_value = str(client_pool.get("labelValue", spec.topology.hosts.client))
        text = plan.kustomization(
            spec, self.target, self.manifests, k8s_dir, labels, label_key, label_value,
            registry_of(release_values),
        )  # fmt: skip
        if client_pool.get("resources"):
            text = with_job_resources(text, client_pool["resources"])
        (k8s_dir / "kustomization.yaml").write_text(text)
        self.kube.kubectl("apply", "-k", str(k8s_dir))
        return label_key

    def release_benchmark(self) -> None:
        """The benchmark Job, created suspended, starts."""
        self.kube.kubectl(
            "patch", "job/benchmark", "--type=merge", "-p", '{"spec":{"suspend":false}}'
        )

    def wait(
        self,
        name: str,
        timeout_s: float,
        each_poll: Callable[[], None] | None = None,
        busy_s: float = 0.0,
        emits: bool = False,
    ) -> None:
        """Until every index of the Job has a Succeeded pod, or the Job says it completed
        (K8sError if it fails or times out); `each_poll` runs once per poll while it has not.
        The pods are what it watches: the Job controller marks the Job complete seconds after
        its last pod has exited, and nothing the runner does next needs that mark. For the
        first `busy_s` seconds (the Job cannot be done yet) it looks every POLL_S, so that its
        own kubectl calls take little of the CPU the run measures, then every WAIT_POLL_S.
        With `emits` (the benchmark), after `busy_s` it also reads the tail of each running
        pod's log and returns once every index has written its results with status 0 (the pod
        then drains its log and exits by itself)."""
        began = time.monotonic()
        deadline = began + timeout_s
        job = self.kube.get("job", name)
        completions = int(job["spec"].get("completions", 1))
        for poll in itertools.count():
            pods = self.pods(name)
            self.last_pods = pods
            if succeeded_indices(pods) >= set(range(completions)):
                return
            past_busy = time.monotonic() - began >= busy_s
            if emits and past_busy and self._all_emitted(pods, completions):
                return
            if any(p["status"].get("phase") == "Failed" for p in pods) or poll % JOB_EVERY == 0:
                job = self.kube.get("job", name)
                self._raise_if_failed(name, job)
                if job.get("status", {}).get("succeeded", 0) >= completions:
                    return
            if time.monotonic() > deadline:
                job_status = job.get("status", {})
                raise K8sError(
                    f"job {name} not complete after {timeout_s:.0f}s "
                    f"(active {job_status.get('active', 0)}, succeeded "
                    f"{len(succeeded_indices(pods))} of {completions}); see "
                    f"kubectl -n {self.kube.namespace} describe job {name}"
                )
            if each_poll is not None:
                each_poll()
            time.sleep(POLL_S if time.monotonic() - began < busy_s else WAIT_POLL_S)

    def _all_emitted(self, pods: list[dict[str, Any]], completions: int) -> bool:
        """Whether every index's pod has written its results with status 0 (read from the logs
        of the running ones; their statuses kept in `emitted`)."""
        indices = set()
        for pod in pods:
            name, phase = pod["metadata"]["name"], pod["status"].get("phase")
            if phase == "Succeeded":
                indices.add(completion_index(pod))
                continue
            if phase != "Running":
                return False
            container = pod["spec"]["containers"][0]["name"]
            try:
                tail = self.kube.kubectl(
                    "logs", name, "-c", container, f"--tail={EMITTED_TAIL_LINES}", timeout_s=10
                )
            except K8sError:
                return False
            status = emitted_status(tail)
            if status != 0:
                return False
            self.emitted[name] = status
            indices.add(completion_index(pod))
        return indices >= set(range(completions))

    def _raise_if_failed(self, name: str, job: dict[str, Any]) -> None:
        for cond in job.get("status", {}).get("conditions", []):
            if cond["type"] == "Failed" and cond["status"] == "True":
                raise K8sError(
                    f"job {name} failed ({cond.get('reason')}: {cond.get('message')})"
                    f"{self._failed_pod_logs(name)}"
                )

    def _failed_pod_logs(self, job: str) -> str:
        pods = self.kube.get("pods", "-l", f"batch.kubernetes.io/job-name={job}")["items"]
        tails = []
        for pod in pods:
            if pod["status"].get("phase") == "Failed":
                name = pod["metadata"]["name"]
                container = pod["spec"]["containers"][0]["name"]
                try:
                    log = self.kube.logs(name, container)
                except K8sError as error:
                    log = str(error)
                tails.append(f"\n--- {name} ---\n" + "\n".join(log.splitlines()[-20:]))
        return "".join(tails)

    def pods(self, job: str) -> list[dict[str, Any]]:
        """The Job's pods by completion index."""
        pods = self.kube.get("pods", "-l", f"batch.kubernetes.io/job-name={job}")["items"]
        return sorted(pods, key=completion_index)

    def run_pods(self) -> list[dict[str, Any]]:
        """The release's pods and the benchmark Job's: what the usage sampler reads."""
        release = self.kube.get("pods", "-l", f"app.kubernetes.io/instance={self.target.release}")
        return [*release["items"], *self.pods("benchmark")]

    def logs_with_blocks(self, pod: str, container: str) -> tuple[str, list[ResultBlock]]:
        """A finished pod's log and its result blocks. A log that ends inside a block is read
        again (LOG_READS times, LOG_REREAD_S apart): on a busy node the runtime may still be
        writing a container's last lines when its Job is already complete."""
        for attempt in range(1, LOG_READS + 1):
            log = self.kube.logs(pod, container)
            try:
                return log, result_blocks(log)
            except UnterminatedBlock:
                if attempt == LOG_READS:
                    raise
                time.sleep(LOG_REREAD_S)
        raise AssertionError("unreachable")
