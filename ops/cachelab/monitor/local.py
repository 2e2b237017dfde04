"""The local monitor: a Prometheus scraping a local experiment with the labels a Kubernetes scrape
would give each target (``namespace``, ``pod``, ``container``, ``job``, ``release``;
docs/observability.md), so the dashboards' queries run unchanged against it."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from cachelab.monitor.errors import MonitorError
from cachelab.monitor.flags import loadgen_metrics_flags, middleware_metrics_flags
from cachelab.monitor.promql import START_TIMEOUT_S, PromClient
from cachelab.monitor.services import (
    MEMCACHED_EXPORTER_BIN,
    REDIS_EXPORTER_BIN,
    Exporter,
    Prometheus,
    memcached_exporter,
    node_exporter,
    redis_exporter,
)
from cachelab.processes import free_port

DEFAULT_NAMESPACE = "local"
DEFAULT_RELEASE = "local"


@dataclass(frozen=True)
class ScrapeTarget:
    """One ``/metrics`` endpoint with the labels a Kubernetes scrape would give it.

    ``pod`` and ``container`` name the local process as the chart would name the pod and the
    container; ``job`` is the component (``middleware``, ``loadgen``, ``redis-exporter``...).
    """

    job: str
    address: str
    pod: str
    container: str
    extra_labels: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        host, _, port = self.address.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(
                f"scrape target {self.job}: address must be host:port, got {self.address!r}"
            )


JOBS = ("middleware", "loadgen", "memcached-exporter", "redis-exporter", "node-exporter")


def target_groups(
    targets: Sequence[ScrapeTarget],
    namespace: str = DEFAULT_NAMESPACE,
    release: str = DEFAULT_RELEASE,
) -> list[dict[str, Any]]:
    """File-SD target groups (one per target) with the labels of a Kubernetes scrape.

    Node metrics are not a testbed release's: node-exporter targets get neither ``namespace``
    nor ``release`` unless ``extra_labels`` sets them (kube-prometheus-stack runs its node
    exporter in the monitoring namespace).
    """
    groups = []
    for t in targets:
        labels = {"pod": t.pod, "container": t.container}
        if t.job != "node-exporter":
            labels |= {"namespace": namespace, "release": release}
        labels |= t.extra_labels
        groups.append({"targets": [t.address], "labels": labels})
    return groups


def scrape_config(targets_dir: Path, scrape_interval_s: float = 1.0) -> dict[str, Any]:
    """A Prometheus configuration with one job per component, each reading its targets from
    ``<targets_dir>/<job>.json`` (file service discovery: targets change from run to run
    without a restart). The ``job`` label is the component's name."""
    if scrape_interval_s <= 0:
        raise ValueError(f"scrape_interval_s: must be > 0, got {scrape_interval_s}")
    interval = f"{int(scrape_interval_s * 1000)}ms"
    return {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "scrape_configs": [
            {
                "job_name": job,
                "scrape_interval": interval,
                "scrape_timeout": interval,
                "file_sd_configs": [
                    {"files": [str(targets_dir / f"{job}.json")], "refresh_interval": "5s"}
                ],
            }
            for job in JOBS
        ],
    }


@dataclass(frozen=True)
class ServerEndpoint:
    """A cache server of the experiment: kind (``memcached``/``redis``), address and pod name."""

    kind: str
    address: str
    pod: str


@dataclass(frozen=True)
class MonitorSettings:
    """Labels and scrape interval of a local monitor.

    ``pools`` are the node pools the roles would run on (the spec's ``topology.hosts``); the
    local machine's node exporter is scraped once per distinct pool, with that ``pool`` label,
    because every role of a local run shares this machine.
    """

    namespace: str = DEFAULT_NAMESPACE
    release: str = DEFAULT_RELEASE
    pools: tuple[str, ...] = ("local",)
    scrape_interval_s: float = 1.0


class LocalMonitor:
    """Prometheus, the node exporter and the servers' exporters of a local experiment.

    ``workdir`` (e.g. ``<results>/prometheus``) receives the TSDB (``data/``), the generated
    ``prometheus.yml`` and ``targets/``, the processes' logs and ``monitor.json`` (URL, targets,
    time span, exporters that could not run). The runner calls ``watch_servers`` and
    ``set_targets`` as it starts processes; Prometheus follows through file discovery.
    Not thread-safe: the runner's thread calls every method.
    """

    def __init__(
        self,
        workdir: Path,
        settings: MonitorSettings | None = None,
        port_allocator: Callable[[], int] = free_port,
    ) -> None:
        self.workdir = workdir
        self.settings = settings or MonitorSettings()
        self.port_allocator = port_allocator
        self.node: Exporter | None = None
        self.server_exporters: dict[str, Exporter] = {}
        self.targets: dict[str, list[ScrapeTarget]] = {job: [] for job in JOBS}
        self.skipped: list[str] = []
        self.prometheus: Prometheus | None = None
        self.started_at = 0.0
        self.stopped_at = 0.0

    @property
    def targets_dir(self) -> Path:
        return self.workdir / "targets"

    def client(self) -> PromClient:
        if self.prometheus is None:
            raise MonitorError("monitor not started")
        return self.prometheus.client()

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        self.targets_dir.mkdir(parents=True, exist_ok=True)
        for job in JOBS:
            self._write_targets(job)
        self.node = node_exporter(self.workdir / "logs" / "node-exporter.log")
        self.node.start()
        hostname = socket.gethostname()
        self.set_targets(
            "node-exporter",
            [
                ScrapeTarget(
                    "node-exporter",
                    self.node.address,
                    pod=f"node-exporter-{hostname}",
                    container="node-exporter",
                    extra_labels={"instance": hostname, "pool": pool, "namespace": "monitoring"},
                )
                for pool in dict.fromkeys(self.settings.pools)
            ],
        )
        config = scrape_config(self.targets_dir, self.settings.scrape_interval_s)
        self.prometheus = Prometheus(self.workdir, config)
        self.prometheus.start()
        self.wait_scraped()
        self.started_at = time.time()
        self._write_manifest()

    def wait_scraped(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Waits until Prometheus has discovered every current target and scraped it once."""
        expected = sum(len(t) for t in self.targets.values())
        self.client().wait_targets_up(expected, timeout_s)

    def set_targets(self, job: str, targets: Sequence[ScrapeTarget]) -> None:
        """Replaces the targets of ``job`` (one of ``JOBS``)."""
        if job not in JOBS:
            raise ValueError(f"job: must be one of {', '.join(JOBS)}, got {job!r}")
        wrong = [t.job for t in targets if t.job != job]
        if wrong:
            raise ValueError(f"set_targets({job!r}): targets of job {wrong[0]!r}")
        self.targets[job] = list(targets)
        self._write_targets(job)
        if self.prometheus is not None:
            self._write_manifest()

    # --- hooks for the local runner: one call per run and per process it starts -----------

    def begin_run(self, backend: str, server_addresses: Sequence[str]) -> None:
        """A new run: exporters for its servers (pods ``<backend>-<k>``), no clients yet."""
        self.watch_servers(
            [ServerEndpoint(backend, a, f"{backend}-{k}") for k, a in enumerate(server_addresses)]
        )
        self.set_targets("middleware", [])
        self.set_targets("loadgen", [])

    def scrape_middleware(self, pod: str) -> list[str]:
        """Registers middleware ``pod`` for scraping; returns the flags that serve its metrics."""
        port = self._add_target("middleware", pod)
        return middleware_metrics_flags(port)

    def scrape_loadgen(self, pod: str) -> list[str]:
        """Registers loadgen ``pod`` for scraping; returns the flag that serves its metrics."""
        port = self._add_target("loadgen", pod)
        return loadgen_metrics_flags(port)

    def _add_target(self, job: str, pod: str) -> int:
        port = self.port_allocator()
        target = ScrapeTarget(job, f"127.0.0.1:{port}", pod, job)
        self.set_targets(job, [*[t for t in self.targets[job] if t.pod != pod], target])
        return port

    def watch_servers(self, servers: Sequence[ServerEndpoint]) -> None:
        """Runs one exporter per server (when its binary exists); stops those of servers gone."""
        wanted = {s.address: s for s in servers}
        for address in [a for a in self.server_exporters if a not in wanted]:
            self.server_exporters.pop(address).stop()
        for address, server in wanted.items():
            if address not in self.server_exporters:
                exporter = self._server_exporter(server)
                if exporter is not None:
                    self.server_exporters[address] = exporter
        for kind in ("memcached", "redis"):
            job = f"{kind}-exporter"
            self.set_targets(
                job,
                [
                    # a sidecar of the server pod: the server's pod, the exporter's container
                    ScrapeTarget(job, self.server_exporters[s.address].address, s.pod, job)
                    for s in servers
                    if s.kind == kind and s.address in self.server_exporters
                ],
            )

    def _server_exporter(self, server: ServerEndpoint) -> Exporter | None:
        log = self.workdir / "logs" / f"{server.kind}-exporter-{server.pod}.log"
        if server.kind == "redis" and Path(REDIS_EXPORTER_BIN).exists():
            exporter = redis_exporter(server.address, log)
        elif server.kind == "memcached" and Path(MEMCACHED_EXPORTER_BIN).exists():
            exporter = memcached_exporter(server.address, log)
        else:
            note = f"{server.kind} exporter for {server.pod}: binary not installed"
            if note not in self.skipped:
                self.skipped.append(note)
            return None
        exporter.start()
        return exporter

    def _write_targets(self, job: str) -> None:
        groups = target_groups(self.targets[job], self.settings.namespace, self.settings.release)
        path = self.targets_dir / f"{job}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(groups, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)  # atomic: Prometheus never reads half a file

    def _write_manifest(self) -> None:
        assert self.prometheus is not None
        manifest = {
            "prometheus_url": self.prometheus.url,
            "storage_path": str(self.prometheus.storage_path),
            "config_path": str(self.prometheus.config_path),
            "started_at": self.started_at,
            "stopped_at": self.stopped_at or None,
            "namespace": self.settings.namespace,
            "release": self.settings.release,
            "targets": [
                {"job": t.job, "address": t.address, "pod": t.pod, "container": t.container}
                for targets in self.targets.values()
                for t in targets
            ],
            "skipped": self.skipped,
        }
        (self.workdir / "monitor.json").write_text(json.dumps(manifest, indent=2) + "\n")

    def stop(self) -> None:
        """Stops Prometheus first (it writes its head to disk), then the exporters."""
        if self.prometheus is not None:
            self.prometheus.stop()
            self.stopped_at = time.time()
            self._write_manifest()
        for exporter in self.server_exporters.values():
            exporter.stop()
        self.server_exporters.clear()
        if self.node is not None:
            self.node.stop()

    def __enter__(self) -> LocalMonitor:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
