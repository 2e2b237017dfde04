"""Prometheus and the exporters as local child processes, each on a free loopback port (started
and stopped through cachelab.processes, from the thread that owns the monitor)."""

from __future__ import annotations

import shutil
import time
import urllib.error
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from cachelab.monitor.errors import MonitorError
from cachelab.monitor.promql import START_TIMEOUT_S, PromClient, _http_get
from cachelab.paths import repo_root
from cachelab.processes import ManagedProcess, ProcessError, free_port

PROMETHEUS_BIN = "/usr/bin/prometheus"
NODE_EXPORTER_BIN = "/usr/bin/prometheus-node-exporter"
REDIS_EXPORTER_BIN = "/usr/bin/prometheus-redis-exporter"
# The memcached exporter is collectd (Debian collectd-core) with its memcached and
# write_prometheus plugins, configured from the chart's file (its sidecar's configuration).
MEMCACHED_EXPORTER_BIN = "/usr/sbin/collectd"
COLLECTD_CONFIG_TEMPLATE = repo_root() / "charts" / "testbed" / "files" / "collectd-memcached.conf"
COLLECTD_INTERVAL_S = 1  # the local Prometheus scrapes every second


def wait_http_ok(url: str, proc: ManagedProcess | None, timeout_s: float, what: str) -> None:
    """Polls ``url`` until it answers 200; fails early with the log if ``proc`` exits."""
    deadline = time.monotonic() + timeout_s
    last_error = ""
    while time.monotonic() < deadline:
        if proc is not None and not proc.running():
            raise MonitorError(
                f"{what} exited with status {proc.returncode()} before {url} answered"
            )
        try:
            _http_get(url, timeout_s=2.0)
            return
        except (urllib.error.URLError, OSError) as e:
            last_error = str(e)
        time.sleep(0.1)
    raise MonitorError(f"{what}: {url} did not answer within {timeout_s:.0f} s ({last_error})")


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
            try:
                self._process = ManagedProcess(name, argv(), log_path)
            except ProcessError as e:
                raise MonitorError(str(e)) from None
            try:
                wait_http_ok(ready_url(), self._process, START_TIMEOUT_S, name)
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


def collectd_config(memcached_address: str, listen_address: str, interval_s: int) -> str:
    """The chart's collectd configuration (``files/collectd-memcached.conf``) for a memcached
    at ``memcached_address`` served on ``listen_address`` (both ``host:port``)."""
    memcached_host, memcached_port = memcached_address.rsplit(":", 1)
    listen_host, listen_port = listen_address.rsplit(":", 1)
    values = {
        "@MEMCACHED_HOST@": memcached_host,
        "@MEMCACHED_PORT@": memcached_port,
        "@LISTEN_HOST@": listen_host,
        "@PORT@": listen_port,
        "@INTERVAL_S@": str(interval_s),
    }
    text = COLLECTD_CONFIG_TEMPLATE.read_text(encoding="utf-8")
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


class CollectdExporter(Exporter):
    """collectd as the exporter of one memcached server: its configuration is written next to
    its log for each port it tries."""

    def __init__(self, memcached_address: str, log_path: Path, binary: str) -> None:
        super().__init__("memcached-exporter", [], log_path)
        self.memcached_address = memcached_address
        self.binary = binary
        self.config_path = log_path.with_suffix(".conf")

    def start(self, attempts: int = 3) -> None:
        def argv() -> list[str]:
            config = collectd_config(self.memcached_address, self.address, COLLECTD_INTERVAL_S)
            self.config_path.parent.mkdir(parents=True, exist_ok=True)
            self.config_path.write_text(config, encoding="utf-8")
            return [self.binary, "-f", "-C", str(self.config_path)]

        self._start_on_free_port(
            self.name, attempts, argv, self.log_path, lambda: f"http://{self.address}/metrics"
        )


def memcached_exporter(
    memcached_address: str, log_path: Path, binary: str = MEMCACHED_EXPORTER_BIN
) -> Exporter:
    """collectd reading one memcached server's ``stats`` (the chart's memcached exporter)."""
    return CollectdExporter(memcached_address, log_path, binary)
