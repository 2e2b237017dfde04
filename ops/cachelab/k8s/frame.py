"""The executor of the Kubernetes results layout (cachelab.experiment's `Executor`): around each
run, its point.json started, the steps that measure it called, their outcome stamped and written,
whatever they raise.

Two sets of steps run in it: `cachelab run --target k8s`'s (cachelab.k8s.runner, which drives the
Jobs) and `cachelab collect`'s (cachelab.k8s.collect_results, which reads Jobs that ran before),
each as a `Measure`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cachelab.k8s import plan
from cachelab.k8s.collect import CollectError
from cachelab.k8s.kube import K8sError
from cachelab.results import (
    ResultsDir,
    RunRecord,
    RunStatus,
    finish_point_record,
    start_point_record,
)
from cachelab.spec import Point

# the steps of one run: (point, repetition, run folder, record to fill) -> (status, message)
Measure = Callable[[Point, int, Path, dict[str, Any]], tuple[RunStatus, str]]


class RunFrame:
    """Each run of one release in one namespace measured by `measure`, its point.json written
    under `results`. Called from the CLI's thread only."""

    target_name = "k8s"

    def __init__(self, results: ResultsDir, namespace: str, release: str, measure: Measure) -> None:
        self.results = results
        self.namespace = namespace
        self.release = release
        self.measure = measure

    def run_one(self, point: Point, repetition: int) -> RunRecord:
        """The steps in the run's folder; a cluster, plan, log or file error fails the run with
        its message, Ctrl-C leaves it partial (and is raised again)."""
        run_dir = self.results.run_dir(point.index, repetition)
        record = start_point_record(
            point,
            repetition,
            target=self.target_name,
            namespace=self.namespace,
            release=self.release,
        )
        record["loadgens"], record["middlewares"] = [], []
        status: RunStatus = "failed"
        message = ""
        try:
            status, message = self.measure(point, repetition, run_dir, record)
        except (K8sError, plan.PlanError, CollectError, OSError) as error:
            status, message = "failed", str(error)
        except KeyboardInterrupt:
            status, message = "partial", "interrupted (the Jobs are left in the namespace)"
            raise
        finally:
            finish_point_record(run_dir, record, status, message)
        return RunRecord(point.index, repetition, status, message)

    def close(self) -> None:
        """Nothing to stop: the release and the Jobs stay in the namespace."""
