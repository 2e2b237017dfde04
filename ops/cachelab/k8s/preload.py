"""The preload of a Kubernetes point checked: the miss ratios of the verify reads that the preload
Job's pods print. Called from the runner's thread only."""

from __future__ import annotations

from typing import Any

from cachelab.k8s.jobs import Jobs
from cachelab.k8s.kube import K8sError
from cachelab.spec import Spec


def memtier_stats(data: dict[str, Any]) -> dict[str, Any]:
    """The totals section of a memtier JSON document."""
    for key, value in data.items():
        if key == "ALL STATS" or key.startswith("AGGREGATED AVERAGE RESULTS"):
            return dict(value)
    return {}


class PreloadChecks:
    """Reads the preload Job's verify blocks into point.json's `preload`."""

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs

    def read(self, spec: Spec) -> dict[str, Any]:
        """Miss ratios of the verify reads printed by the preload pods (each pod also fails on
        its own when a read misses, so a complete Job is already a zero-miss preload); K8sError
        when one exceeds the spec's expected ratio."""
        checks = []
        for pod in self.jobs.pods("preload"):
            _, blocks = self.jobs.logs_with_blocks(pod["metadata"]["name"], "preload")
            for block in blocks:
                if not block.instance.startswith("verify-"):
                    continue
                gets = memtier_stats(block.data()).get("Gets", {})
                hits, misses = float(gets.get("Hits/sec", 0)), float(gets.get("Misses/sec", 0))
                ratio = misses / (hits + misses) if hits + misses > 0 else 0.0
                checks.append(
                    {"machine": block.machine, "target": block.instance, "miss_ratio": ratio}
                )
                if ratio > spec.preload.expected_miss_ratio:
                    raise K8sError(
                        f"preload: miss ratio {ratio:.4f} on {block.instance} of machine "
                        f"{block.machine} exceeds preload.expected_miss_ratio "
                        f"{spec.preload.expected_miss_ratio}"
                    )
        return {
            "enabled": True,
            "expected_miss_ratio": spec.preload.expected_miss_ratio,
            "checks": checks,
            "verified_by": "preload Job complete (every index exits 1 on a miss)",
        }
