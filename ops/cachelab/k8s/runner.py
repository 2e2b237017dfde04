"""`cachelab run SPEC --target k8s`: every point and repetition of a spec on a Kubernetes cluster.

For each run: `helm upgrade --install` the testbed release with the point's values (and wait
for it), delete the previous Jobs, `kubectl apply -k` a kustomization of manifests/base for the
point, wait for the preload Job, release the benchmark Job (created suspended) and wait for it,
then collect the loadgen JSON from the pods' logs and the middleware's statistics from its
`/metrics`, and write the results layout of the local runner (docs/interfaces.md §4). While the
benchmark Job runs, the live line (ops/s, mean and p99 latency, errors) follows the loadgens'
progress lines in the pods' logs (cachelab.k8s.progress; with memtier, whose progress line has
no p99, the p99 shows as a dash).
A spec with `network:` round-trip times puts them into the release (the chart's `links.*`: a
toxiproxy sidecar on each link's far end) and, after the preload, times each link from a probe
pod on its near end (cachelab.k8s.rtt) into point.json's `network`, as the local runner does;
a link outside ±10 % of its RTT is named in the run's message.
`K8sRunner.measure` is one run's steps; cachelab.k8s.frame's `RunFrame` is the executor of
cachelab.experiment's loop around them (each run's point.json), and the loop owns the order,
selection, resume, status.json and the summary.csv rows.

The run's steps are collaborators, one job each: cachelab.k8s.release (the Helm release),
cachelab.k8s.servers (restarts), cachelab.k8s.jobs (the Jobs and their pods' logs),
cachelab.k8s.preload (the preload's checks), cachelab.k8s.links (the RTT probes),
cachelab.k8s.scrape (the middleware's counters), cachelab.k8s.loadgens (the loadgens' output),
cachelab.k8s.progress (the live line), cachelab.k8s.faults (the faults' targets) and
cachelab.k8s.panels (the dashboards' panels over the run, from the cluster's Prometheus when it
has one: cachelab.k8s.prometheus, or $CACHELAB_K8S_PROMETHEUS); the results folder around the
runs is cachelab.k8s.target's.

Where the cluster is: KUBECONFIG (kubectl's own rules). Options, from the CLI (`--namespace`,
`--release`, `--loadgen`, `--values`, `--bandwidth`) or else from the environment: namespace
(CACHELAB_K8S_NAMESPACE, default `default`), release (CACHELAB_K8S_RELEASE, `testbed`), loadgen
(CACHELAB_K8S_LOADGEN, `cachelab` or `memtier`), bandwidth profile (CACHELAB_K8S_BANDWIDTH,
`asl2017`, `azure-v2`, `off`), extra values files for the release (CACHELAB_K8S_VALUES, separated
by `:`); and CACHELAB_K8S_TIMEOUT_S (600) for the release and the preload.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from cachelab.faults import FaultInjector
from cachelab.k8s import plan
from cachelab.k8s.api_faults import ApiFaultTargets, api_fault_targets, needs_shared_processes
from cachelab.k8s.faults import K8sFaultTargets, fault_targets
from cachelab.k8s.jobs import BARRIER_TIMEOUT_S, Jobs
from cachelab.k8s.kube import Kube
from cachelab.k8s.links import LinkProber
from cachelab.k8s.loadgens import LoadgenCollector
from cachelab.k8s.panels import PanelRecorder
from cachelab.k8s.phases import PhaseClock, job_pod_marks
from cachelab.k8s.preload import PreloadChecks
from cachelab.k8s.progress import OriginTracker, benchmark_poll
from cachelab.k8s.release import PRELOAD_KEPT, ReleaseKeeper
from cachelab.k8s.scrape import MiddlewareScraper
from cachelab.k8s.servers import ServerRestarts
from cachelab.k8s.usage import UsageSampler
from cachelab.local.latency import off_message
from cachelab.paths import repo_root
from cachelab.results import RunStatus
from cachelab.spec import Point, Spec
from cachelab.terminal import LiveSample


class K8sRunner:
    """The steps of a run of one spec in one namespace, in their order, each done by its
    collaborator. Called from the CLI's thread only."""

    def __init__(
        self,
        spec: Spec,
        kube: Kube,
        target: plan.Target,
        extra_values: list[Path],
        timeout_s: float,
        live: Callable[[LiveSample], None] | None = None,
        faults_via: str = "node",
    ) -> None:
        self.spec = spec
        self.kube = kube
        self.target = target
        self.timeout_s = timeout_s
        self.live = live  # gets each second of a run's load
        self.faults_via = faults_via  # node (this machine's signals and tc) or api
        self.timings: list[dict[str, Any]] = []  # point.json's `timing` of each measured run
        root = repo_root()
        self.release = ReleaseKeeper(
            kube, target.release, root / "charts" / "testbed", extra_values, timeout_s
        )
        self.servers = ServerRestarts(kube, target, self.release, timeout_s)
        self.jobs = Jobs(kube, target, root / "manifests")
        self.preload = PreloadChecks(self.jobs)
        self.scraper = MiddlewareScraper(kube, target.release)
        self.links = LinkProber(kube, target, self.release, self.scraper)
        self.loadgens = LoadgenCollector(self.jobs)
        self.panels = PanelRecorder(kube, target, root / "charts" / "testbed" / "dashboards")
        self._preloaded: str | None = None  # the preload_key of the last complete preload

    def measure(
        self, point: Point, repetition: int, run_dir: Path, record: dict[str, Any]
    ) -> tuple[RunStatus, str]:
        """One run (a cachelab.k8s.frame `Measure`): the release upgraded, the Jobs applied and
        waited for, the results collected into `run_dir` and `record`."""
        clock = PhaseClock()
        try:
            return self._measure_steps(point, repetition, run_dir, record, clock)
        finally:
            record["timing"] = clock.record(float(point.spec.run.duration_s))
            self.timings.append(record["timing"])

    def _measure_steps(
        self,
        point: Point,
        repetition: int,
        run_dir: Path,
        record: dict[str, Any],
        clock: PhaseClock,
    ) -> tuple[RunStatus, str]:
        spec = point.spec
        k8s_dir = run_dir / "k8s"
        k8s_dir.mkdir(exist_ok=True)
        with clock.phase("upgrade"):
            record["release_upgraded"] = self._upgrade_release(spec, k8s_dir)
        if spec.run.restart_servers:
            with clock.phase("restart_servers"):
                self.servers.restart(spec)
        with clock.phase("delete_jobs"):
            self.jobs.delete()
        labels = {
            "cachelab.dev/experiment": self.spec.name,
            "cachelab.dev/run": f"p{point.index}-r{repetition}",
        }
        preload_key = self.release.preload_key(spec) if spec.preload.enabled else None
        preload = preload_key is not None and preload_key != self._preloaded
        jobs_spec = spec
        if preload_key is not None and not preload:  # the servers still hold the last preload
            jobs_spec = spec.model_copy(
                update={"preload": spec.preload.model_copy(update={"enabled": False})}
            )
            record["preload"] = {"enabled": True, "skipped": PRELOAD_KEPT}
        with clock.phase("apply_jobs"):
            release_values = self.release.values()
            label_key = self.jobs.apply(jobs_spec, labels, k8s_dir, release_values)
        if preload:
            with clock.phase("preload"):
                self.jobs.wait("preload", self.timeout_s)
                record["preload"] = self.preload.read(spec)
            self._preloaded = preload_key
        if spec.links():  # the links' achieved RTTs, with the system idle (cachelab.k8s.rtt)
            with clock.phase("probe_links"):
                record["network"] = self.links.probe(spec, release_values, labels, k8s_dir)
        with clock.phase("scrape"):
            middlewares = self.scraper.pods()
            before = {name: self.scraper.scrape(pod) for name, pod in middlewares.items()}
            faulty = self._fault_targets(spec, middlewares, release_values)
        started = time.time()
        self.jobs.release_benchmark()
        record["benchmark_released_epoch_ms"] = started * 1000.0
        usage = UsageSampler(self.kube, run_dir, self.jobs.run_pods, label_key)
        origin = OriginTracker()
        progress = benchmark_poll(
            self.jobs, spec, self.live, origin if faulty is not None else None
        )
        injector = (
            FaultInjector(spec.faults, faulty, origin.origin).start()
            if faulty is not None
            else None
        )

        def each_poll() -> None:
            usage.poll()
            if progress is not None:
                progress()

        try:
            with clock.phase("benchmark_job"):
                run = spec.run
                self.jobs.wait(
                    "benchmark",
                    run.duration_s + BARRIER_TIMEOUT_S + 120,
                    each_poll=each_poll,
                    busy_s=run.warmup_s + run.duration_s + run.cooldown_s,
                    emits=True,
                )
        finally:
            usage.close()
            if injector is not None and faulty is not None:
                injector.stop()
                faulty.resume_all()
                injector.write(run_dir)
        # the pods' egress limits as links, with the bytes each sent (cachelab.k8s.usage)
        record["bandwidth"] = {"profile": self.target.bandwidth, "links": usage.links()}
        record["usage"] = {
            "source": "kubelet summary API (stats/summary) through the API server",
            "cpu": "cpu.csv",
            "network": "net.csv",
            "cpu_limit_cores": usage.cpu_limits,
            "problems": usage.errors,
        }
        ended = time.time()
        seconds = ended - started
        record["benchmark_pods_s"] = job_pod_marks(self.jobs.last_pods, started, ended)
        with clock.phase("collect"):
            record["middlewares"] = self.scraper.stats(middlewares, before, seconds, run_dir)
            status, message = self.loadgens.collect(spec, run_dir, record)
        with clock.phase("panels"):
            record["panels"] = self.panels.record(spec, started, ended, run_dir)
        if status == "ok":
            message = off_message(record.get("network", {}).get("flagged") or [])
        return status, message

    def _fault_targets(
        self, spec: Spec, middlewares: dict[str, dict[str, Any]], release_values: dict[str, Any]
    ) -> K8sFaultTargets | ApiFaultTargets | None:
        """What carries out the point's faults, ready (None without faults)."""
        if not spec.faults:
            return None
        if self.faults_via == "api":
            return api_fault_targets(
                self.kube, self.release, self.target.fullname, spec, middlewares, release_values
            )
        return fault_targets(self.kube, self.release, self.target.fullname, spec, middlewares)

    def _upgrade_release(self, spec: Spec, k8s_dir: Path) -> bool:
        """The release at the point's values (ReleaseKeeper); False when nothing changed. Faults
        through the API that stop a process need the pods to share a process namespace."""
        values = plan.release_values(spec, self.target)
        if self.faults_via == "api" and needs_shared_processes(spec):
            values["shareProcessNamespace"] = True
        values_file = k8s_dir / "values.yaml"
        values_file.write_text(yaml.safe_dump(values))
        return self.release.upgrade(values_file)
