"""The local monitor: scrape config labels, and a real Prometheus with real exporters."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachelab import grafana
from cachelab.monitor import (
    LocalMonitor,
    MonitorError,
    MonitorSettings,
    PromClient,
    Prometheus,
    ScrapeTarget,
    ServerEndpoint,
    free_port,
    promtool_check_metrics,
    scrape,
    scrape_config,
    serve_stored,
    target_groups,
)
from cachelab.monitor import local as local_monitor
from cachelab.paths import repo_root

ROOT = repo_root()
DASHBOARD_DIR = ROOT / "charts" / "testbed" / "dashboards"


def test_target_groups_give_every_target_the_kubernetes_labels() -> None:
    groups = target_groups(
        [
            ScrapeTarget("middleware", "127.0.0.1:9001", "middleware-0", "middleware"),
            ScrapeTarget("middleware", "127.0.0.1:9002", "middleware-1", "middleware"),
            ScrapeTarget(
                "node-exporter",
                "127.0.0.1:9100",
                "node-exporter-h",
                "node-exporter",
                {"pool": "a4", "namespace": "monitoring"},
            ),
        ],
        namespace="ns",
        release="rel",
    )
    assert groups[1] == {
        "targets": ["127.0.0.1:9002"],
        "labels": {
            "pod": "middleware-1",
            "container": "middleware",
            "namespace": "ns",
            "release": "rel",
        },
    }
    # node metrics belong to no release, like kube-prometheus-stack's node exporter
    assert groups[2]["labels"] == {
        "pod": "node-exporter-h",
        "container": "node-exporter",
        "pool": "a4",
        "namespace": "monitoring",
    }


def test_scrape_config_reads_each_job_from_its_targets_file(tmp_path: Path) -> None:
    config = scrape_config(tmp_path, scrape_interval_s=0.5)
    assert config["global"]["scrape_interval"] == "500ms"
    jobs = {j["job_name"]: j["file_sd_configs"][0]["files"] for j in config["scrape_configs"]}
    assert jobs["loadgen"] == [str(tmp_path / "loadgen.json")]
    assert set(jobs) == {
        "middleware",
        "loadgen",
        "memcached-exporter",
        "redis-exporter",
        "node-exporter",
    }


def test_set_targets_rejects_an_unknown_job_and_a_mismatched_target(tmp_path: Path) -> None:
    monitor = LocalMonitor(tmp_path)
    with pytest.raises(ValueError, match=r"job: must be one of middleware, .*got 'mw'"):
        monitor.set_targets("mw", [])
    with pytest.raises(ValueError, match=r"set_targets\('loadgen'\): targets of job 'middleware'"):
        monitor.set_targets(
            "loadgen", [ScrapeTarget("middleware", "127.0.0.1:1", "middleware-0", "middleware")]
        )


def test_runner_hooks_register_targets_and_return_the_metrics_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no exporter process in this tier: the memcached exporter's binary is taken to be missing
    monkeypatch.setattr(local_monitor, "MEMCACHED_EXPORTER_BIN", str(tmp_path / "no-collectd"))
    ports = iter([5001, 5002, 5003])
    monitor = LocalMonitor(
        tmp_path, MonitorSettings(release="r"), port_allocator=lambda: next(ports)
    )
    monitor.begin_run("memcached", ["127.0.0.1:11211"])
    assert monitor.scrape_middleware("middleware-0") == [
        "--metrics-port",
        "5001",
        "--metrics-address",
        "127.0.0.1",
    ]
    assert monitor.scrape_loadgen("loadgen-0") == ["--metrics-port=5002"]
    assert monitor.scrape_loadgen("loadgen-0") == ["--metrics-port=5003"]  # replaces, no duplicate
    groups = json.loads((tmp_path / "targets" / "loadgen.json").read_text())
    assert groups == [
        {
            "targets": ["127.0.0.1:5003"],
            "labels": {
                "pod": "loadgen-0",
                "container": "loadgen",
                "namespace": "local",
                "release": "r",
            },
        }
    ]
    assert monitor.skipped == ["memcached exporter for memcached-0: binary not installed"]
    monitor.begin_run("memcached", [])
    assert json.loads((tmp_path / "targets" / "middleware.json").read_text()) == []


def test_scrape_target_rejects_an_address_without_port() -> None:
    with pytest.raises(
        ValueError, match=r"scrape target loadgen: address must be host:port, got 'x'"
    ):
        ScrapeTarget("loadgen", "x", "loadgen-0", "loadgen")


def test_scrape_config_rejects_a_zero_interval() -> None:
    with pytest.raises(ValueError, match=r"scrape_interval_s: must be > 0, got 0"):
        scrape_config(Path("."), scrape_interval_s=0)


def test_prometheus_names_a_missing_binary(tmp_path: Path) -> None:
    with pytest.raises(MonitorError, match=r"/nonexistent/prometheus not found"):
        Prometheus(tmp_path, scrape_config(tmp_path), binary="/nonexistent/prometheus").start()


def test_promtool_finds_a_counter_without_total_suffix() -> None:
    bad = b"# HELP requests Requests.\n# TYPE requests counter\nrequests 1\n"
    complaints = promtool_check_metrics(bad)
    assert any("_total" in c for c in complaints), complaints


@pytest.fixture
def redis_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while (
            subprocess.run(
                ["redis-cli", "-p", str(port), "ping"], capture_output=True
            ).stdout.strip()
            != b"PONG"
        ):
            assert proc.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wait_for_gets(client: PromClient, gets: int, timeout_s: float = 60.0) -> None:
    """Until a scrape of redis holds `gets` GETs (hits and misses): the scrapes every 1 s may
    come late on a busy machine."""
    query = "sum(redis_keyspace_hits_total) + sum(redis_keyspace_misses_total)"
    deadline = time.monotonic() + timeout_s
    while True:
        found = client.query(query)
        if found and float(found[0]["value"][1]) >= gets:
            return
        assert time.monotonic() < deadline, f"no scrape with {gets} GETs in {timeout_s:.0f} s"
        time.sleep(0.5)


def _redis_traffic(address: str, ops: int = 300) -> None:
    import redis

    host, port = address.split(":")
    client = redis.Redis(host=host, port=int(port))
    for i in range(ops):
        client.set(f"k{i % 50}", b"x" * 100)
        client.get(f"k{(i * 7) % 80}")  # keys 50..79 miss
    client.close()


@pytest.mark.monitor
@pytest.mark.integration
def test_local_monitor_scrapes_redis_and_node_and_their_panels_return_data(
    redis_server: str, tmp_path: Path
) -> None:
    settings = MonitorSettings(namespace="ns1", release="rel1", pools=("a2", "a4", "a1"))
    workdir = tmp_path / "prometheus"
    with LocalMonitor(workdir, settings) as monitor:
        monitor.watch_servers(
            [
                ServerEndpoint("redis", redis_server, "redis-0"),
                ServerEndpoint("memcached", "127.0.0.1:1", "memcached-0"),
            ]
        )
        client = monitor.client()
        monitor.wait_scraped()
        start = time.time()
        _redis_traffic(redis_server)
        time.sleep(3)  # several 1 s scrapes after the traffic
        _wait_for_gets(client, 300)
        # the scrape of every target is up and carries the labels of a Kubernetes scrape
        targets = {(t["labels"]["job"], t["labels"].get("pool")): t for t in client.targets()}
        assert set(targets) == {
            ("redis-exporter", None),
            ("memcached-exporter", None),  # collectd, up with no memcached to read
            ("node-exporter", "a1"),
            ("node-exporter", "a2"),
            ("node-exporter", "a4"),
        }
        redis_labels = targets[("redis-exporter", None)]["labels"]
        assert {k: redis_labels[k] for k in ("namespace", "release", "pod", "container")} == {
            "namespace": "ns1",
            "release": "rel1",
            "pod": "redis-0",
            "container": "redis-exporter",
        }
        assert monitor.skipped == []

        with pytest.raises(MonitorError, match=r"Prometheus query failed \(400\).*parse error"):
            client.query("sum(")

        dashboards = grafana.load_dir(DASHBOARD_DIR)
        runs = grafana.evaluate(
            "cachelab-servers.json", dashboards["cachelab-servers.json"], client, start, time.time()
        )
        redis_runs = [r for r in runs if r.query.title.startswith("redis")]
        assert len(redis_runs) == 7
        assert [r.describe() for r in redis_runs if r.series == 0] == []
        runs = grafana.evaluate(
            "cachelab-overview.json",
            dashboards["cachelab-overview.json"],
            client,
            start,
            time.time(),
        )
        node_runs = [r for r in runs if "node_" in r.rendered]
        assert len(node_runs) == 8
        assert [r.describe() for r in node_runs if r.series == 0] == []
        hits, misses = "sum(redis_keyspace_hits_total)", "sum(redis_keyspace_misses_total)"
        hit_ratio = client.query(f"{hits} / ({hits} + {misses})")
        assert 0.4 < float(hit_ratio[0]["value"][1]) < 0.9

    # everything is stopped and the data stays next to the results
    assert (workdir / "data").is_dir()
    assert (workdir / "prometheus.yml").is_file()
    manifest = (workdir / "monitor.json").read_text()
    assert '"stopped_at": null' not in manifest
    assert monitor.node is not None
    with pytest.raises(OSError):
        scrape(monitor.node.address)

    # the stored data can be served again after the run, and it holds the run's series
    stored = serve_stored(workdir, tmp_path / "replay")
    try:
        series = stored.client().query_range(
            "redis_commands_processed_total", monitor.started_at, monitor.stopped_at
        )
        assert [s["metric"]["pod"] for s in series] == ["redis-0"]
    finally:
        stored.stop()


def test_serve_stored_names_a_folder_without_data(tmp_path: Path) -> None:
    with pytest.raises(
        MonitorError, match=r"no data/ folder \(was the run made with --monitor\?\)"
    ):
        serve_stored(tmp_path, tmp_path / "w")


def test_monitor_is_refused_for_the_k8s_target(capsys: pytest.CaptureFixture[str]) -> None:
    from cachelab.cli import main

    spec = ROOT / "ops" / "experiments" / "quickstart.yaml"
    assert main(["run", str(spec), "--target", "k8s", "--monitor"]) == 2
    assert "--monitor is for --target local" in capsys.readouterr().out
