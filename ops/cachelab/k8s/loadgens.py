"""The loadgens' output of a Kubernetes run collected from the benchmark Job's pods: each
instance's memtier JSON, its HDR interval log and its progress lines, written into the run
folder under the local runner's names. Called from the runner's thread only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cachelab.k8s.collect import log_without_blocks
from cachelab.k8s.jobs import Jobs, completion_index, exit_code
from cachelab.results import RunStatus
from cachelab.spec import Spec

HDR_FULL_SUFFIX = "_FULL_RUN_1.txt"  # the loadgen's (memtier's) interval log of run 1


def instance_log(log: str, machine: int, instance: int) -> str:
    """A pod's log with the progress lines of its other instances left out (each instance's
    per-second series for the fault timeline)."""
    ours = f"progress machine={machine} instance={instance}: "
    return "".join(
        line
        for line in log.splitlines(keepends=True)
        if not line.startswith("progress machine=") or line.startswith(ours)
    )


class LoadgenCollector:
    """Writes the benchmark pods' results into a run folder and point.json's `loadgens`."""

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs

    def _exit_code(self, pod: dict[str, Any]) -> int | None:
        """The container's exit code, or the status its log reported with the results (a pod
        still draining its log when the runner took them)."""
        code = exit_code(pod)
        return code if code is not None else self.jobs.emitted.get(pod["metadata"]["name"])

    def collect(self, spec: Spec, run_dir: Path, record: dict[str, Any]) -> tuple[RunStatus, str]:
        """The run's status and message: partial or failed when an instance left no result."""
        instances = spec.topology.instances_per_machine
        entries: list[dict[str, Any]] = []
        missing: list[str] = []
        pods = self.jobs.pods("benchmark")
        by_index = {completion_index(p): p for p in pods}
        for machine in range(spec.topology.client_machines):
            pod = by_index.get(machine)
            if pod is None:
                missing.append(f"machine {machine}: no pod")
                continue
            name = pod["metadata"]["name"]
            log, found = self.jobs.logs_with_blocks(name, "loadgen")
            # The pod's completion index names the machine; the marker names the instance.
            blocks = {b.instance: b for b in found if b.job == "benchmark"}
            for instance in range(instances):
                index = machine * instances + instance
                text = instance_log(log_without_blocks(log), machine, instance)
                (run_dir / f"loadgen-{index}.log").write_text(text)
                block = blocks.get(str(instance))
                if block is None:
                    missing.append(f"machine {machine} instance {instance}: no result in {name}")
                    continue
                block.data()  # fails on broken JSON
                (run_dir / f"loadgen-{index}.json").write_text(block.text + "\n")
                hdr = blocks.get(f"hdr-{instance}")
                if hdr is not None:  # the interval log of --hdr-file-prefix, named as locally
                    hdr_file = run_dir / f"loadgen-{index}-hdr{HDR_FULL_SUFFIX}"
                    hdr_file.write_text(hdr.text + "\n")
                entries.append(
                    {
                        "index": index,
                        "target": "middleware" if spec.topology.middlewares else "servers",
                        "json": f"loadgen-{index}.json",
                        "hdr_prefix": f"loadgen-{index}-hdr" if hdr is not None else None,
                        "launch_epoch_ms": None,
                        "exit_code": self._exit_code(pod),
                        "pod": name,
                        "node": pod["spec"].get("nodeName"),
                    }
                )
        record["loadgens"] = entries
        if missing:
            return ("partial" if entries else "failed"), "; ".join(missing)
        return "ok", ""
