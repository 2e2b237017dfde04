"""Monitoring as kube-prometheus-stack does it, on the real local cluster: the Prometheus
Operator built here (its CRDs, the operator and its config reloader), a `Prometheus` selecting
monitors and rules by `release: kps`, node exporter on every node and the kubelets' cAdvisor
(manifests/monitoring-local: manifests/monitoring with the operator and Prometheus on the a4
node), the testbed chart's ServiceMonitor and PrometheusRule and the loadgen's PodMonitor
discovered and scraped, the memcached exporter (collectd) included; every panel of the chart's
dashboards queried during a real `cachelab run --target k8s` point, and the same panels recorded
by the runner itself and drawn in the run's report; and that point's utilisation (cpu.csv,
net.csv from the kubelets' summary API) turned into bottlenecks.csv, the calibrated MVA and the
bottleneck its report names.

Traffic from the host goes only to the cluster's pod addresses on its bridge (Prometheus's pod).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s.kube import wait_for
from k8s.tools import CHART, MANIFESTS, ROOT, TOOLS_BIN, run

from cachelab.cli import main
from cachelab.panels import read_recording
from cachelab.results.cpu import read_cpu_samples
from cachelab.results.layout import RunDir
from cachelab.results.run import read_run

from .conftest import LOCAL_VALUES, LOCK_WAIT_S, NAMESPACE, RELEASE, LocalCluster

# the first test's time includes the module's cluster, whose start may queue for the lock
pytestmark = [pytest.mark.k8s_real, pytest.mark.timeout(LOCK_WAIT_S + 900)]

MONITORING = "monitoring"
REDIS_RELEASE = "servers-redis"
CRDS = TOOLS_BIN.parent / "prometheus-operator-crd"
LOADGEN_PODMONITOR = MANIFESTS / "components" / "monitoring-loadgen" / "loadgen-podmonitor.yaml"
DASHBOARDS = CHART / "dashboards"
# Grafana's template variables as a user of this cluster picks them; $__rate_interval as Grafana
# computes it for a 15 s scrape (4 x the interval).
VARIABLES = {
    "namespace": NAMESPACE,
    "release": f"{RELEASE}|{REDIS_RELEASE}",
    "pod": ".+",
    "pool": ".+",
    "client_pool": "a2",
    "middleware_pool": "a4",
    "server_pool": "a1",
    "__rate_interval": "1m",
}
# The testbed release with its memcached exporter (collectd, the image scripts/images.sh builds):
# local-values.yaml leaves the exporters off, this module turns them on for the release and the
# runner's upgrades (CACHELAB_K8S_VALUES), and for the redis release. Their requests are small so
# that a memcached and the redis server, each with its exporter, share an a1 node (158 MiB).
EXPORTERS = """
monitoring:
  exporters:
    enabled: true
    resources:
      requests: {cpu: 5m, memory: 8Mi}
      limits: {cpu: 50m, memory: 48Mi}
"""
MEMCACHED_POOL = f"serviceMonitor/{NAMESPACE}/testbed-memcached/0"
# One point, 1 loadgen -> 1 middleware -> 1 memcached on the pools of local-values.yaml; long
# enough for the 15 s scrapes of the loadgen's PodMonitor to see it at least twice after the
# pod's discovery and a first scrape up to one interval late (30 s measured was once too short).
SPEC: dict[str, Any] = yaml.safe_load("""
name: k8s-real-monitored
description: "real cluster, monitored: 1 loadgen -> 1 middleware -> 1 memcached"
topology: {client_machines: 1, instances_per_machine: 1, threads: 1, clients_per_thread: 4,
           middlewares: 1, workers: 2, servers: 1, backend: memcached,
           hosts: {client: a2, middleware: a4, server: a1}}
workload: {ratio: "0:1", value_bytes: 1024, key_maximum: 500}
preload: {enabled: true}
run: {repetitions: 1, duration_s: 60, warmup_s: 3, cooldown_s: 1}
""")
# A second release with only a redis server and its exporter (the servers dashboard's redis
# row), small enough to share an a1 node with the memcached there.
REDIS_ONLY = (
    """
middleware: {enabled: false}
memcached: {enabled: false}
redis: {enabled: true, replicas: 1, maxmemoryMiB: 16}
nodePools:
  sizes:
    a1:
      resources:
        requests: {cpu: 15m, memory: 40Mi}
        limits: {cpu: 88m, memory: 96Mi}
"""
    + EXPORTERS
)
MISLABELLED = """
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: middleware-mislabelled
  # the testbed's own release name where the monitoring release's belongs
  labels: {release: testbed}
spec:
  selector:
    matchLabels: {app.kubernetes.io/component: middleware}
  endpoints:
    - port: metrics
"""


@dataclass(frozen=True)
class Prometheus:
    """The operator's Prometheus, reached at its pod address."""

    url: str

    def api(self, path: str, **params: str) -> Any:
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}{query}", timeout=10) as reply:
            body = json.load(reply)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, promql: str, at_s: float | None = None) -> list[dict[str, Any]]:
        params = {"query": promql} | ({"time": f"{at_s:.3f}"} if at_s is not None else {})
        result: list[dict[str, Any]] = self.api("query", **params)["result"]
        return result

    def targets(self) -> list[dict[str, Any]]:
        active: list[dict[str, Any]] = self.api("targets", state="active")["activeTargets"]
        return active


def check(cluster: LocalCluster) -> subprocess.CompletedProcess[str]:
    """`make monitoring-check` (python -m cachelab.k8s.monitors) against the cluster."""
    return run(
        [sys.executable, "-m", "cachelab.k8s.monitors"], env=cluster.env, check=False, timeout_s=60
    )


@pytest.fixture(scope="module")
def prometheus(real_cluster: LocalCluster) -> Prometheus:
    """`make monitoring-operator-install MONITORING_MANIFESTS=manifests/monitoring-local`, then
    the StatefulSet the operator makes of the `Prometheus`, Ready."""
    started = time.monotonic()
    run(
        ["make", "-s", "-C", ROOT, "monitoring-operator-install",
         "MONITORING_MANIFESTS=manifests/monitoring-local"],
        env={**real_cluster.env, "TOOLS_DIR": str(TOOLS_BIN.parent)},
        timeout_s=240,
    )  # fmt: skip
    wait_for(
        "the operator's StatefulSet prometheus-kps",
        lambda: real_cluster.kubectl(
            "get", "statefulset", "-n", MONITORING, "prometheus-kps", check=False
        ),
        timeout_s=120,
    )
    real_cluster.kubectl(
        "rollout", "status", "-n", MONITORING, "statefulset/prometheus-kps", "--timeout=180s",
        timeout_s=200,
    )  # fmt: skip
    real_cluster.kubectl(
        "rollout", "status", "-n", MONITORING, "daemonset/node-exporter", "--timeout=120s",
        timeout_s=140,
    )  # fmt: skip
    pod = real_cluster.get("pod", "-n", MONITORING, "prometheus-kps-0")
    operator = real_cluster.get(
        "pods", "-n", MONITORING, "-l", "app.kubernetes.io/name=prometheus-operator"
    )["items"]
    placed = [real_cluster.node_pool(p["spec"]["nodeName"]) for p in [pod, *operator]]
    assert placed == ["a4", "a4"], placed  # manifests/monitoring-local: the a4 node
    print(
        f"monitoring up in {time.monotonic() - started:.1f} s; Prometheus on "
        f"{pod['spec']['nodeName']}"
    )
    return Prometheus(f"http://{pod['status']['podIP']}:9090")


@pytest.fixture(scope="module")
def monitored(prometheus: Prometheus, release: str, real_cluster: LocalCluster) -> Prometheus:
    """The testbed release installed after the CRDs (so its `auto` ServiceMonitor and
    PrometheusRule exist), the loadgen's PodMonitor in its namespace, and a redis-only release
    with its exporter (installed here, so that its ServiceMonitor reaches Prometheus while the
    first tests run)."""
    real_cluster.kubectl("apply", "-n", release, "-f", LOADGEN_PODMONITOR)
    values = real_cluster.workdir / "redis-only-values.yaml"
    values.write_text(REDIS_ONLY)
    real_cluster.helm(
        "install", REDIS_RELEASE, CHART, "-n", NAMESPACE, "-f", LOCAL_VALUES, "-f", values,
        "--wait", "--timeout", "180s", timeout_s=240,
    )  # fmt: skip
    return prometheus


def exporters_values(cluster: LocalCluster) -> Path:
    values = cluster.workdir / "exporters-values.yaml"
    values.write_text(EXPORTERS)
    return values


@pytest.fixture(scope="module")
def release(real_cluster: LocalCluster) -> str:
    """The testbed release with the local values and its exporters (EXPORTERS), installed with
    --wait; when it does not get ready, the pods and the namespace's events are printed."""
    real_cluster.kubectl("create", "namespace", NAMESPACE)
    started = time.monotonic()
    try:
        real_cluster.helm(
            "install", RELEASE, CHART, "-n", NAMESPACE,
            "-f", LOCAL_VALUES, "-f", exporters_values(real_cluster),
            "--wait", "--timeout", "240s", timeout_s=300,
        )  # fmt: skip
    except AssertionError:
        print(real_cluster.kubectl("get", "pods", "-n", NAMESPACE, "-o", "wide", check=False))
        print(real_cluster.kubectl("get", "events", "-n", NAMESPACE, check=False))
        print(real_cluster.kubectl("describe", "pods", "-n", NAMESPACE, check=False)[-6000:])
        raise
    print(f"helm install --wait (exporters on) took {time.monotonic() - started:.1f} s")
    return NAMESPACE


@pytest.fixture(scope="module")
def redis_release(monitored: Prometheus) -> str:
    """The redis-only release's exporter target up, and the testbed release's memcached
    exporter's. A new ServiceMonitor reaches Prometheus through the operator, the configuration
    Secret and the kubelet's refresh of the Secret's volume (2-3 minutes here under load)."""
    pool = f"serviceMonitor/{NAMESPACE}/{REDIS_RELEASE}-testbed-redis/0"
    for name, scrape_pool in (("redis", pool), ("memcached", MEMCACHED_POOL)):
        wait_for(
            f"the {name} exporter's target up ({scrape_pool})",
            lambda p=scrape_pool: "up" in scrape_pools(monitored).get(p, []),
            timeout_s=300,
        )
    return REDIS_RELEASE


def scrape_pools(prometheus: Prometheus) -> dict[str, list[str]]:
    """Scrape pool -> health of each of its active targets."""
    pools: dict[str, list[str]] = {}
    for target in prometheus.targets():
        pools.setdefault(target["scrapePool"], []).append(target["health"])
    return pools


def test_the_operator_discovers_and_scrapes_the_charts_monitors_and_loads_its_rules(
    real_cluster: LocalCluster, monitored: Prometheus
) -> None:
    nodes = len(real_cluster.layout())
    monitors = real_cluster.get(
        "servicemonitors,prometheusrules",
        "-n",
        NAMESPACE,
        "-l",
        f"app.kubernetes.io/instance={RELEASE}",
    )["items"]
    assert sorted((m["kind"], m["metadata"]["name"]) for m in monitors) == [
        ("PrometheusRule", "testbed"),
        ("ServiceMonitor", "testbed-memcached"),
        ("ServiceMonitor", "testbed-middleware"),
    ]
    assert all(m["metadata"]["labels"]["release"] == "kps" for m in monitors)
    want = {
        f"serviceMonitor/{NAMESPACE}/testbed-middleware/0": 1,
        f"serviceMonitor/{MONITORING}/kubelet/0": nodes,
        f"serviceMonitor/{MONITORING}/node-exporter/0": nodes,
    }

    def all_up() -> dict[str, list[str]] | None:
        pools = scrape_pools(monitored)
        ok = all(pools.get(p, []).count("up") == n for p, n in want.items())
        return pools if ok else None

    try:
        pools = wait_for("the chart's, node exporter's and cAdvisor's targets up", all_up, 120)
    except AssertionError as error:
        raise AssertionError(f"{error}: {scrape_pools(monitored)}") from None
    print({p: h.count("up") for p, h in sorted(pools.items())})
    # the loadgen's PodMonitor: a scrape pool per metrics port (targets once a Job runs). It
    # was applied after the Prometheus started, so it arrives as the redis release's monitor
    # does: operator, configuration Secret, the kubelet's refresh of its volume.
    loadgen = {f"podMonitor/{NAMESPACE}/benchmark-loadgen/{i}" for i in range(4)}

    def loadgen_pools() -> list[str] | None:
        scraped: list[str] = monitored.api("scrape_pools")["scrapePools"]
        return scraped if loadgen <= set(scraped) else None

    try:
        wait_for("the loadgen PodMonitor's scrape pools", loadgen_pools, timeout_s=300)
    except AssertionError as error:
        raise AssertionError(f"{error}: {monitored.api('scrape_pools')}") from None
    series = monitored.query('count({__name__=~"cachelab_middleware_.+", release="testbed"})')
    assert series and int(series[0]["value"][1]) > 5, series
    # cAdvisor: the middleware pod's CPU, named by its own node's kubelet only
    cpu = monitored.query(
        f'container_cpu_usage_seconds_total{{namespace="{NAMESPACE}", container="middleware"}}'
    )
    assert len(cpu) == 1 and cpu[0]["metric"]["pool"] == "a4", cpu

    groups = wait_for(
        "the chart's PrometheusRule loaded",
        lambda: [g for g in monitored.api("rules")["groups"] if g["name"] == "cachelab-middleware"],
        timeout_s=90,
    )
    (group,) = groups
    assert f"{NAMESPACE}-testbed-" in group["file"], group["file"]
    names = sorted(r["name"] for r in group["rules"])
    assert names == [
        "CachelabMiddlewareDown",
        "CachelabMiddlewareErrors",
        "cachelab:middleware_requests:rate1m",
        "cachelab:middleware_response_time_seconds:mean1m",
    ], names

    # a rule loaded but not yet evaluated has health "unknown" until its group's first interval
    def current_rules() -> list[dict[str, Any]]:
        (now,) = [g for g in monitored.api("rules")["groups"] if g["name"] == group["name"]]
        rules: list[dict[str, Any]] = now["rules"]
        return rules

    def evaluated() -> list[dict[str, Any]] | None:
        rules = current_rules()
        return rules if all(r["health"] != "unknown" for r in rules) else None

    try:
        rules = wait_for("the chart's rules evaluated", evaluated, timeout_s=180)
    except AssertionError as error:
        health = [(r["name"], r["health"]) for r in current_rules()]
        raise AssertionError(f"{error}: {health}") from None
    assert all(r["health"] == "ok" for r in rules), [(r["name"], r.get("lastError")) for r in rules]


def test_monitoring_check_reports_a_mislabelled_monitor_on_the_cluster(
    real_cluster: LocalCluster, monitored: Prometheus
) -> None:
    assert check(real_cluster).returncode == 0
    manifest = real_cluster.workdir / "mislabelled.yaml"
    manifest.write_text(MISLABELLED)
    real_cluster.kubectl("apply", "-n", NAMESPACE, "-f", manifest)
    try:
        result = check(real_cluster)
        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stdout.splitlines()[0] == (
            f"servicemonitors {NAMESPACE}/middleware-mislabelled: no Prometheus selects it "
            "(Prometheus monitoring/kps wants release=kps)"
        ), result.stdout
        # and Prometheus indeed never scrapes it
        time.sleep(5)
        pools = monitored.api("scrape_pools")["scrapePools"]
        assert not [p for p in pools if "middleware-mislabelled" in p], pools
        print(result.stdout.strip())
    finally:
        real_cluster.kubectl("delete", "-n", NAMESPACE, "-f", manifest)


@dataclass(frozen=True)
class MonitoredRun:
    """The results folder of one `cachelab run --target k8s` point and when its loadgen ran."""

    results: Path
    loadgen_start_s: float
    loadgen_end_s: float

    def instants_s(self, step_s: float = 5.0) -> list[float]:
        """Times from the loadgen's first CPU sample to its last, `step_s` apart, last first."""
        count = int((self.loadgen_end_s - self.loadgen_start_s) // step_s)
        return [self.loadgen_end_s - k * step_s for k in range(count + 1)]


@pytest.fixture(scope="module")
def k8s_run(
    real_cluster: LocalCluster,
    monitored: Prometheus,
    redis_release: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[MonitoredRun]:
    """One point of `cachelab run --target k8s` with the operator's Prometheus scraping."""
    folder = tmp_path_factory.mktemp("monitored-run")
    spec_file = folder / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC))
    env = {
        **real_cluster.env,
        "CACHELAB_K8S_NAMESPACE": NAMESPACE,
        "CACHELAB_K8S_RELEASE": RELEASE,
        "CACHELAB_K8S_LOADGEN": "cachelab",
        "CACHELAB_K8S_VALUES": f"{LOCAL_VALUES}:{exporters_values(real_cluster)}",
        "CACHELAB_K8S_TIMEOUT_S": "240",
    }
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        started = time.monotonic()
        code = main(["run", str(spec_file), "--target", "k8s", "--results", str(folder / "r")])
        print(f"cachelab run --target k8s: 1 point in {time.monotonic() - started:.1f} s")
    assert code == 0
    (results,) = (folder / "r" / SPEC["name"]).iterdir()
    samples = read_cpu_samples(results / "raw" / "p0-r0" / "cpu.csv")
    ends = [s.epoch_ms for s in samples if s.role == "loadgen"]
    assert ends, "no CPU sample of the loadgen pod"
    yield MonitoredRun(results, min(ends) / 1000.0, max(ends) / 1000.0)


def panels(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(panel title, expression) of every query of a dashboard, rows included."""
    stack = list(dashboard["panels"])
    while stack:
        panel = stack.pop(0)
        stack[:0] = panel.get("panels", [])
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]


def substitute(expr: str) -> str:
    """A panel's expression with the template variables as chosen in VARIABLES."""
    for name in sorted(VARIABLES, key=len, reverse=True):
        expr = expr.replace(f"${{{name}}}", VARIABLES[name]).replace(f"${name}", VARIABLES[name])
    assert "$" not in expr, f"an unknown variable in {expr}"
    return expr


def test_every_dashboard_panel_returns_data_during_a_k8s_run(
    monitored: Prometheus, k8s_run: MonitoredRun
) -> None:
    """Each query of each panel of charts/testbed/dashboards, with its variables set, returns at
    least one series at some instant while the loadgen's Job ran (every 5 s from its last CPU
    sample back to its first: a 15 s scrape of a pod that lives some 35 s may give a rate only
    at some of them)."""
    empty: list[str] = []
    queried = 0
    for path in sorted(DASHBOARDS.glob("*.json")):
        dashboard = json.loads(path.read_text())
        for title, expr in dict.fromkeys(panels(dashboard)):
            promql = substitute(expr)
            queried += 1
            if any(monitored.query(promql, at_s) for at_s in k8s_run.instants_s()):
                continue
            empty.append(f"{path.stem} / {title}: {promql}")
    print(f"{queried} panel queries; {queried - len(empty)} with data")
    assert not empty, "panels without data:\n" + "\n".join(empty)


def test_the_runs_report_draws_the_dashboards_panels_from_the_clusters_prometheus(
    k8s_run: MonitoredRun,
) -> None:
    """The runner recorded every panel of the dashboards from the operator's Prometheus
    (through the API server's service proxy) with the variables of its own release: each with
    data but the redis row (the run's release has no redis), memcached's from collectd, kept as
    CSV and drawn in the report."""
    run_dir = k8s_run.results / "raw" / "p0-r0"
    summary = json.loads((run_dir / "point.json").read_text())["panels"]
    recording = read_recording(run_dir)
    assert recording is not None, summary
    titles = [f"{p.dashboard} / {p.title}" for p in recording.panels]
    print(
        f"panels with data: {len(recording.with_data)} of {len(recording.panels)} "
        f"({len(set(titles))} distinct panels of the dashboards, a row per middleware pod); "
        f"without: {summary['without_data']}"
    )
    redis_row = {t for t in titles if t.startswith("cachelab-servers / redis ")}
    assert len(redis_row) == 6
    assert set(summary["without_data"]) <= redis_row, summary["without_data"]
    memcached_row = [p for p in recording.panels if p.title.startswith("memcached ")]
    assert len(memcached_row) == 6 and all(p.has_data for p in memcached_row)
    assert (run_dir / "panels" / "series.csv").stat().st_size > 1000
    from cachelab.report import build_report

    report = build_report(k8s_run.results).parent  # `cachelab report`, offline from the folder
    page = (report / "index.html").read_text()
    assert "Cluster metrics" in page
    for dashboard in ("cachelab-middleware", "cachelab-servers", "cachelab-overview"):
        figure = f"panels-p0-r0-{dashboard}.png"
        assert figure in page and (report / figure).stat().st_size > 20_000, figure


def node_bytes(results: Path) -> dict[str, list[tuple[int, int]]]:
    """net.csv: pool -> (rx, tx) bytes of its nodes, in order."""
    found: dict[str, list[tuple[int, int]]] = {}
    with (results / "raw" / "p0-r0" / "net.csv").open() as f:
        for row in csv.DictReader(f):
            found.setdefault(row["pool"], []).append((int(row["rx_bytes"]), int(row["tx_bytes"])))
    return found


def test_utilisation_of_a_k8s_point_names_its_bottleneck(
    real_cluster: LocalCluster, k8s_run: MonitoredRun
) -> None:
    """cpu.csv holds each pod's CPU from its own node's kubelet, net.csv each node's pod
    bytes; the report's operational analysis turns them into bottlenecks.csv, the calibrated
    MVA's models.csv, and names the point's bottleneck."""
    results = k8s_run.results
    record = json.loads((results / "raw" / "p0-r0" / "point.json").read_text())
    assert record["usage"]["problems"] == [], record["usage"]
    # the pods' CPU over the measured interval, as the report reads it
    run_data = read_run(RunDir(0, 0, results / "raw" / "p0-r0"))
    cores = {(p.role, p.name): p.cores for p in run_data.cpu}
    print({f"{role} {name}": round(c, 3) for (role, name), c in cores.items()})
    assert {role for role, _ in cores} == {"loadgen", "middleware", "server"}, cores
    # each pod is capped by its pool's node size (local-values.yaml's limits), and its cap is
    # recorded
    sizes = {str(n["pool"]): int(n["cpu_m"]) / 1000.0 for n in real_cluster.layout()}
    caps = {"server": sizes["a1"], "loadgen": sizes["a2"], "middleware": sizes["a4"]}
    limits = record["usage"]["cpu_limit_cores"]
    print(f"CPU caps: {limits}")
    exporter = yaml.safe_load(EXPORTERS)["monitoring"]["exporters"]["resources"]["limits"]["cpu"]
    sidecar = {"server": int(str(exporter).removesuffix("m")) / 1000.0}  # the exporter's own cap
    for (role, name), c in cores.items():
        assert 0.0 < c <= caps[role] * 1.2, (role, name, c)
        assert 0.0 < limits[name] <= caps[role] + sidecar.get(role, 0.0) + 1e-9, (
            role,
            name,
            limits,
        )
    network = node_bytes(results)
    for pool in ("a1", "a2", "a4"):
        rx = [r for r, _ in network[pool]]
        tx = [t for _, t in network[pool]]
        assert max(rx) > rx[0] and max(tx) > tx[0], (pool, network[pool])
    print({pool: (rows[0], max(rows)) for pool, rows in network.items()})

    # each pod's egress limit (the default profile asl2017) is a link, with the bytes it sent
    links = {link["name"]: link for link in record["bandwidth"]["links"]}
    print({name: (link["mbit"], link["sent_bytes"]) for name, link in links.items()})
    assert set(links) == {"server-0 out", "middleware-0 out", "clients -> middlewares"}, links
    assert [links[n]["mbit"] for n in links] == [100.0, 700.0, 200.0]
    gets = sum(c.run.totals.count for c in run_data.clients)
    # a 1 KiB value and its header per GET; the exporter's scrapes are a small part
    assert 1024 < links["server-0 out"]["sent_bytes"] / gets < 1600, (links, gets)

    assert main(["report", str(results)]) == 0
    with (results / "report" / "bottlenecks.csv").open() as f:
        rows = list(csv.DictReader(f))
    (bottleneck,) = [r for r in rows if r["point"] == "0" and r["bottleneck"] == "True"]
    assert float(bottleneck["utilisation_frac"]) > 0, bottleneck
    stages = {r["stage"] for r in rows}
    assert {"worker pool", "net thread", "pod CPU loadgen", "pod CPU middleware"} <= stages
    assert "host CPU" not in stages, stages  # the pods do not share one host
    assert "link server-0 out" in stages, stages
    with (results / "report" / "models.csv").open() as f:
        mva = [r for r in csv.DictReader(f) if r["model"] == "MVA" and r["point"] == "0"]
    assert {r["metric"] for r in mva} >= {"throughput_ops_per_s", "response_time_ms"}, mva
    assert all(float(r["predicted"]) > 0 for r in mva if r["metric"] == "throughput_ops_per_s")
    page = (results / "report" / "index.html").read_text()
    assert bottleneck["stage"] in page
    print(
        f"bottleneck of the k8s point: {bottleneck['stage']} at "
        f"{float(bottleneck['utilisation_frac']):.2f}; stages {sorted(stages)}"
    )
