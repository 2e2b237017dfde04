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
`K8sRunner` is the Kubernetes executor of cachelab.experiment's loop, which owns the order,
selection, resume, status.json and the summary.csv rows.

Where the cluster is: KUBECONFIG (kubectl's own rules). Options, from the CLI (`--namespace`,
`--release`, `--loadgen`, `--values`, `--bandwidth`) or else from the environment: namespace
(CACHELAB_K8S_NAMESPACE, default `default`), release (CACHELAB_K8S_RELEASE, `testbed`), loadgen
(CACHELAB_K8S_LOADGEN, `cachelab` or `memtier`), bandwidth profile (CACHELAB_K8S_BANDWIDTH,
`asl2017`, `azure-v2`, `off`), extra values files for the release (CACHELAB_K8S_VALUES, separated
by `:`); and CACHELAB_K8S_TIMEOUT_S (600) for the release and the preload.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from cachelab.experiment import ExperimentLoop, Selection, open_for_resume
from cachelab.faults import FaultInjector
from cachelab.faults.k8s import K8sFaultTargets, is_local_cluster, k8s_fault_problem, resolve
from cachelab.k8s import plan, rtt
from cachelab.k8s.collect import (
    CollectError,
    ResultBlock,
    UnterminatedBlock,
    log_without_blocks,
    result_blocks,
)
from cachelab.k8s.kube import K8sError, Kube, find_helm
from cachelab.k8s.metrics import parse_metrics, summary_from_scrapes
from cachelab.k8s.phases import PhaseClock, overhead_line
from cachelab.k8s.progress import TAIL_LINES, ProgressFollower
from cachelab.k8s.release import PRELOAD_KEPT, ReleaseKeeper
from cachelab.k8s.usage import UsageSampler
from cachelab.local.latency import off_links, off_message
from cachelab.options import RunOptions
from cachelab.paths import repo_root
from cachelab.results import (
    ResultsDir,
    RunRecord,
    RunStatus,
    Status,
    collect_metadata,
    finish_metadata,
    finish_point_record,
    start_point_record,
    write_json,
)
from cachelab.results.noise import load_warning
from cachelab.spec import Point, Spec, save_spec
from cachelab.terminal import LiveSample, RunLines

BARRIER_TIMEOUT_S = 600  # manifests/base: BARRIER_TIMEOUT_S
POLL_S = 1.0  # how often the runner looks at pods and Jobs while it waits
LOG_READS = 5  # reads of a finished pod's log that ends inside a result block
LOG_REREAD_S = 2.0
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
SCALE_LABEL = "cachelab.dev/scale"  # node label of the local cluster: the pools' scale factor
HDR_FULL_SUFFIX = "_FULL_RUN_1.txt"  # the loadgen's (memtier's) interval log of run 1


def _option(value: str | None, env: str, default: str) -> str:
    return value if value else os.environ.get(env, default)


def values_files(options: RunOptions) -> tuple[list[Path], str]:
    """The release's extra values files (--values, else $CACHELAB_K8S_VALUES) and where they
    came from, for error messages."""
    if options.values:
        return list(options.values), "--values"
    listed = os.environ.get("CACHELAB_K8S_VALUES", "")
    return [Path(p) for p in listed.split(os.pathsep) if p], "CACHELAB_K8S_VALUES"


def with_job_resources(kustomization: str, resources: dict[str, Any]) -> str:
    """The kustomization with the Jobs' container resources set to the release's client pool's
    (`nodePools.sizes.<pool>.resources`): the pool's nodes size them, as they size the chart's
    pods, also where a node is smaller than the Azure size of the clients-pool component."""
    doc = yaml.safe_load(kustomization)
    path = "/spec/template/spec/containers/0/resources"
    operation = [{"op": "replace", "path": path, "value": resources}]
    doc["patches"].append({"target": {"kind": "Job"}, "patch": yaml.safe_dump(operation)})
    return str(yaml.safe_dump(doc, sort_keys=False))


class K8sRunner:
    """Runs the points of one spec in one namespace. Called from the CLI's thread only."""

    def __init__(
        self,
        spec: Spec,
        results: ResultsDir,
        kube: Kube,
        target: plan.Target,
        extra_values: list[Path],
        timeout_s: float,
        console: Console,
    ) -> None:
        self.spec = spec
        self.results = results
        self.kube = kube
        self.target = target
        self.extra_values = extra_values
        self.timeout_s = timeout_s
        self.console = console
        self.root = repo_root()
        self.target_name = "k8s"
        self.live: Callable[[LiveSample], None] | None = None  # gets each second of a run's load
        # `cachelab collect`: the Jobs have run already; read them, apply and wait for nothing
        self.collect_only = False
        self.released_epoch_ms: float | None = None  # the collected benchmark Job's start
        self.timings: list[dict[str, Any]] = []  # point.json's `timing` of each measured run
        self.release = ReleaseKeeper(
            kube, target.release, self.root / "charts" / "testbed", extra_values, timeout_s
        )
        self._preloaded: str | None = None  # the preload_key of the last complete preload

    # --- one run ------------------------------------------------------------------------------

    def run_one(self, point: Point, repetition: int) -> RunRecord:
        run_dir = self.results.run_dir(point.index, repetition)
        record = start_point_record(
            point,
            repetition,
            target="k8s",
            namespace=self.kube.namespace,
            release=self.target.release,
        )
        record["loadgens"], record["middlewares"] = [], []
        status: RunStatus = "failed"
        message = ""
        try:
            status, message = self._measure(point, repetition, run_dir, record)
        except (K8sError, plan.PlanError, CollectError, OSError) as error:
            status, message = "failed", str(error)
        except KeyboardInterrupt:
            status, message = "partial", "interrupted (the Jobs are left in the namespace)"
            raise
        finally:
            finish_point_record(run_dir, record, status, message)
            if "timing" in record:
                self.timings.append(record["timing"])
        return RunRecord(point.index, repetition, status, message)

    def close(self) -> None:
        """Nothing to stop: the release stays installed for the next experiment."""

    def _measure(
        self, point: Point, repetition: int, run_dir: Path, record: dict[str, Any]
    ) -> tuple[RunStatus, str]:
        spec = point.spec
        if self.collect_only:
            return self._collect_existing(spec, run_dir, record)
        clock = PhaseClock()
        try:
            return self._measure_steps(point, repetition, run_dir, record, clock)
        finally:
            record["timing"] = clock.record(float(spec.run.duration_s))

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
                self._restart_servers(spec)
        with clock.phase("delete_jobs"):
            self.kube.kubectl(
                "delete", "job", "preload", "benchmark",
                "--ignore-not-found", "--cascade=foreground", "--wait=true",
            )  # fmt: skip
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
            release_values, label_key = self._apply_jobs(jobs_spec, labels, k8s_dir)
        if preload:
            with clock.phase("preload"):
                self._wait_job("preload", self.timeout_s)
                record["preload"] = self._preload_checks(spec)
            self._preloaded = preload_key
        if spec.links():  # the links' achieved RTTs, with the system idle (cachelab.k8s.rtt)
            with clock.phase("probe_links"):
                record["network"] = self._probe_links(spec, release_values, labels, k8s_dir)
        with clock.phase("scrape"):
            middlewares = self._middleware_pods()
            before = {name: self._scrape(pod) for name, pod in middlewares.items()}
            faulty = self._fault_targets(spec, middlewares) if spec.faults else None
        started = time.time()
        self.kube.kubectl(
            "patch", "job/benchmark", "--type=merge", "-p", '{"spec":{"suspend":false}}'
        )
        record["benchmark_released_epoch_ms"] = started * 1000.0
        usage = UsageSampler(self.kube, run_dir, self._run_pods, label_key)
        origin = OriginTracker()
        progress = self._progress_poll(spec, origin if faulty is not None else None)
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
                self._wait_job(
                    "benchmark", spec.run.duration_s + BARRIER_TIMEOUT_S + 120, each_poll=each_poll
                )
        finally:
            usage.close()
            if injector is not None and faulty is not None:
                injector.stop()
                faulty.resume_all()
                injector.write(run_dir)
        record["usage"] = {
            "source": "kubelet summary API (stats/summary) through the API server",
            "cpu": "cpu.csv",
            "network": "net.csv",
            "cpu_limit_cores": usage.cpu_limits,
            "problems": usage.errors,
        }
        seconds = time.time() - started
        with clock.phase("collect"):
            record["middlewares"] = self._middleware_stats(middlewares, before, seconds, run_dir)
            status, message = self._collect_loadgens(spec, run_dir, record)
        if status == "ok":
            message = off_message(record.get("network", {}).get("flagged") or [])
        return status, message

    def _apply_jobs(
        self, spec: Spec, labels: dict[str, str], k8s_dir: Path
    ) -> tuple[dict[str, Any], str]:
        """The point's Jobs (preload, suspended benchmark) applied on the client pool's nodes;
        returns the release's values and the node label key of its pools."""
        release_values = json.loads(
            self.kube.helm("get", "values", self.target.release, "--all", "-o", "json")
        )
        pools = release_values["nodePools"]
        label_key = str(pools["labelKey"])
        client_pool = pools["sizes"].get(spec.topology.hosts.client, {})
        label_value = str(client_pool.get("labelValue", spec.topology.hosts.client))
        text = plan.kustomization(
            spec, self.target, self.root / "manifests", k8s_dir, labels, label_key, label_value
        )
        if client_pool.get("resources"):
            text = with_job_resources(text, client_pool["resources"])
        (k8s_dir / "kustomization.yaml").write_text(text)
        self.kube.kubectl("apply", "-k", str(k8s_dir))
        return release_values, label_key

    def _probe_links(
        self, spec: Spec, values: dict[str, Any], labels: dict[str, str], k8s_dir: Path
    ) -> dict[str, Any]:
        """Calibrates and times each link from a probe pod on its near end (cachelab.k8s.rtt):
        point.json's `network`. ProbeError (a K8sError) when a probe gets no answer."""
        backend = spec.topology.backend
        selector = self.release.component_selector(backend)
        server_pods = sorted(
            self.kube.get("pods", "-l", selector)["items"], key=lambda p: p["metadata"]["name"]
        )
        middleware_pods = list(self._middleware_pods().values())
        nodes = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in server_pods}
        nodes |= {p["metadata"]["name"]: p["spec"].get("nodeName") for p in middleware_pods}
        servers = {
            p["metadata"]["name"]: f"{p['status'].get('podIP')}:{plan.SERVER_PORTS[backend]}"
            for p in server_pods
        }
        middlewares = {
            p["metadata"]["name"]: f"{p['status'].get('podIP')}:{plan.MIDDLEWARE_PORT}"
            for p in middleware_pods
        }
        found: list[dict[str, Any]] = []
        problems: list[str] = []
        for pod in rtt.probe_pods(spec, self.target.release, middlewares, servers):
            if not pod.targets:
                continue
            sidecars = [t.pod for t in pod.targets]
            if any(self._kwok_node(nodes.get(name)) for name in sidecars):
                problems.append(
                    f"{pod.name}: its sidecars' nodes are simulated by kwok: not measured"
                )
                continue
            link = pod.targets[0].link
            manifest = k8s_dir / f"{pod.name}.yaml"
            manifest.write_text(
                yaml.safe_dump(rtt.probe_manifest(pod, spec, self.target.release, values, labels))
            )
            one_way = link.one_way_ms
            if link.rtt_ms > 0:  # a trial at half the RTT, then the toxics less the extra
                self._set_toxics(sidecars, one_way, link.one_way_jitter_ms)
                trial = rtt.records(pod, self._run_probe(pod.name, manifest))
                one_way = rtt.calibrated_one_way(link, trial[0]["achieved"]["min_ms"])
                self._set_toxics(sidecars, one_way, link.one_way_jitter_ms)
            found += rtt.records(pod, self._run_probe(pod.name, manifest), one_way)
        return {
            "emulator": "toxiproxy-server sidecars (charts/testbed links.*)",
            "probe": rtt.probe_word(spec),
            "links": found,
            "flagged": off_links(found),
            "problems": problems,
        }

    def _kwok_node(self, node: str | None) -> bool:
        """Whether `node` is simulated by kwok (no containers: nothing to time or exec)."""
        if not node:
            return False
        annotations = self.kube.get("node", node)["metadata"].get("annotations", {})
        return bool(annotations.get(KWOK_NODE_ANNOTATION))

    def _set_toxics(self, sidecars: list[str], one_way_ms: float, jitter_ms: float) -> None:
        """Both latency toxics of each sidecar to `one_way_ms` (± `jitter_ms`)."""
        for pod in sidecars:
            self.kube.kubectl(
                "exec", pod, "-c", rtt.SIDECAR, "--", "sh", "-c", rtt.SET_TOXICS, "set-toxics",
                f"{one_way_ms:.4f}", f"{jitter_ms:.4f}", timeout_s=60,
            )  # fmt: skip

    def _run_probe(self, name: str, manifest: Path) -> str:
        """Starts the probe pod of `manifest`, returns its output and deletes it."""
        self.kube.kubectl("delete", "pod", name, "--ignore-not-found", "--wait=true")
        self.kube.kubectl("apply", "-f", str(manifest))
        try:
            return self._probe_log(name)
        finally:
            self.kube.kubectl("delete", "pod", name, "--ignore-not-found", "--wait=false")

    def _probe_log(self, name: str) -> str:
        """The probe pod's output once it has exited 0; ProbeError when it failed or did not
        finish."""
        limit_s = rtt.PROBE_DEADLINE_S + 60
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            pod = self.kube.get("pod", name)
            phase = pod["status"].get("phase")
            if phase == "Succeeded":
                return self.kube.logs(name, "rttprobe")
            if phase == "Failed":
                try:
                    said = self.kube.logs(name, "rttprobe").strip()
                except K8sError as error:
                    said = str(error)
                raise rtt.ProbeError(f"RTT probe {name} failed: {said or pod['status']}")
            time.sleep(POLL_S)
        raise rtt.ProbeError(f"RTT probe {name} did not finish within {limit_s} s")

    def _collect_existing(
        self, spec: Spec, run_dir: Path, record: dict[str, Any]
    ) -> tuple[RunStatus, str]:
        """One run from Jobs that completed before (cachelab collect). The middleware's
        counters were not scraped before the benchmark, so there are none."""
        if spec.preload.enabled:
            record["preload"] = self._preload_checks(spec)
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
            for j, name in enumerate(self._middleware_pods())
        ]
        return self._collect_loadgens(spec, run_dir, record)

    def _upgrade_release(self, spec: Spec, k8s_dir: Path) -> bool:
        """The release at the point's values (ReleaseKeeper); False when nothing changed."""
        values_file = k8s_dir / "values.yaml"
        values_file.write_text(yaml.safe_dump(plan.release_values(spec, self.target)))
        return self.release.upgrade(values_file)

    def _restart_servers(self, spec: Spec) -> None:
        """Fresh (empty) servers for this run: delete the server pods at once (the StatefulSet's
        Parallel pod management recreates them together) and wait until all are ready again."""
        backend = spec.topology.backend
        selector = self.release.component_selector(backend)
        old_uids = self._pod_uids(selector)
        # Not `--wait=true`: the StatefulSet recreates the pods under the same names at once, and
        # kubectl's wait for deletion was seen to hang on that for good (kwok, kubectl 1.32).
        # Wait instead, bounded, until no pod with an old UID is left.
        self.kube.kubectl("delete", "pod", "-l", selector, "--wait=false")
        deadline = time.monotonic() + self.timeout_s
        while old_uids & self._pod_uids(selector):
            if time.monotonic() > deadline:
                raise K8sError(
                    f"server pods ({selector}) still not deleted after {self.timeout_s:.0f} s"
                )
            time.sleep(POLL_S)
        self.kube.kubectl(
            "rollout", "status", f"statefulset/{self.target.fullname}-{backend}",
            f"--timeout={int(self.timeout_s)}s", timeout_s=self.timeout_s + 30,
        )  # fmt: skip

    def _pod_uids(self, selector: str) -> set[str]:
        pods = self.kube.get("pod", "-l", selector)
        return {str(p["metadata"]["uid"]) for p in pods.get("items", [])}

    def _fault_targets(self, spec: Spec, middlewares: dict[str, dict[str, Any]]) -> K8sFaultTargets:
        """The pods and containers the spec's faults hit (K8sFaultError names a missing one)."""
        backend = spec.topology.backend
        selector = self.release.component_selector(backend)
        servers = [p["metadata"]["name"] for p in self.kube.get("pod", "-l", selector)["items"]]
        pods = resolve(spec, servers, list(middlewares), self.target.fullname)
        targets = K8sFaultTargets(pods, lambda name: self.kube.get("pod", name))
        targets.prepare()
        return targets

    def _progress_poll(
        self, spec: Spec, origin: OriginTracker | None = None
    ) -> Callable[[], None] | None:
        """What `_wait_job` calls once per poll while the benchmark runs: the pods' progress
        lines to the live line and to `origin` (None with neither)."""
        if self.live is None and origin is None:
            return None
        live = self.live

        def each_second(sample: LiveSample) -> None:
            if origin is not None:
                origin.seen(sample)
            if live is not None:
                live(sample)

        follower = ProgressFollower(
            lambda pod: self.kube.kubectl(
                "logs", pod, "-c", "loadgen", f"--tail={TAIL_LINES}", timeout_s=10
            ),
            each_second,
            (K8sError,),
        )
        pods: list[str] = []

        def poll() -> None:
            nonlocal pods
            if len(pods) < spec.topology.client_machines:  # until every machine's pod exists
                try:
                    pods = [p["metadata"]["name"] for p in self._job_pods("benchmark")]
                except (K8sError, ValueError, KeyError):
                    return
            follower.poll(pods)

        return poll

    def _wait_job(
        self, name: str, timeout_s: float, each_poll: Callable[[], None] | None = None
    ) -> None:
        """Until the Job completes (K8sError if it fails or times out); `each_poll` runs once
        per poll while it has not."""
        deadline = time.monotonic() + timeout_s
        while True:
            job = self.kube.get("job", name)
            completions = job["spec"].get("completions", 1)
            job_status = job.get("status", {})
            for cond in job_status.get("conditions", []):
                if cond["type"] == "Failed" and cond["status"] == "True":
                    raise K8sError(
                        f"job {name} failed ({cond.get('reason')}: {cond.get('message')})"
                        f"{self._failed_pod_logs(name)}"
                    )
            if job_status.get("succeeded", 0) >= completions:
                return
            if time.monotonic() > deadline:
                raise K8sError(
                    f"job {name} not complete after {timeout_s:.0f}s "
                    f"(active {job_status.get('active', 0)}, succeeded "
                    f"{job_status.get('succeeded', 0)} of {completions}); see "
                    f"kubectl -n {self.kube.namespace} describe job {name}"
                )
            if each_poll is not None:
                each_poll()
            time.sleep(POLL_S)

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

    def _run_pods(self) -> list[dict[str, Any]]:
        """The release's pods and the benchmark Job's: what the usage sampler reads."""
        release = self.kube.get("pods", "-l", f"app.kubernetes.io/instance={self.target.release}")
        return [*release["items"], *self._job_pods("benchmark")]

    def _logs_with_blocks(self, pod: str, container: str) -> tuple[str, list[ResultBlock]]:
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

    def _job_pods(self, job: str) -> list[dict[str, Any]]:
        pods = self.kube.get("pods", "-l", f"batch.kubernetes.io/job-name={job}")["items"]
        return sorted(pods, key=_completion_index)

    # --- preload ------------------------------------------------------------------------------

    def _preload_checks(self, spec: Spec) -> dict[str, Any]:
        """Miss ratios of the verify reads printed by the preload pods (each pod also fails on
        its own when a read misses, so a complete Job is already a zero-miss preload)."""
        checks = []
        for pod in self._job_pods("preload"):
            _, blocks = self._logs_with_blocks(pod["metadata"]["name"], "preload")
            for block in blocks:
                if not block.instance.startswith("verify-"):
                    continue
                gets = _stats(block.data()).get("Gets", {})
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

    # --- loadgens -----------------------------------------------------------------------------

    def _collect_loadgens(
        self, spec: Spec, run_dir: Path, record: dict[str, Any]
    ) -> tuple[RunStatus, str]:
        instances = spec.topology.instances_per_machine
        entries: list[dict[str, Any]] = []
        missing: list[str] = []
        pods = self._job_pods("benchmark")
        by_index = {_completion_index(p): p for p in pods}
        for machine in range(spec.topology.client_machines):
            pod = by_index.get(machine)
            if pod is None:
                missing.append(f"machine {machine}: no pod")
                continue
            name = pod["metadata"]["name"]
            log, found = self._logs_with_blocks(name, "loadgen")
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
                        "exit_code": _exit_code(pod),
                        "pod": name,
                        "node": pod["spec"].get("nodeName"),
                    }
                )
        record["loadgens"] = entries
        if missing:
            return ("partial" if entries else "failed"), "; ".join(missing)
        return "ok", ""

    # --- middleware ---------------------------------------------------------------------------

    def _middleware_pods(self) -> dict[str, dict[str, Any]]:
        pods = self.kube.get("pods", "-l", self.release.component_selector("middleware"))["items"]
        running = [p for p in pods if p["status"].get("phase") == "Running"]
        return {
            p["metadata"]["name"]: p for p in sorted(running, key=lambda p: p["metadata"]["name"])
        }

    def _scrape(self, pod: dict[str, Any]) -> dict[str, float] | str:
        """Parsed /metrics of a middleware pod, or why there are none."""
        node = pod["spec"].get("nodeName", "")
        try:
            annotations = self.kube.get("node", node)["metadata"].get("annotations", {})
        except K8sError as error:
            return f"node {node}: {error}"
        if annotations.get(KWOK_NODE_ANNOTATION):
            return f"node {node} is simulated by kwok: no middleware process to scrape"
        port = next(
            (
                p["containerPort"]
                for c in pod["spec"]["containers"]
                for p in c.get("ports", [])
                if p.get("name") == "metrics"
            ),
            None,
        )
        if port is None:
            return "the pod has no port named metrics"
        name = pod["metadata"]["name"]
        path = f"/api/v1/namespaces/{self.kube.namespace}/pods/{name}:{port}/proxy/metrics"
        try:
            return parse_metrics(self.kube.get_raw(path))
        except K8sError as error:
            return str(error)

    def _middleware_stats(
        self,
        pods: dict[str, dict[str, Any]],
        before: dict[str, dict[str, float] | str],
        seconds: float,
        run_dir: Path,
    ) -> list[dict[str, Any]]:
        entries = []
        for j, (name, pod) in enumerate(pods.items()):
            entry: dict[str, Any] = {"index": j, "address": name, "stats_dir": f"middleware-{j}"}
            first = before.get(name)
            after = self._scrape(pod) if isinstance(first, dict) else first
            if isinstance(first, dict) and isinstance(after, dict):
                folder = run_dir / f"middleware-{j}"
                folder.mkdir(exist_ok=True)
                write_json(folder / "summary.json", summary_from_scrapes(first, after, seconds))
            else:
                entry["unavailable"] = after
            entries.append(entry)
        return entries


def _completion_index(pod: dict[str, Any]) -> int:
    annotations = pod["metadata"].get("annotations", {})
    return int(annotations.get("batch.kubernetes.io/job-completion-index", -1))


def _exit_code(pod: dict[str, Any]) -> int | None:
    for cs in pod["status"].get("containerStatuses", []):
        terminated = cs.get("state", {}).get("terminated")
        if terminated is not None:
            return int(terminated.get("exitCode", 0))
    return None


def _helm_version(kube: Kube) -> str | None:
    try:
        return kube.helm("version", "--short").strip()
    except K8sError:
        return None


def _stats(data: dict[str, Any]) -> dict[str, Any]:
    for key, value in data.items():
        if key == "ALL STATS" or key.startswith("AGGREGATED AVERAGE RESULTS"):
            return dict(value)
    return {}


class OriginTracker:
    """When the loadgens' second 0 was (monotonic), from the first progress second the
    runner sees in the pods' logs: late by up to one poll and one `kubectl logs`, so a fault's
    times are early by as much. The runner's thread calls `seen`, the injector's `origin`."""

    def __init__(self) -> None:
        self._origin: float | None = None

    def seen(self, sample: LiveSample) -> None:
        if self._origin is None:
            self._origin = time.monotonic() - sample.second

    def origin(self) -> float | None:
        return self._origin


def instance_log(log: str, machine: int, instance: int) -> str:
    """A pod's log with the progress lines of its other instances left out (each instance's
    per-second series for the fault timeline)."""
    ours = f"progress machine={machine} instance={instance}: "
    return "".join(
        line
        for line in log.splitlines(keepends=True)
        if not line.startswith("progress machine=") or line.startswith(ours)
    )


@dataclass(frozen=True)
class Session:
    """A reachable cluster and what every run on it shares (from `connect`)."""

    root: Path
    target: plan.Target
    kube: Kube
    facts: dict[str, Any]
    extra: list[Path]
    timeout_s: float

    def new_results(self, spec: Spec, options: RunOptions) -> ResultsDir:
        """A new results folder for `spec` under the options' base."""
        return prepare_results(
            spec, options, self.root, self.kube, self.facts, self.target, self.extra
        )

    def runner(self, spec: Spec, results: ResultsDir, console: Console) -> K8sRunner:
        return K8sRunner(spec, results, self.kube, self.target, self.extra, self.timeout_s, console)


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


def connect(options: RunOptions, specs: Sequence[Spec] = ()) -> Session:
    """Check the options and `specs` (each point's) and reach the cluster. Raises PlanError or
    K8sError, naming the problem, before anything is installed."""
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
    for spec in specs:
        plan.check(spec)
        plan.job_config(spec, target)
        if (problem := k8s_fault_problem(spec, local_cluster=True)) is not None:
            raise plan.PlanError(problem)
    root = repo_root()
    kube = Kube(namespace=namespace, helm_binary=find_helm())
    facts = kube.cluster_facts()
    if "error" in facts:
        raise K8sError(f"cannot reach the cluster: {facts['error']}")
    for spec in specs:
        if (problem := k8s_fault_problem(spec, is_local_cluster(facts))) is not None:
            raise plan.PlanError(problem)
    return Session(root, target, kube, facts, extra, timeout_s)


def run(
    spec: Spec,
    options: RunOptions,
    console: Console,
    selection: Selection,
    resume: Path | None = None,
) -> tuple[ResultsDir, Status]:
    """Entry point of `cachelab run SPEC --target k8s` (a new results folder, or `resume`'s).
    Raises PlanError or K8sError, naming the problem, before anything is installed."""
    session = connect(options, [p.spec for p in spec.points()])
    previous: Status | None = None
    if resume is not None:
        results, previous = open_for_resume(spec, resume, "k8s")
    else:
        results = session.new_results(spec, options)
    console.print(f"results: {results.path}", highlight=False)
    warning = load_warning(os.getloadavg()[0], os.cpu_count(), "on this machine at the start")
    if warning:  # the loadgens run in the cluster; this machine only drives them
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    runner = session.runner(spec, results, console)
    reporter = RunLines(console, spec.run.duration_s)
    runner.live = reporter.live
    loop = ExperimentLoop(
        spec,
        results,
        runner,
        reporter,
        selection,
        previous,
        resume_hint=options.resume_command(results.path),
    )
    try:
        return results, loop.run()
    finally:
        finish_metadata(results.metadata_file)
        timing = overhead_line(runner.timings)
        if timing:
            console.print(timing, highlight=False)


def prepare_results(
    spec: Spec,
    options: RunOptions,
    root: Path,
    kube: Kube,
    facts: dict[str, Any],
    target: plan.Target,
    extra: list[Path],
) -> ResultsDir:
    base = options.results if options.results is not None else root / "results"
    results = ResultsDir.create(base, spec.name)
    spec_path = options.spec_path
    if spec_path.is_file():
        save_spec(spec, spec_path, results.spec_file)
    else:
        results.spec_file.write_text(yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False))
    settings = {"target": "k8s", "bandwidth": target.bandwidth, "loadgen": target.loadgen}
    # The local cluster's nodes carry the factor their pools' sizes were scaled by (a report
    # of such a run is one of scaled machines; scripts/local-cluster.sh).
    scales = sorted(
        {
            str(n["labels"][SCALE_LABEL])
            for n in facts.get("nodes", [])
            if SCALE_LABEL in n["labels"]
        }
    )
    if scales:
        settings["node_scale"] = ", ".join(scales)
    metadata = collect_metadata(root, settings=settings)
    metadata.update(
        target="k8s",
        experiment=spec.name,
        points=[{"point": p.index, "values": p.values} for p in spec.points()],
        cluster=facts,
        release={
            "helm": _helm_version(kube),
            "name": target.release,
            "chart": str(root / "charts" / "testbed"),
            "loadgen": target.loadgen,
            "bandwidth": target.bandwidth,
            "extra_values": [str(p) for p in extra],
        },
    )
    write_json(results.metadata_file, metadata)
    return results
