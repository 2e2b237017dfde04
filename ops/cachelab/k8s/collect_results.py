"""`cachelab collect`: the output of an overlay's Jobs (`kubectl apply -k` of an overlay that
`cachelab render` made) as a results folder, the same layout as `cachelab run --target k8s`
writes, so that `cachelab report` and `cachelab compare` work on it.

What it reads, in one namespace (`-n`, else $CACHELAB_K8S_NAMESPACE, else `default`):

- the ConfigMap `cachelab-point` (label `cachelab.dev/role: point-spec`): the point as a one-point
  spec, shipped by the overlay;
- the Jobs `preload` and `benchmark`, whose `cachelab.dev/run` label must be the ConfigMap's (the
  Jobs of that point), and their pods (label `batch.kubernetes.io/job-name=<job>`): the benchmark
  must have completed; each pod's log holds its loadgens' memtier JSON between the result markers
  (manifests/base/scripts/common.sh);
- the ConfigMap the benchmark Job takes its environment from (`LOADGEN`: `cachelab` or `memtier`;
  locust's stats are not memtier JSON and are not collected).

The middleware's counters are not in the results: `cachelab run --target k8s` scrapes them
before and after the benchmark, and after the Jobs there is no scrape from before.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from cachelab.experiment import Executor
from cachelab.k8s import plan
from cachelab.k8s.frame import RunFrame
from cachelab.k8s.jobs import Jobs
from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.loadgens import LoadgenCollector
from cachelab.k8s.preload import PreloadChecks
from cachelab.k8s.render import POINT_CONFIGMAP, POINT_ROLE_LABEL
from cachelab.k8s.scrape import MiddlewareScraper
from cachelab.k8s.target import K8sTarget, cluster_facts
from cachelab.options import RunOptions
from cachelab.paths import repo_root
from cachelab.results import ResultsDir, RunStatus
from cachelab.spec import Point, Spec, SpecError, parse_spec
from cachelab.target import Live

RUN_LABEL = "cachelab.dev/run"


def _point_spec(kube: Kube) -> tuple[Spec, str]:
    """The one-point spec of the overlay and its run label."""
    key, value = POINT_ROLE_LABEL
    items = kube.get("configmap", "-l", f"{key}={value}")["items"]
    config = next((c for c in items if c["metadata"]["name"] == POINT_CONFIGMAP), None)
    if config is None:
        raise K8sError(
            f"no ConfigMap {POINT_CONFIGMAP} ({key}={value}) in namespace {kube.namespace}: "
            "collect reads the Jobs of an overlay made by `cachelab render` (`cachelab run "
            "--target k8s` collects its own)"
        )
    try:
        spec = parse_spec(yaml.safe_load(config["data"]["spec.yaml"]), POINT_CONFIGMAP)
    except (SpecError, KeyError, yaml.YAMLError) as error:
        raise K8sError(f"ConfigMap {POINT_CONFIGMAP}: no valid spec.yaml ({error})") from None
    if len(spec.points()) != 1 or spec.run.repetitions != 1:
        raise K8sError(f"ConfigMap {POINT_CONFIGMAP}: its spec is not one point")
    return spec, str(config["metadata"].get("labels", {}).get(RUN_LABEL, ""))


def _epoch_ms(stamp: str | None) -> float | None:
    if not stamp:
        return None
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000.0


def _benchmark(kube: Kube, run_label: str) -> tuple[dict[str, Any], str]:
    """The completed benchmark Job and the loadgen it ran."""
    try:
        job = kube.get("job", "benchmark")
    except K8sError:
        raise K8sError(
            f"no Job benchmark in namespace {kube.namespace}: apply the overlay first "
            "(kubectl apply -k manifests/overlays/<name>)"
        ) from None
    labels = job["metadata"].get("labels", {})
    if labels.get(RUN_LABEL) != run_label:
        raise K8sError(
            f"Job benchmark is of run {labels.get(RUN_LABEL)!r}, ConfigMap {POINT_CONFIGMAP} of "
            f"{run_label!r}: apply the overlay again"
        )
    status = job.get("status", {})
    completions = job["spec"].get("completions", 1)
    if status.get("succeeded", 0) < completions:
        state = (
            "suspended: release it with kubectl patch"
            if job["spec"].get("suspend")
            else (
                f"{status.get('succeeded', 0)} of {completions} pods succeeded, "
                f"{status.get('failed', 0)} failed"
            )
        )
        raise K8sError(f"Job benchmark has not completed ({state}); collect after it has")
    (source,) = job["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    config = kube.get("configmap", source["configMapRef"]["name"])
    loadgen = str(config["data"].get("LOADGEN", ""))
    if loadgen not in plan.LOADGENS:
        raise K8sError(
            f"LOADGEN={loadgen}: collect reads memtier JSON ({', '.join(plan.LOADGENS)}); "
            "the pods' logs hold the rest"
        )
    return job, loadgen


class CollectedRun:
    """The steps of `cachelab collect`: one run read from Jobs that completed before; it applies
    and waits for nothing. Called from the CLI's thread only."""

    def __init__(self, kube: Kube, target: plan.Target, released_epoch_ms: float | None) -> None:
        jobs = Jobs(kube, target, repo_root() / "manifests")
        self.preload = PreloadChecks(jobs)
        self.loadgens = LoadgenCollector(jobs)
        self.scraper = MiddlewareScraper(kube, target.release)
        self.released_epoch_ms = released_epoch_ms  # the benchmark Job's start

    def measure(
        self, point: Point, repetition: int, run_dir: Path, record: dict[str, Any]
    ) -> tuple[RunStatus, str]:
        """One run (a cachelab.k8s.frame `Measure`) read into `run_dir` and `record`; the
        middleware's counters were not scraped before the benchmark, so there are none."""
        spec = point.spec
        if spec.preload.enabled:
            record["preload"] = self.preload.read(spec)
        record["benchmark_released_epoch_ms"] = self.released_epoch_ms
        record["collected_by"] = "cachelab collect"
        unavailable = (
            "not scraped: cachelab collect runs after the Jobs (cachelab run --target k8s "
            "scrapes the middleware before and after the benchmark)"
        )
        record["middlewares"] = [
            {
                "index": j,
                "address": name,
                "stats_dir": f"middleware-{j}",
                "unavailable": unavailable,
            }
            for j, name in enumerate(self.scraper.pods())
        ]
        return self.loadgens.collect(spec, run_dir, record)


class CollectTarget(K8sTarget):
    """The Jobs of an overlay in `namespace` (None: $CACHELAB_K8S_NAMESPACE, else default),
    written under `results_base` (None: <repo>/results)."""

    def __init__(self, namespace: str | None, results_base: Path | None, console: Console) -> None:
        super().__init__(RunOptions(spec_path=Path(), results=results_base), console)
        self.namespace = namespace or os.environ.get("CACHELAB_K8S_NAMESPACE", "default")
        self.released_epoch_ms: float | None = None

    def point_spec(self) -> Spec:
        """The overlay's one-point spec, once its benchmark Job has completed; K8sError
        otherwise."""
        kube = Kube(namespace=self.namespace, helm_binary=shutil.which("helm") or "helm")
        facts = cluster_facts(kube)
        spec, run_label = _point_spec(kube)
        job, loadgen = _benchmark(kube, run_label)
        self.kube, self.facts = kube, facts
        self.target = plan.Target(loadgen=loadgen)
        self.released_epoch_ms = _epoch_ms(job["status"].get("startTime"))
        return spec

    def check(self, spec: Spec) -> None:
        """`point_spec` checked the overlay's spec and Jobs."""
        self._cluster()

    def announce(self, results: ResultsDir) -> None:
        """Nothing runs on this machine: the command names the folder when it is written."""

    def executor(self, spec: Spec, results: ResultsDir, live: Live | None) -> Executor:
        kube = self._cluster()
        steps = CollectedRun(kube, self.target, self.released_epoch_ms)
        return RunFrame(results, kube.namespace, self.target.release, steps.measure)

    def resume_hint(self, results: ResultsDir) -> str | None:
        return None
