"""The Kubernetes target: `K8sTarget` runs a spec's points on a cluster (cachelab.k8s.runner);
cachelab.k8s.collect_results' `CollectTarget` reads the Jobs that an overlay of `cachelab render`
ran. Both write the results folder of the local target, with the cluster's facts and the release's
settings in metadata.json. Called from the CLI's thread only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from cachelab.experiment import Executor
from cachelab.k8s import plan
from cachelab.k8s.api_faults import api_fault_problem, can_i
from cachelab.k8s.faults import is_local_cluster, k8s_fault_problem
from cachelab.k8s.frame import RunFrame
from cachelab.k8s.kube import K8sError, Kube, find_helm
from cachelab.k8s.phases import overhead_line
from cachelab.k8s.runner import K8sRunner
from cachelab.options import RunOptions
from cachelab.paths import repo_root
from cachelab.results import ResultsDir, collect_metadata, write_json
from cachelab.spec import Spec, save_spec
from cachelab.target import Live, Target

FAULT_WAYS = ("auto", "node", "api")  # --faults-via
SCALE_LABEL = "cachelab.dev/scale"  # node label of the local cluster: the pools' scale factor


def _option(value: str | None, env: str, default: str) -> str:
    return value if value else os.environ.get(env, default)


def values_files(options: RunOptions) -> tuple[list[Path], str]:
    """The release's extra values files (--values, else $CACHELAB_K8S_VALUES) and where they
    came from, for error messages."""
    if options.values:
        return list(options.values), "--values"
    listed = os.environ.get("CACHELAB_K8S_VALUES", "")
    return [Path(p) for p in listed.split(os.pathsep) if p], "CACHELAB_K8S_VALUES"


def target_of(options: RunOptions) -> plan.Target:
    """The release, loadgen and bandwidth of a run (options, else the environment); PlanError
    for a loadgen the runner cannot read."""
    target = plan.Target(
        release=_option(options.release, "CACHELAB_K8S_RELEASE", "testbed"),
        loadgen=_option(options.loadgen, "CACHELAB_K8S_LOADGEN", "cachelab"),
        bandwidth=_option(options.bandwidth, "CACHELAB_K8S_BANDWIDTH", "asl2017"),
    )
    if target.loadgen not in plan.LOADGENS:
        raise plan.PlanError(
            f"loadgen: {target.loadgen!r}: the runner reads memtier JSON, so one of "
            f"{', '.join(plan.LOADGENS)} (locust runs from `cachelab render --loadgen locust`)"
        )
    return target


def _helm_version(kube: Kube) -> str | None:
    try:
        return kube.helm("version", "--short").strip()
    except K8sError:
        return None


def cluster_facts(kube: Kube) -> dict[str, Any]:
    """The cluster's facts for metadata.json; K8sError when it cannot be reached."""
    facts = kube.cluster_facts()
    if "error" in facts:
        raise K8sError(f"cannot reach the cluster: {facts['error']}")
    return facts


class K8sTarget(Target):
    """`--target k8s`: the release and the Jobs in one namespace of the KUBECONFIG's cluster."""

    name = "k8s"
    # the loadgens run in the cluster; this machine only drives them
    load_where = "on this machine at the start"

    def __init__(self, options: RunOptions, console: Console) -> None:
        super().__init__(console)
        self.options = options
        self.root = repo_root()
        self.target = plan.Target()
        self.extra: list[Path] = []
        self.timeout_s = 600.0
        self.kube: Kube | None = None
        self.facts: dict[str, Any] = {}
        self.runner: K8sRunner | None = None
        self.faults_via = "node"  # node or api (check() resolves auto)

    def check(self, spec: Spec) -> None:
        """Checks the options and each point of `spec`, and reaches the cluster. Raises
        PlanError or K8sError, naming the problem, before anything is installed."""
        options = self.options
        target = target_of(options)
        namespace = _option(options.namespace, "CACHELAB_K8S_NAMESPACE", "default")
        extra, source = values_files(options)
        for path in extra:
            if not path.is_file():
                raise plan.PlanError(f"{source}: {path} is not a file")
        try:
            timeout_s = float(os.environ.get("CACHELAB_K8S_TIMEOUT_S", "600"))
        except ValueError:
            raise plan.PlanError("CACHELAB_K8S_TIMEOUT_S: not a number of seconds") from None
        via = _option(options.faults_via, "CACHELAB_K8S_FAULTS", "auto")
        if via not in FAULT_WAYS:
            raise plan.PlanError(
                f"CACHELAB_K8S_FAULTS: {via!r} is not one of {', '.join(FAULT_WAYS)}"
            )
        points = [p.spec for p in spec.points()]
        for point in points:
            plan.check(point)
            plan.job_config(point, target)
        kube = Kube(namespace=namespace, helm_binary=find_helm())
        facts = cluster_facts(kube)
        if via == "auto":
            via = "node" if is_local_cluster(facts) else "api"
        if any(point.faults for point in points):
            ask = can_i(kube)
            for point in points:
                problem = (
                    k8s_fault_problem(point, is_local_cluster(facts))
                    if via == "node"
                    else api_fault_problem(point, ask)
                )
                if problem is not None:
                    raise plan.PlanError(problem)
        self.target, self.extra, self.timeout_s = target, extra, timeout_s
        self.kube, self.facts, self.faults_via = kube, facts, via

    def _cluster(self) -> Kube:
        if self.kube is None:
            raise RuntimeError(f"{type(self).__name__}.check comes first")
        return self.kube

    def create(self, spec: Spec) -> ResultsDir:
        kube = self._cluster()
        base = self.options.results if self.options.results is not None else self.root / "results"
        results = ResultsDir.create(base, spec.name)
        spec_path = self.options.spec_path
        if spec_path.is_file():
            save_spec(spec, spec_path, results.spec_file)
        else:
            dump = spec.model_dump(mode="json")
            results.spec_file.write_text(yaml.safe_dump(dump, sort_keys=False))
        target = self.target
        settings = {"target": "k8s", "bandwidth": target.bandwidth, "loadgen": target.loadgen}
        # The local cluster's nodes carry the factor their pools' sizes were scaled by (a report
        # of such a run is one of scaled machines; scripts/local-cluster.sh).
        scales = sorted(
            {
                str(n["labels"][SCALE_LABEL])
                for n in self.facts.get("nodes", [])
                if SCALE_LABEL in n["labels"]
            }
        )
        if scales:
            settings["node_scale"] = ", ".join(scales)
        metadata = collect_metadata(self.root, settings=settings)
        metadata.update(
            target="k8s",
            experiment=spec.name,
            points=[{"point": p.index, "values": p.values} for p in spec.points()],
            cluster=self.facts,
            release={
                "helm": _helm_version(kube),
                "name": target.release,
                "chart": str(self.root / "charts" / "testbed"),
                "loadgen": target.loadgen,
                "bandwidth": target.bandwidth,
                "extra_values": [str(p) for p in self.extra],
            },
        )
        write_json(results.metadata_file, metadata)
        return results

    def executor(self, spec: Spec, results: ResultsDir, live: Live | None) -> Executor:
        kube = self._cluster()
        self.runner = K8sRunner(
            spec,
            kube,
            self.target,
            self.extra,
            self.timeout_s,
            live,
            faults_via=self.faults_via,
        )
        return RunFrame(results, kube.namespace, self.target.release, self.runner.measure)

    def resume_hint(self, results: ResultsDir) -> str | None:
        return self.options.resume_command(results.path)

    def close(self, results: ResultsDir) -> None:
        super().close(results)
        timing = overhead_line(self.runner.timings) if self.runner is not None else None
        if timing:
            self.console.print(timing, highlight=False)
