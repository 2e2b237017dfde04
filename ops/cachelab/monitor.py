"""Local monitoring: a real Prometheus scraping a local experiment, and a PromQL client.

``LocalMonitor`` starts ``prometheus-node-exporter`` and, for each redis server, the redis
exporter (when the Debian binaries exist), writes a scrape config in which every target carries
the labels a Kubernetes scrape would give it (``namespace``, ``pod``, ``container``, ``job``, and
``release``, see ``docs/observability.md``), and runs ``/usr/bin/prometheus`` on a free loopback
port with its TSDB next to the results. The dashboards' queries therefore run unchanged against
it. ``PromClient`` evaluates PromQL through Prometheus's HTTP API.

All processes listen on 127.0.0.1 on ports chosen at run time, and are stopped on exit (also
when the body of the ``with`` block raises).
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

PROMETHEUS_BIN = "/usr/bin/prometheus"
NODE_EXPORTER_BIN = "/usr/bin/prometheus-node-exporter"
REDIS_EXPORTER_BIN = "/usr/bin/prometheus-redis-exporter"
# prom/memcached-exporter has no Debian package; on a cluster the chart runs it as a sidecar.
MEMCACHED_EXPORTER_BIN = "memcached_exporter"

DEFAULT_NAMESPACE = "local"
DEFAULT_RELEASE = "local"
START_TIMEOUT_S = 30.0


class MonitorError(RuntimeError):
    """A monitoring process did not start, or Prometheus answered with an error."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


def _http_get(url: str, timeout_s: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        body: bytes = response.read()
        return body


def wait_http_ok(
    url: str, proc: subprocess.Popen[bytes] | None, timeout_s: float, what: str
) -> None:
    """Polls ``url`` until it answers 200; fails early with the log if ``proc`` exits."""
    deadline = time.monotonic() + timeout_s
    last_error = ""
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise MonitorError(f"{what} exited with status {proc.returncode} before {url} answered")
        try:
            _http_get(url, timeout_s=2.0)
            return
        except (urllib.error.URLError, OSError) as e:
            last_error = str(e)
        time.sleep(0.1)
    raise MonitorError(f"{what}: {url} did not answer within {timeout_s:.0f} s ({last_error})")


class ManagedProcess:
    """A child process with its log file; ``stop()`` sends SIGTERM, then SIGKILL after a grace."""

    def __init__(self, name: str, argv: list[str], log_path: Path) -> None:
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        return self._proc

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self._proc = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's Ctrl-C goes to cachelab, not here
            )

    def stop(self, grace_s: float = 10.0) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class PromClient:
    """PromQL over Prometheus's HTTP API (``/api/v1``). Results are the API's ``data`` objects."""

    def __init__(self, base_url: str, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def _api(self, path: str, params: Sequence[tuple[str, str]]) -> Any:
        url = f"{self.base_url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        try:
            body = _http_get(url, self.timeout_s)
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")
            raise MonitorError(f"Prometheus {path} failed ({e.code}): {detail}") from e
        reply = json.loads(body)
        if reply.get("status") != "success":
            raise MonitorError(f"Prometheus {path} failed: {reply.get('error', reply)}")
        return reply["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """Instant query; returns the vector (a scalar result becomes one unlabeled sample)."""
        params = [("query", expr)] + ([("time", f"{at:.3f}")] if at is not None else [])
        data = self._api("query", params)
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def query_range(
        self, expr: str, start: float, end: float, step_s: float = 1.0
    ) -> list[dict[str, Any]]:
        """Range query; returns one entry per series with its ``values`` ([time, "value"])."""
        params = [
            ("query", expr),
            ("start", f"{start:.3f}"),
            ("end", f"{end:.3f}"),
            ("step", f"{step_s:g}"),
        ]
        result: list[dict[str, Any]] = self._api("query_range", params)["result"]
        return result

    def series(
        self, match: str, start: float | None = None, end: float | None = None
    ) -> list[dict[str, str]]:
        """Label sets of the series matching the selector ``match``."""
        params = [("match[]", match)]
        if start is not None and end is not None:
            params += [("start", f"{start:.3f}"), ("end", f"{end:.3f}")]
        result: list[dict[str, str]] = self._api("series", params)
        return result

    def label_values(
        self, selector: str, label: str, start: float | None = None, end: float | None = None
    ) -> list[str]:
        """What Grafana's ``label_values(selector, label)`` lists: sorted distinct values."""
        return sorted({s[label] for s in self.series(selector, start, end) if label in s})

    def targets(self) -> list[dict[str, Any]]:
        """The active scrape targets with their labels, health and last error."""
        active: list[dict[str, Any]] = self._api("targets", [("state", "active")])["activeTargets"]
        return active

    def wait_targets_up(
        self, expected: int | None = None, timeout_s: float = START_TIMEOUT_S
    ) -> list[dict[str, Any]]:
        """Waits until ``expected`` targets (default: any) are discovered and every one has
        been scraped successfully."""
        deadline = time.monotonic() + timeout_s
        targets: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            targets = self.targets()
            enough = len(targets) >= expected if expected is not None else bool(targets)
            if enough and all(t["health"] == "up" for t in targets):
                return targets
            time.sleep(0.2)
        down = [
            f"{t['labels'].get('job')} {t['scrapeUrl']}: {t['lastError'] or t['health']}"
            for t in targets
            if t["health"] != "up"
        ]
        raise MonitorError(
            f"targets not up within {timeout_s:.0f} s ({len(targets)} discovered, "
            f"expected {expected or 'some'}): {'; '.join(down)}"
        )


class _LoopbackService:
    """A child process serving HTTP on a free loopback port. Started and stopped from the
    thread that owns the monitor."""

    port: int
    _process: ManagedProcess | None

    def _start_on_free_port(
        self,
        name: str,
        attempts: int,
        argv: Callable[[], list[str]],
        log_path: Path,
        ready_url: Callable[[], str],
    ) -> None:
        """Start on a fresh port until `ready_url` answers; `argv` and `ready_url` read
        `self.port`, which is set before each call."""
        error: MonitorError | None = None
        for _ in range(attempts):  # the free port can be taken between probe and bind
            self.port = free_port()
            self._process = ManagedProcess(name, argv(), log_path)
            self._process.start()
            try:
                wait_http_ok(ready_url(), self._process.proc, START_TIMEOUT_S, name)
                return
            except MonitorError as e:
                error = MonitorError(f"{e}\n{self._process.log_tail()}")
                self._process.stop()
        assert error is not None
        raise error

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()


class Prometheus(_LoopbackService):
    """``/usr/bin/prometheus`` on a free loopback port with a generated config and local TSDB."""

    def __init__(
        self,
        workdir: Path,
        config: dict[str, Any],
        binary: str = PROMETHEUS_BIN,
        storage_path: Path | None = None,
    ) -> None:
        self.workdir = workdir
        self.config = config
        self.binary = binary
        self._storage_path = storage_path
        self.port = 0
        self._process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def storage_path(self) -> Path:
        return self._storage_path or self.workdir / "data"

    @property
    def config_path(self) -> Path:
        return self.workdir / "prometheus.yml"

    def client(self) -> PromClient:
        return PromClient(self.url)

    def start(self, attempts: int = 3) -> None:
        if not Path(self.binary).exists() and shutil.which(self.binary) is None:
            raise MonitorError(
                f"{self.binary} not found: install the Debian package `prometheus` (make deps)"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(yaml.safe_dump(self.config, sort_keys=False), encoding="utf-8")
        self._start_on_free_port(
            "prometheus",
            attempts,
            lambda: [
                self.binary,
                f"--config.file={self.config_path}",
                f"--storage.tsdb.path={self.storage_path}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=30d",
                "--web.enable-lifecycle",
            ],
            self.workdir / "prometheus.log",
            lambda: f"{self.url}/-/ready",
        )


def serve_stored(monitor_dir: Path, workdir: Path) -> Prometheus:
    """Starts Prometheus on the TSDB a finished ``--monitor`` run left in ``monitor_dir``.

    It scrapes nothing (its own config lives in ``workdir``), so the stored series are all it
    serves; call ``stop()`` when done. The run's time span is in ``monitor_dir/monitor.json``.
    """
    data = monitor_dir / "data"
    if not data.is_dir():
        raise MonitorError(f"{monitor_dir}: no data/ folder (was the run made with --monitor?)")
    prometheus = Prometheus(workdir, {"global": {}, "scrape_configs": []}, storage_path=data)
    prometheus.start()
    return prometheus


class Exporter(_LoopbackService):
    """An exporter binary listening on a free loopback port (node or redis exporter)."""

    def __init__(self, name: str, argv_for_port: list[str], log_path: Path) -> None:
        self.name = name
        self._argv_for_port = argv_for_port
        self.log_path = log_path
        self.port = 0
        self._process: ManagedProcess | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, attempts: int = 3) -> None:
        self._start_on_free_port(
            self.name,
            attempts,
            lambda: [a.replace("{address}", self.address) for a in self._argv_for_port],
            self.log_path,
            lambda: f"http://{self.address}/metrics",
        )


def node_exporter(log_path: Path, binary: str = NODE_EXPORTER_BIN) -> Exporter:
    """``prometheus-node-exporter`` with the collectors the dashboards read (cpu, netdev...)."""
    return Exporter(
        "node-exporter",
        [
            binary,
            "--web.listen-address={address}",
            "--collector.disable-defaults",
            "--collector.cpu",
            "--collector.netdev",
            "--collector.meminfo",
            "--collector.loadavg",
        ],
        log_path,
    )


def redis_exporter(
    redis_address: str, log_path: Path, binary: str = REDIS_EXPORTER_BIN
) -> Exporter:
    """oliver006/redis_exporter (Debian ``prometheus-redis-exporter``) for one redis server."""
    return Exporter(
        "redis-exporter",
        [binary, f"-redis.addr=redis://{redis_address}", "-web.listen-address={address}"],
        log_path,
    )


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
        elif server.kind == "memcached" and shutil.which(MEMCACHED_EXPORTER_BIN):
            exporter = Exporter(
                "memcached-exporter",
                [
                    MEMCACHED_EXPORTER_BIN,
                    f"--memcached.address={server.address}",
                    "--web.listen-address={address}",
                ],
                log,
            )
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


def middleware_metrics_flags(port: int) -> list[str]:
    """Middleware options serving ``/metrics`` on loopback ``port`` (docs/interfaces.md §1)."""
    return ["--metrics-port", str(port), "--metrics-address", "127.0.0.1"]


def loadgen_metrics_flags(port: int) -> list[str]:
    """Loadgen option serving ``/metrics`` on ``port`` (docs/interfaces.md §2)."""
    return [f"--metrics-port={port}"]


def promtool_check_metrics(exposition: bytes, promtool: str = "/usr/bin/promtool") -> list[str]:
    """Runs ``promtool check metrics`` on a scrape; returns its complaints (empty when clean)."""
    result = subprocess.run(
        [promtool, "check", "metrics"], input=exposition, capture_output=True, timeout=60
    )
    lines = (result.stdout + result.stderr).decode(errors="replace").splitlines()
    return [line for line in lines if line.strip()]


def scrape(address: str, path: str = "/metrics") -> bytes:
    """One scrape of ``http://address/path`` in the text exposition format."""
    return _http_get(f"http://{address}{path}")


__all__ = [
    "LocalMonitor",
    "ManagedProcess",
    "MonitorError",
    "MonitorSettings",
    "PromClient",
    "Prometheus",
    "ScrapeTarget",
    "ServerEndpoint",
    "free_port",
    "loadgen_metrics_flags",
    "middleware_metrics_flags",
    "node_exporter",
    "promtool_check_metrics",
    "redis_exporter",
    "scrape",
    "scrape_config",
    "serve_stored",
    "target_groups",
]
