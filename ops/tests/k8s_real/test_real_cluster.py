"""The testbed on the real cluster of this machine (make k8s-up): nodes of pools a1, a4 and a2 in
network namespaces of their own (the ASL 2017 shape), real containers from the images of `make
images`, real networking (a bridge per node, host-gw routes, kube-proxy per node), links shaped
to the profile's rates, real probes and Jobs.

Traffic from the host goes only to the cluster's own addresses on its bridge (nodes in
10.244.0.0/24, pods in 10.244.128.0/17, Service IPs in 10.244.64.0/20, which the first node's
kube-proxy translates to pod IPs).
"""

from __future__ import annotations

import csv
import ipaddress
import json
import os
import re
import socket
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s.conftest import Cluster
from k8s.kube import wait_for
from k8s.tools import CHART, tool
from k8s.tools import run as k8s_run
from spec_parts import short_run, topology

from cachelab.cli import main
from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.release import ReleaseKeeper
from cachelab.report.sections.run import run_info
from cachelab.summary import summary_columns

from .conftest import (
    LOCAL_VALUES,
    NAMESPACE,
    RELEASE,
    SCRIPTS,
    ClusterPool,
    LocalCluster,
    leftovers,
    machine_state,
)
from .links import transfer_mbit

pytestmark = pytest.mark.k8s_real

SERVER_EGRESS_MBIT = 100.0  # bandwidth profile asl2017: servers 100M egress (ASL 2017 §2.4)
ROLE_POOLS = {"memcached": "a1", "middleware": "a4"}  # local-values.yaml: servers a1, middleware a4
BUSYBOX = "cachelab.local/busybox:1.35.0"


def memcache_exchange(host: str, port: int, request: bytes, until: bytes) -> bytes:
    """Send a memcached text request and read until the reply ends with `until`."""
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(request)
        reply = b""
        while not reply.endswith(until):
            chunk = sock.recv(65536)
            assert chunk, f"connection closed after {reply!r}"
            reply += chunk
    return reply


def pods(cluster: Cluster, selector: str = "") -> list[dict[str, Any]]:
    args = ["pods", "-n", NAMESPACE] + (["-l", selector] if selector else [])
    items: list[dict[str, Any]] = cluster.get(*args)["items"]
    return items


def quantity_milli(text: str) -> int:
    """A CPU quantity in millicores ("100m", "1")."""
    return int(text[:-1]) if text.endswith("m") else int(float(text) * 1000)


def quantity_ki(text: str) -> int:
    """A memory quantity in KiB ("183296Ki", "179Mi")."""
    units = {"Ki": 1, "Mi": 1024, "Gi": 1024**2}
    return int(text[:-2]) * units[text[-2:]] if text[-2:] in units else int(text) // 1024


def test_nodes_are_ready_with_their_pool_labels_allocatable_and_caps(
    real_cluster: LocalCluster,
) -> None:
    layout = real_cluster.layout()
    assert sorted(n["pool"] for n in layout) == ["a1"] * 3 + ["a2"] * 3 + ["a4"]
    nodes = {n["metadata"]["name"]: n for n in real_cluster.get("nodes")["items"]}
    assert sorted(nodes) == sorted(str(n["name"]) for n in layout)
    cores = os.cpu_count() or 1
    for want in layout:
        node = nodes[str(want["name"])]
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready[0]["status"] == "True", want["name"]
        labels = node["metadata"]["labels"]
        assert labels["agentpool"] == labels["kubernetes.azure.com/agentpool"] == want["pool"]
        allocatable = node["status"]["allocatable"]
        assert quantity_milli(allocatable["cpu"]) == want["cpu_m"], allocatable
        assert quantity_ki(allocatable["memory"]) == int(want["memory_mib"]) * 1024, allocatable
        addresses = {a["type"]: a["address"] for a in node["status"]["addresses"]}
        assert addresses["InternalIP"] == want["ip"]
        cpu = Path("/sys/fs/cgroup/cpu") / str(want["name"])
        quota_us = int((cpu / "cpu.cfs_quota_us").read_text())
        period_us = int((cpu / "cpu.cfs_period_us").read_text())
        assert quota_us * 1000 // period_us == want["cpu_m"]
        memory = Path("/sys/fs/cgroup/memory") / str(want["name"]) / "memory.limit_in_bytes"
        assert int(memory.read_text()) == int(want["memory_mib"]) * 1024 * 1024
        print(
            f"{want['name']}: {want['pool']}, {allocatable['cpu']} CPU, {allocatable['memory']}, "
            f"{want['mbit']} Mbit/s, {want['ip']}, pods {want['pod_cidr']}"
        )
    # The caps are sizes, not a share of an oversubscribed host: they fit the cores left.
    assert sum(int(n["cpu_m"]) for n in layout) <= cores * 1000 - 500


def test_release_runs_every_container_on_its_pools_nodes(
    real_cluster: LocalCluster, release: str
) -> None:
    nodes = {str(n["name"]): n for n in real_cluster.layout()}
    items = pods(real_cluster, f"app.kubernetes.io/instance={RELEASE}")
    components = sorted(p["metadata"]["labels"]["app.kubernetes.io/component"] for p in items)
    assert components == ["memcached"] * 3 + ["middleware"], components
    containers = 0
    for pod in items:
        assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        for status in pod["status"]["containerStatuses"]:
            assert status["ready"] and "running" in status["state"], status
            containers += 1
        pool = ROLE_POOLS[pod["metadata"]["labels"]["app.kubernetes.io/component"]]
        assert pod["spec"]["nodeSelector"] == {"agentpool": pool}
        node = nodes[pod["spec"]["nodeName"]]
        assert node["pool"] == pool, pod["spec"]["nodeName"]
        pod_ip = ipaddress.ip_address(pod["status"]["podIP"])
        assert pod_ip in ipaddress.ip_network(str(node["pod_cidr"]))
        print(f"{pod['metadata']['name']} on {pod['spec']['nodeName']} at {pod_ip}")
    servers = {p["spec"]["nodeName"] for p in items if "memcached" in p["metadata"]["name"]}
    assert len(servers) == 3  # one server per a1 node
    print(f"{len(items)} pods, {containers} containers running and ready")


def probe_on_pool(
    cluster: Cluster, name: str, pool: str, labels: dict[str, str] | None = None
) -> str:
    """A busybox pod on a node of `pool` (with `labels`), running; returns its name."""
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels or {}},
        "spec": {
            "nodeSelector": {"agentpool": pool},
            "terminationGracePeriodSeconds": 1,
            "containers": [
                {
                    "name": "probe",
                    "image": BUSYBOX,
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["sleep", "3600"],
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                }
            ],
        },
    }
    path = cluster.workdir / f"{name}.json"
    path.write_text(json.dumps(manifest))
    cluster.kubectl("apply", "-f", path)
    cluster.kubectl("wait", "-n", NAMESPACE, "--for=condition=Ready", f"pod/{name}", "--timeout=2m")
    return name


def test_pods_reach_each_other_across_nodes_by_ip_service_and_dns(
    real_cluster: LocalCluster, release: str
) -> None:
    """From a client pod of the release on a client (a2) node: the middleware pod on the a4 node
    by its IP, and its Service by DNS name (CoreDNS runs on the a4 node) through this node's
    kube-proxy. The release's NetworkPolicies admit clients to the middleware only (the
    middleware alone reaches the servers: test_network_policy_nodes.py)."""
    client = {
        "app.kubernetes.io/name": "testbed",
        "app.kubernetes.io/instance": RELEASE,
        "cachelab.dev/role": "loadgen",
    }
    probe = probe_on_pool(real_cluster, "cross-node-probe", "a2", client)
    (middleware,) = pods(real_cluster, "app.kubernetes.io/component=middleware")
    service = real_cluster.get("service", "-n", NAMESPACE, f"{RELEASE}-middleware")

    def sh(script: str) -> str:
        return real_cluster.kubectl(
            "exec", "-n", NAMESPACE, probe, "--", "sh", "-c", script, timeout_s=60
        )

    # The policy engine admits a new pod a moment after it starts: the first try may be refused.
    deadline, reply = time.monotonic() + 30, ""
    while not reply and time.monotonic() < deadline:
        ip = middleware["status"]["podIP"]
        reply = sh(f"printf 'get cross-node\\r\\n' | nc -w 3 {ip} 11212; true")
    assert reply.strip() == "END", reply
    name = f"{RELEASE}-middleware.{NAMESPACE}.svc.cluster.local"
    lookup = sh(f"nslookup {name}")
    assert service["spec"]["clusterIP"] in lookup, lookup
    reply = sh(f"printf 'get cross-node\\r\\n' | nc -w 3 {RELEASE}-middleware 11212")
    assert reply.strip() == "END", reply
    probe_pod = real_cluster.get("pod", "-n", NAMESPACE, probe)
    print(
        f"{probe} on {probe_pod['spec']['nodeName']}: the middleware on "
        f"{middleware['spec']['nodeName']} by IP, {name} -> {service['spec']['clusterIP']}"
    )
    real_cluster.kubectl("delete", "pod", "-n", NAMESPACE, probe, "--wait=false")


def test_links_between_a_client_and_the_middleware_node_run_at_the_profile_rate(
    real_cluster: LocalCluster,
) -> None:
    """A bounded transfer each way between the first a2 node and the a4 node: both directions
    cross the a2 node's link (asl2017: 200 Mbit/s) and the a4 node's (700 Mbit/s)."""
    nodes = {str(n["name"]): n for n in real_cluster.layout()}
    client, middleware = nodes["cachelab-a2-0"], nodes["cachelab-a4-0"]
    rate = min(int(client["mbit"]), int(middleware["mbit"]))
    size = rate * 1_000_000 // 8 * 2  # two seconds at the rate
    figures = []
    for sender, receiver in ((client, middleware), (middleware, client)):
        mbit = transfer_mbit(str(sender["name"]), str(receiver["name"]), str(receiver["ip"]), size)
        figures.append(mbit)
        print(
            f"{sender['name']} -> {receiver['name']}: {mbit:.1f} Mbit/s of TCP payload "
            f"({mbit / rate:.1%} of the profile's {rate} Mbit/s; {size / 1e6:.0f} MB)"
        )
    # Shaped: never above the rate (not the veth's Gbit/s). A busy machine only slows the
    # transfer, so below it only a sanity bound: the profile's order of magnitude (not kbit/s).
    assert all(0.2 * rate <= mbit <= 1.1 * rate for mbit in figures), figures


def test_set_get_round_trip_through_the_middleware_service(
    real_cluster: LocalCluster, release: str
) -> None:
    service = real_cluster.get("service", "-n", NAMESPACE, f"{RELEASE}-middleware")
    ip = service["spec"]["clusterIP"]
    assert ip.startswith("10.244."), ip  # the cluster's own range, translated by kube-proxy
    value = f"real-{time.time_ns()}".encode()
    request = b"set k8s-real 0 60 %d\r\n%s\r\nget k8s-real\r\n" % (len(value), value)
    reply = memcache_exchange(ip, 11212, request, b"END\r\n")
    assert reply == b"STORED\r\nVALUE k8s-real 0 %d\r\n%s\r\nEND\r\n" % (len(value), value)


def test_helm_test_passes_for_real(real_cluster: LocalCluster, release: str) -> None:
    out = real_cluster.helm("test", RELEASE, "-n", NAMESPACE, "--logs", "--timeout", "120s")
    assert "Phase:          Succeeded" in out, out
    assert f"OK: set/get round trip through {RELEASE}-middleware:11212" in out, out


def test_bandwidth_annotation_limits_server_egress_past_the_burst(
    real_cluster: LocalCluster, release: str
) -> None:
    """A server pod's egress (annotation 100M) measured from the host after containerd's burst."""
    (pod,) = pods(real_cluster, "statefulset.kubernetes.io/pod-name=testbed-memcached-0")
    assert pod["metadata"]["annotations"]["kubernetes.io/egress-bandwidth"] == "100M"
    ip = pod["status"]["podIP"]
    value = bytes(512 * 1024)
    stored = memcache_exchange(ip, 11211, b"set bw 0 0 %d\r\n%s\r\n" % (len(value), value), b"\r\n")
    assert stored == b"STORED\r\n"
    reply_bytes = len(b"VALUE bw 0 %d\r\n" % len(value)) + len(value) + len(b"\r\nEND\r\n")
    window_s, limit_s = 1.0, 120.0
    shaped_windows: list[float] = []
    burst_bytes = 0
    with socket.create_connection((ip, 11211), timeout=10) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 * 1024)
        started = window_start = time.monotonic()
        window_bytes = received = sent = 0
        while len(shaped_windows) < 4:
            assert time.monotonic() - started < limit_s, (
                f"no steady shaped rate within {limit_s:.0f} s ({burst_bytes} bytes so far)"
            )
            while sent - received // reply_bytes < 4:  # keep a few gets in flight
                sock.sendall(b"get bw\r\n")
                sent += 1
            chunk = sock.recv(1 << 20)
            assert chunk, "server closed the connection"
            received += len(chunk)
            window_bytes += len(chunk)
            now = time.monotonic()
            if now - window_start >= window_s:
                mbit = window_bytes * 8 / (now - window_start) / 1e6
                if mbit < 2 * SERVER_EGRESS_MBIT:  # the token bucket's burst is spent
                    shaped_windows.append(mbit)
                elif not shaped_windows:
                    burst_bytes += window_bytes
                window_start, window_bytes = now, 0
    steady = sum(shaped_windows[1:]) / len(shaped_windows[1:])
    print(
        f"server egress: ~{burst_bytes / 1e6:.0f} MB at full speed (burst), then "
        f"{steady:.1f} Mbit/s (windows {[round(w, 1) for w in shaped_windows]}) "
        f"against the profile's {SERVER_EGRESS_MBIT:.0f} Mbit/s"
    )
    # shaped: not above the annotation's rate; a busy machine only slows the reads, so below it
    # only the annotation's order of magnitude (not kbit/s)
    assert 0.2 * SERVER_EGRESS_MBIT <= steady <= 1.2 * SERVER_EGRESS_MBIT


PROMETHEUS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: prometheus, namespace: monitoring}
data:
  prometheus.yml: |
    global: {scrape_interval: 1s, scrape_timeout: 1s}
    scrape_configs:
      - job_name: middleware
        static_configs:
          - targets: ["testbed-middleware.cachelab.svc.cluster.local:9102"]
---
apiVersion: v1
kind: Pod
metadata: {name: prometheus, namespace: monitoring, labels: {app: prometheus}}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534}
  containers:
    - name: prometheus
      image: cachelab.local/prometheus:2.42.0
      imagePullPolicy: IfNotPresent
      args: ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus",
             "--web.listen-address=:9090"]
      resources:
        requests: {cpu: 50m, memory: 64Mi}
        limits: {memory: 256Mi}
      readinessProbe:
        httpGet: {path: /-/ready, port: 9090}
        periodSeconds: 1
      volumeMounts:
        - {name: config, mountPath: /etc/prometheus}
        - {name: data, mountPath: /prometheus}
  volumes:
    - name: config
      configMap: {name: prometheus}
    - name: data
      emptyDir: {}
"""


def test_prometheus_in_the_cluster_scrapes_the_middleware(
    real_cluster: LocalCluster, release: str, tmp_path: Path
) -> None:
    real_cluster.kubectl("create", "namespace", "monitoring")
    manifest = tmp_path / "prometheus.yaml"
    manifest.write_text(PROMETHEUS)
    real_cluster.kubectl("apply", "-f", manifest)
    real_cluster.kubectl(
        "wait", "-n", "monitoring", "--for=condition=Ready", "pod/prometheus", "--timeout=120s",
        timeout_s=150,
    )  # fmt: skip
    ip = real_cluster.get("pod", "-n", "monitoring", "prometheus")["status"]["podIP"]

    def query(promql: str) -> list[dict[str, Any]]:
        url = f"http://{ip}:9090/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=5) as reply:
            result: list[dict[str, Any]] = json.load(reply)["data"]["result"]
        return result

    up = wait_for("the middleware target up", lambda: query('up{job="middleware"} == 1'), 60)
    series = wait_for(
        "cachelab_middleware_* series",
        lambda: query('count({__name__=~"cachelab_middleware_.+", job="middleware"})'),
        30,
    )
    print(f"prometheus: {len(up)} target up, {series[0]['value'][1]} middleware series")
    assert int(series[0]["value"][1]) > 5


SPEC = {
    "name": "k8s-real-workers",
    "description": "real cluster: 1 loadgen -> 1 middleware -> 1 memcached, workers 2 and 4",
    "topology": topology(clients_per_thread=2, workers=2, on_pools=True),
    "workload": {"ratio": "0:1", "value_bytes": 256, "key_maximum": 500},
    "preload": {"enabled": True},
    "sweep": {"topology.workers": [2, 4]},
    "run": short_run(4),
}


def test_cachelab_run_target_k8s_sweeps_workers_on_the_real_cluster(
    real_cluster: LocalCluster,
    release: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two points that differ in the middleware's worker count: each `helm upgrade --wait`
    replaces the one middleware (one per node) without stalling, the Jobs of the kustomize
    overlay run the real loadgen, the live line follows the loadgen pod's log while the Job
    runs, and the summary has the local runner's columns."""
    spec_file = tmp_path / "k8s-real-workers.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC))
    monkeypatch.setenv("KUBECONFIG", str(real_cluster.kubeconfig))
    monkeypatch.setenv("CACHELAB_K8S_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("CACHELAB_K8S_RELEASE", RELEASE)
    monkeypatch.setenv("CACHELAB_K8S_LOADGEN", "cachelab")
    monkeypatch.setenv("CACHELAB_K8S_VALUES", str(LOCAL_VALUES))
    monkeypatch.setenv("CACHELAB_K8S_TIMEOUT_S", "240")
    started = time.monotonic()
    code = main(["run", str(spec_file), "--target", "k8s", "--results", str(tmp_path / "r")])
    elapsed = time.monotonic() - started
    out = capsys.readouterr().out
    print(out)
    print(f"cachelab run --target k8s: 2 points in {elapsed:.1f} s")
    assert code == 0
    # the live line (printed every few seconds when stdout is not a terminal), for each point
    live = re.findall(
        r"^\[(\d)/2\] p\d r0 \(workers=\d\) +\d+s +([\d,]+) ops/s  mean [\d.]+ ms  "
        r"p99 [\d.]+ ms  (\d+) errors$",
        out,
        re.MULTILINE,
    )
    assert {number for number, _, _ in live} == {"1", "2"}, out
    assert all(float(ops.replace(",", "")) > 0 and errors == "0" for _, ops, errors in live), live
    (results,) = (tmp_path / "r" / "k8s-real-workers").iterdir()
    status = json.loads((results / "status.json").read_text())
    assert status["state"] == "complete" and status["runs_done"] == 2, status
    metadata = json.loads((results / "metadata.json").read_text())
    # the nodes' scale factor is a setting of the run, printed with the others on its report
    assert run_info(metadata, status).settings["node_scale"] == "0.088", metadata["settings"]
    with (results / "summary.csv").open() as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        assert reader.fieldnames == summary_columns(["topology.workers"])
    assert [(r["topology.workers"], r["status"]) for r in rows] == [("2", "ok"), ("4", "ok")]
    for row in rows:
        print({k: row[k] for k in ("topology.workers", "throughput_ops_per_s", "p50_ms")})
        assert float(row["throughput_ops_per_s"]) > 0, row
        assert float(row["misses"]) == 0, row
        assert row["mw_throughput_ops_per_s"] != "", row  # scraped through the pod proxy
    values = json.loads(real_cluster.helm("get", "values", RELEASE, "-n", NAMESPACE, "-o", "json"))
    assert values["middleware"]["workers"] == 4
    loadgens = pods(real_cluster, "app.kubernetes.io/component=benchmark")
    assert loadgens, "the benchmark Job's pods are kept until the next point"
    assert {real_cluster.node_pool(p["spec"]["nodeName"]) for p in loadgens} == {"a2"}
    (mw,) = pods(real_cluster, "app.kubernetes.io/component=middleware")
    assert "-t" in mw["spec"]["containers"][0]["args"]
    args = mw["spec"]["containers"][0]["args"]
    assert args[args.index("-t") + 1] == "4"


def registry_digest(registry: str, image: str) -> str:
    """The digest the registry serves for `image` (<registry>/<name>:<tag>), by a HEAD of its
    manifest as a kubelet asks for it."""
    name, tag = image.removeprefix(f"{registry}/").rsplit(":", 1)
    request = urllib.request.Request(f"http://{registry}/v2/{name}/manifests/{tag}", method="HEAD")
    request.add_header("Accept", ", ".join(MANIFEST_TYPES))
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(response.headers["Docker-Content-Digest"])


MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)


def test_the_release_pulls_every_image_from_the_cluster_registry(
    real_cluster: LocalCluster, release: str
) -> None:
    """The release of local-values.yaml names its images only by global.imageRegistry: every
    container's image is <registry>/<name>:<tag>, and what each container runs is what the
    registry serves: its status's image ID is <registry>/<name>@<the registry's digest>, the
    reference a pull leaves (an image imported into a node has none). Whether this release's
    pod pulled it or found it pulled by an earlier pod on its node does not matter."""
    registry = run_script("registry", real_cluster).strip()
    running: dict[str, set[str]] = {}  # image named by the pod's spec -> the IDs its containers ran
    for p in pods(real_cluster, f"app.kubernetes.io/instance={RELEASE}"):
        spec, status = p["spec"], p["status"]
        named = {
            c["name"]: c["image"] for c in [*spec.get("initContainers", []), *spec["containers"]]
        }
        for c in [*status.get("initContainerStatuses", []), *status["containerStatuses"]]:
            running.setdefault(named[c["name"]], set()).add(c["imageID"])
    print("\n".join(f"{image}: {ids}" for image, ids in sorted(running.items())))
    assert running and all(i.startswith(f"{registry}/") for i in running), running
    for image, ids in running.items():
        digest = registry_digest(registry, image)
        # <name>@<digest>: the registry's name or the cluster's other name for it (cachelab.local)
        assert {i.partition("@")[2] for i in ids} == {digest}, (image, ids, digest)


def test_a_release_whose_image_was_never_pushed_fails_naming_it_and_make_push(
    real_cluster: LocalCluster, release: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's release wait (ReleaseKeeper.upgrade, helm --wait) on a release whose server
    image tag is not in the registry: it ends with the kubelet's pull failure, naming the image
    and `make push`, not with helm's timeout (240 s here) after a silent ImagePullBackOff."""
    namespace = "never-pushed"
    real_cluster.kubectl("create", "namespace", namespace)
    monkeypatch.setenv("KUBECONFIG", str(real_cluster.kubeconfig))
    missing = tmp_path / "missing.yaml"
    missing.write_text(
        "middleware: {enabled: false}\nmemcached: {replicas: 1, image: {tag: never-pushed}}\n"
    )
    keeper = ReleaseKeeper(
        Kube(namespace=namespace, helm_binary=str(tool("helm"))), "missing", CHART, [missing], 240
    )
    started = time.monotonic()
    try:
        with pytest.raises(K8sError) as failed:
            keeper.upgrade(LOCAL_VALUES)
        print(f"failed after {time.monotonic() - started:.1f} s: {failed.value}")
        registry = run_script("registry", real_cluster).strip()
        message = str(failed.value)
        assert f"image {registry}/memcached:never-pushed cannot be pulled" in message, message
        assert "make push REGISTRY=<registry>" in message, message
    finally:
        real_cluster.helm("uninstall", "missing", "-n", namespace, check=False)
        real_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def run_script(action: str, cluster: LocalCluster) -> str:
    """The output of `scripts/local-cluster.sh ACTION` for the cluster."""
    return k8s_run([SCRIPTS / "local-cluster.sh", action], env=cluster.env_vars).stdout


def test_down_restores_the_machine(cluster_pool: ClusterPool) -> None:
    """`down` (last in the tier) puts back what the cluster changed: the kubelets' kernel
    settings, the nodes' namespaces, links, qdiscs and cgroups, the chains and directories."""
    cluster = cluster_pool.get()
    during = machine_state()
    before = cluster.before
    changed = {
        k: (before["sysctls"][k], v)
        for k, v in during["sysctls"].items()
        if before["sysctls"][k] != v
    }
    print(f"changed while the cluster ran (before, during): {changed}")
    assert during["netns"] and during["cgroups"] and during["qdiscs"]
    down = cluster.down()
    assert down.returncode == 0, down.stderr
    assert not leftovers(), leftovers()
    after = machine_state()
    assert after == before, (before, after)
    print(f"restored: {sorted(changed)}; {SCRIPTS / 'local-cluster.sh'} down: ok")
    cluster_pool.stop()  # its own checks; the cluster is already down
