"""Every dashboard panel against a real Prometheus that scraped real local experiments.

Two short experiments run through `cachelab run --monitor`: memcached behind two middlewares
(the middleware and overview dashboards, one row per middleware pod), and redis without a
middleware (the servers dashboard's redis row, via the Debian redis exporter). Afterwards
Prometheus is started again on each run's stored TSDB, every dashboard variable is resolved
through the HTTP API and every panel expression is evaluated over the run; a panel that returns
nothing fails the test with its title.

The memcached row of the servers dashboard comes from collectd (Debian collectd-core), the
memcached exporter the chart runs too, with the chart's configuration.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cachelab import grafana
from cachelab.cli import main
from cachelab.local.commands import loadgen_argv, middleware_argv
from cachelab.local.runner import LISTENING
from cachelab.local.servers import HOST, start_servers
from cachelab.local.tools import Toolchain
from cachelab.monitor import (
    PromClient,
    loadgen_metrics_flags,
    middleware_metrics_flags,
    promtool_check_metrics,
    scrape,
    serve_stored,
)
from cachelab.paths import repo_root
from cachelab.processes import ProcessSet, free_port
from cachelab.spec import load_spec

ROOT = repo_root()
DASHBOARD_DIR = ROOT / "charts" / "testbed" / "dashboards"
pytestmark = [pytest.mark.e2e, pytest.mark.monitor]

SPEC_MEMCACHED = """
name: monitor-memcached
description: two middlewares in front of two memcached servers, monitored
seeds: []
topology:
  client_machines: 1
  instances_per_machine: 2
  threads: 1
  clients_per_thread: 2
  middlewares: 2
  workers: 2
  servers: 2
  backend: memcached
  hosts: {client: a2, middleware: a4, server: a1}
workload:
  protocol: memcache_text
  ratio: "1:3"
  value_bytes: 64
  key_maximum: 500
  key_pattern: "R:R"
preload:
  enabled: true
  expected_miss_ratio: 0.0
run:
  repetitions: 1
  duration_s: 9
  warmup_s: 1
  cooldown_s: 1
"""

SPEC_REDIS = """
name: monitor-redis
description: clients straight to one redis server, monitored
seeds: []
topology:
  client_machines: 1
  instances_per_machine: 1
  threads: 1
  clients_per_thread: 2
  middlewares: 0
  servers: 1
  backend: redis
  hosts: {client: a2, middleware: a4, server: a1}
workload:
  protocol: redis
  ratio: "1:3"
  value_bytes: 64
  key_maximum: 500
  key_pattern: "R:R"
preload:
  enabled: true
  expected_miss_ratio: 0.0
run:
  repetitions: 1
  duration_s: 9
  warmup_s: 1
  cooldown_s: 1
"""


@dataclass
class MonitoredRun:
    results: Path
    manifest: dict[str, Any]
    client: PromClient


def _run(spec_text: str, tmp_path: Path, name: str) -> Iterator[MonitoredRun]:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(spec_text)
    base = tmp_path / "results"
    assert main(["run", str(spec), "--target", "local", "--monitor", "--results", str(base)]) == 0
    (results,) = (base / name).iterdir()
    monitor_dir = results / "prometheus"
    manifest = json.loads((monitor_dir / "monitor.json").read_text())
    assert manifest["stopped_at"] is not None
    prometheus = serve_stored(monitor_dir, tmp_path / f"replay-{name}")
    try:
        yield MonitoredRun(results, manifest, prometheus.client())
    finally:
        prometheus.stop()


@pytest.fixture(scope="module")
def memcached_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MonitoredRun]:
    yield from _run(SPEC_MEMCACHED, tmp_path_factory.mktemp("mc"), "monitor-memcached")


@pytest.fixture(scope="module")
def redis_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MonitoredRun]:
    yield from _run(SPEC_REDIS, tmp_path_factory.mktemp("redis"), "monitor-redis")


def _evaluate(run: MonitoredRun, dashboard: str) -> list[grafana.Evaluation]:
    dashboards = grafana.load_dir(DASHBOARD_DIR)
    return grafana.evaluate(
        dashboard,
        dashboards[dashboard],
        run.client,
        run.manifest["started_at"],
        run.manifest["stopped_at"],
        rate_interval="5s",
    )


def _empty(runs: list[grafana.Evaluation]) -> list[str]:
    return [r.describe() for r in runs if r.series == 0]


def test_run_keeps_prometheus_data_and_targets_next_to_the_results(
    memcached_run: MonitoredRun,
) -> None:
    monitor_dir = memcached_run.results / "prometheus"
    assert (monitor_dir / "data").is_dir()
    assert (monitor_dir / "prometheus.yml").is_file()
    jobs = {t["job"] for t in memcached_run.manifest["targets"]}
    assert {"middleware", "loadgen", "node-exporter"} <= jobs
    pods = memcached_run.client.label_values(
        'up{job="middleware"}',
        "pod",
        memcached_run.manifest["started_at"],
        memcached_run.manifest["stopped_at"],
    )
    assert pods == ["middleware-0", "middleware-1"]


def test_every_middleware_panel_returns_data_per_pod_and_in_aggregate(
    memcached_run: MonitoredRun,
) -> None:
    runs = _evaluate(memcached_run, "cachelab-middleware.json")
    assert _empty(runs) == []
    per_pod = {r.rendered for r in runs if r.query.repeat == "pod"}
    assert any('pod=~"middleware-0"' in e for e in per_pod)
    assert any('pod=~"middleware-1"' in e for e in per_pod)


def _values(run: MonitoredRun, evaluation: grafana.Evaluation) -> list[float]:
    series = run.client.query_range(
        evaluation.rendered, run.manifest["started_at"], run.manifest["stopped_at"]
    )
    values = [float(v) for s in series for _, v in s["values"]]
    return [v for v in values if math.isfinite(v)]


def test_middleware_panels_show_what_the_run_did(memcached_run: MonitoredRun) -> None:
    aggregate = {
        r.query.title: r
        for r in _evaluate(memcached_run, "cachelab-middleware.json")
        if r.query.repeat is None
    }
    # preloaded keys: (almost) no misses
    assert max(_values(memcached_run, aggregate["Cache miss ratio"])) < 0.05
    # round robin over two servers: each gets about half of the requests
    shares = _values(memcached_run, aggregate["Request share per server"])
    assert shares and all(0.3 < v < 0.7 for v in shares), shares
    busy = _values(memcached_run, aggregate["Worker busy fraction"])
    assert busy and all(0.0 <= v <= 1.0 for v in busy), busy
    assert max(_values(memcached_run, aggregate["Throughput by operation"])) > 10


def test_every_overview_panel_returns_data(memcached_run: MonitoredRun) -> None:
    assert _empty(_evaluate(memcached_run, "cachelab-overview.json")) == []


def test_every_servers_panel_returns_data_except_the_listed_exclusions(
    memcached_run: MonitoredRun, redis_run: MonitoredRun
) -> None:
    redis_runs = [
        r
        for r in _evaluate(redis_run, "cachelab-servers.json")
        if r.query.title.startswith("redis ")
    ]
    memcached_runs = [
        r
        for r in _evaluate(memcached_run, "cachelab-servers.json")
        if r.query.title.startswith("memcached ")
    ]
    titles = {r.query.title for r in redis_runs + memcached_runs}
    all_titles = {
        q.title for q in grafana.queries("s", grafana.load(DASHBOARD_DIR / "cachelab-servers.json"))
    }
    assert titles == all_titles  # every panel is one of the two rows
    assert _empty(redis_runs) == []
    # the memcached row from collectd, the chart's memcached exporter (Debian collectd-core)
    assert _empty(memcached_runs) == []


MIDDLEWARE_FAMILIES = {
    "cachelab_middleware_requests": "counter",
    "cachelab_middleware_errors": "counter",
    "cachelab_middleware_keys_requested": "counter",
    "cachelab_middleware_hits": "counter",
    "cachelab_middleware_response_time_seconds": "histogram",
    "cachelab_middleware_queue_time_seconds": "histogram",
    "cachelab_middleware_service_time_seconds": "histogram",
    "cachelab_middleware_staging_time_seconds": "histogram",
    "cachelab_middleware_queue_length": "gauge",
    "cachelab_middleware_workers": "gauge",
    "cachelab_middleware_worker_busy_seconds": "counter",
    "cachelab_middleware_server_requests": "counter",
    "cachelab_middleware_server_errors": "counter",
    "cachelab_middleware_client_connections": "gauge",
}
LOADGEN_FAMILIES = {
    "cachelab_loadgen_requests": "counter",
    "cachelab_loadgen_response_time_seconds": "histogram",
    "cachelab_loadgen_errors": "counter",
}


def _families(exposition: bytes) -> dict[str, str]:
    """Metric family -> type, from the `# TYPE` lines (counter families lose `_total`)."""
    found = {}
    for line in exposition.decode().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            found[name.removesuffix("_total") if kind == "counter" else name] = kind
    return found


def _scrape_until(address: str, needle: bytes, timeout_s: float = 60.0) -> bytes:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            body = scrape(address)
            if needle in body:
                return body
        except OSError:
            pass
        assert time.monotonic() < deadline, f"{address}/metrics never showed {needle!r}"
        time.sleep(0.5)


def test_middleware_and_loadgen_scrapes_pass_promtool(tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(SPEC_MEMCACHED)
    spec = load_spec(spec_file)
    tools = Toolchain.discover()
    with ProcessSet() as procs:
        (server,) = start_servers(procs, "memcached", 1, tmp_path)
        mw_port, mw_metrics, lg_metrics = free_port(HOST), free_port(HOST), free_port(HOST)
        stats = tmp_path / "middleware-0"
        stats.mkdir()
        argv = middleware_argv(
            tools.java, tools.middleware_jar, spec, HOST, mw_port, [server.address], stats
        )
        middleware = procs.start(
            "middleware-0", argv + middleware_metrics_flags(mw_metrics), stats / "stdout.log"
        )
        middleware.wait_for_line(LISTENING, timeout_s=60.0)
        argv = loadgen_argv(
            tools.java,
            tools.loadgen_jar,
            spec,
            HOST,
            mw_port,
            tmp_path / "lg.json",
            tmp_path / "lg-hdr",
        )
        procs.start("loadgen-0", argv + loadgen_metrics_flags(lg_metrics), tmp_path / "lg.log")
        loadgen_body = _scrape_until(
            f"{HOST}:{lg_metrics}", b'cachelab_loadgen_requests_total{op="get"}'
        )
        middleware_body = _scrape_until(
            f"{HOST}:{mw_metrics}", b"cachelab_middleware_requests_total"
        )
    assert promtool_check_metrics(middleware_body) == []
    assert promtool_check_metrics(loadgen_body) == []
    assert MIDDLEWARE_FAMILIES.items() <= _families(middleware_body).items()
    assert LOADGEN_FAMILIES.items() <= _families(loadgen_body).items()
