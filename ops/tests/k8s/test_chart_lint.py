"""Tier 4 (no cluster needed): `helm lint` of the chart, and a table of bad values files that the
schema or the chart's own validation must reject with a message naming the key.

`helm lint` reports schema violations as errors but logs a template `fail` only as INFO, so every
row is also rendered with `helm template`, which fails on both."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .tools import CHART, run, tool

pytestmark = pytest.mark.k8s

# (file name, values file body, text the error must contain)
# (file name, values file body, who rejects it: "schema" (helm lint too) or "chart"
# (testbed.validateValues, a template `fail`), text the error must contain)
BAD_VALUES = [
    (
        "unknown-top-level-key",
        "replicaCount: 3\n",
        "schema",
        "(root): Additional property replicaCount is not allowed",
    ),
    (
        "typo-in-nested-key",
        "middleware:\n  worker: 8\n",
        "schema",
        "middleware: Additional property worker is not allowed",
    ),
    (
        "replicas-not-integer",
        "memcached:\n  replicas: three\n",
        "schema",
        "memcached.replicas: Invalid type. Expected: integer, given: string",
    ),
    (
        "zero-workers",
        "middleware:\n  workers: 0\n",
        "schema",
        "middleware.workers: Must be greater than or equal to 1",
    ),
    (
        "too-many-workers",
        "middleware:\n  workers: 5000\n",
        "schema",
        "middleware.workers: Must be less than or equal to 1024",
    ),
    (
        "zero-worker-batch",
        "middleware:\n  workerBatch: 0\n",
        "schema",
        "middleware.workerBatch: Must be greater than or equal to 1",
    ),
    (
        "negative-event-loops",
        "middleware:\n  eventLoops: -1\n",
        "schema",
        "middleware.eventLoops: Must be greater than or equal to 0",
    ),
    (
        "too-many-event-loops",
        "middleware:\n  eventLoops: 65\n",
        "schema",
        "middleware.eventLoops: Must be less than or equal to 64",
    ),
    ("unknown-routing", "middleware:\n  routing: random\n", "schema", "middleware.routing"),
    (
        "unknown-backend",
        "middleware:\n  backend: mongodb\n",
        "schema",
        'middleware.backend must be one of the following: "memcached", "redis"',
    ),
    (
        "unknown-bandwidth-profile",
        "bandwidth:\n  profile: asl2018\n",
        "schema",
        "bandwidth.profile",
    ),
    (
        "sharded-not-boolean",
        "middleware:\n  sharded: 'yes'\n",
        "schema",
        "middleware.sharded: Invalid type. Expected: boolean, given: string",
    ),
    ("port-out-of-range", "memcached:\n  port: 70000\n", "schema", "memcached.port"),
    (
        "bad-cpu-quantity",
        "memcached:\n  resources:\n    requests:\n      cpu: lots\n",
        "schema",
        "memcached.resources.requests.cpu",
    ),
    ("empty-label-key", "nodePools:\n  labelKey: ''\n", "schema", "nodePools.labelKey"),
    (
        "servicemonitor-yes",
        "monitoring:\n  serviceMonitors:\n    enabled: 'yes'\n",
        "schema",
        "monitoring.serviceMonitors.enabled",
    ),
    (
        "unknown-pool",
        "memcached:\n  pool: a8\n",
        "chart",
        'memcached.pool: "a8" is not a pool in nodePools.sizes (known: a1, a2, a4)',
    ),
    (
        "replication-exceeds-servers",
        "memcached:\n  replicas: 2\nmiddleware:\n  routing: hash\n  replication: 3\n",
        "chart",
        "middleware.replication: 3 exceeds memcached.replicas (2); use at most 2",
    ),
    (
        "replication-without-hash",
        "middleware:\n  replication: 2\n",
        "chart",
        "middleware.replication: 2 needs middleware.routing=hash",
    ),
    (
        "backend-not-enabled",
        "middleware:\n  backend: redis\n",
        "chart",
        'middleware.backend: "redis" is not enabled; set redis.enabled=true',
    ),
    (
        "redis-beside-memcached-on-a1",
        "redis:\n  enabled: true\n",
        "chart",
        "nodePools.sizes.a1: the pods that share one a1 node (memcached, memcached exporter,"
        " redis, redis exporter) request 1040m CPU, more than its 1000m",
    ),
    (
        "items-above-memory-limit",
        "memcached:\n  memoryMiB: 4096\n",
        "chart",
        "memcached.memoryMiB: 4096 MiB of items plus 64 MiB for the process exceed the"
        " container's memory limit 1Gi",
    ),
    (
        "redis-maxmemory-above-limit",
        "memcached:\n  enabled: false\nredis:\n  enabled: true\n  maxmemoryMiB: 1000\n"
        "middleware:\n  backend: redis\n",
        "chart",
        "redis.maxmemoryMiB: 1000 MiB of items",
    ),
    (
        "unknown-toleration-operator",
        "tolerations:\n  - {key: sku, operator: Sometimes}\n",
        "schema",
        "tolerations.0.operator",
    ),
    (
        "pull-secret-without-name",
        "imagePullSecrets:\n  - {}\n",
        "schema",
        "imagePullSecrets.0: name is required",
    ),
    (
        "metrics-cidr-not-a-cidr",
        "networkPolicy:\n  metricsFromCidrs: [apiserver]\n",
        "schema",
        "networkPolicy.metricsFromCidrs.0",
    ),
    (
        "negative-rtt",
        "links:\n  rttMs: {mwServer: -1}\n",
        "schema",
        "links.rttMs.mwServer: Must be greater than or equal to 0",
    ),
    (
        "absurd-rtt",  # 2000 for 2.0: no data-centre link, as the spec's bound
        "links:\n  rttMs: {clientMw: 2000}\n",
        "schema",
        "links.rttMs.clientMw: Must be less than or equal to 1000",
    ),
    (
        "rtt-not-a-number",
        "links:\n  rttMs: {clientMw: 2ms}\n",
        "schema",
        "links.rttMs.clientMw: Invalid type. Expected: number, given: string",
    ),
    (
        "negative-jitter",
        "links:\n  jitterMs: {clientMw: -0.5}\n",
        "schema",
        "links.jitterMs.clientMw: Must be greater than or equal to 0",
    ),
    (
        "jitter-above-rtt",
        "links:\n  rttMs: {mwServer: 2}\n  jitterMs: {mwServer: 3}\n",
        "chart",
        "links.jitterMs.mwServer: 3 ms exceeds links.rttMs.mwServer (2 ms)",
    ),
    (
        "jitter-without-rtt",
        "links:\n  jitterMs: {clientMw: 0.2}\n",
        "chart",
        "links.jitterMs.clientMw: 0.2 ms exceeds links.rttMs.clientMw (0 ms)",
    ),
    (
        "client-server-rtt-with-a-middleware",
        "links:\n  rttMs: {clientServer: 2}\n",
        "chart",
        "links.rttMs.clientServer: the loadgens reach the servers directly only without a "
        "middleware",
    ),
    (
        "client-mw-rtt-without-a-middleware",
        "middleware:\n  enabled: false\nlinks:\n  rttMs: {clientMw: 2}\n",
        "chart",
        "links.rttMs.clientMw: there is no middleware",
    ),
    (
        "unknown-link",
        "links:\n  rttMs: {clientMiddleware: 2}\n",
        "schema",
        "links.rttMs: Additional property clientMiddleware is not allowed",
    ),
    (
        "no-backend",
        "memcached:\n  enabled: false\nmiddleware:\n  enabled: false\n",
        "chart",
        "at least one backend must be enabled",
    ),
]


def test_chart_lints_clean_with_every_ci_and_example_values_file() -> None:
    helm = tool("helm")
    run([helm, "lint", CHART, "--strict"])
    ci_files = sorted((CHART / "ci").glob("*-values.yaml"))
    assert len(ci_files) >= 4
    for values in [*ci_files, *sorted((CHART / "examples").glob("*.yaml"))]:
        run([helm, "lint", CHART, "--strict", "-f", values])


@pytest.mark.parametrize(
    ("name", "body", "rejected_by", "message"), BAD_VALUES, ids=[b[0] for b in BAD_VALUES]
)
def test_bad_values_are_rejected_with_a_message_naming_the_key(
    tmp_path: Path, name: str, body: str, rejected_by: str, message: str
) -> None:
    values = tmp_path / f"{name}.yaml"
    values.write_text(body)
    helm = tool("helm")
    rendered = run([helm, "template", "testbed", CHART, "-f", values], check=False)
    output = rendered.stdout + rendered.stderr
    assert rendered.returncode != 0, f"helm template accepted {name}:\n{output}"
    assert message in output, f"expected {message!r} in:\n{output}"
    if rejected_by == "schema":
        linted = run([helm, "lint", CHART, "-f", values], check=False)
        assert linted.returncode != 0, f"helm lint accepted {name}:\n{linted.stdout}"


def _kinds(*args: str | Path) -> list[str]:
    out = run([tool("helm"), "template", "testbed", CHART, *args]).stdout
    return [str(d["kind"]) for d in yaml.safe_load_all(out) if d]


def test_service_monitors_follow_the_api_or_the_value() -> None:
    assert "ServiceMonitor" not in _kinds()  # auto, and the API is absent
    with_api = _kinds("--api-versions", "monitoring.coreos.com/v1")
    assert with_api.count("ServiceMonitor") == 2  # middleware and memcached
    forced = _kinds("--set", "monitoring.serviceMonitors.enabled=true")
    assert forced.count("ServiceMonitor") == 2
    off = _kinds(
        "--api-versions",
        "monitoring.coreos.com/v1",
        "--set",
        "monitoring.serviceMonitors.enabled=false",
    )
    assert "ServiceMonitor" not in off
    out = run(
        [
            tool("helm"),
            "template",
            "testbed",
            CHART,
            "--set",
            "monitoring.serviceMonitors.enabled=true",
        ]
    ).stdout
    for monitor in (d for d in yaml.safe_load_all(out) if d and d["kind"] == "ServiceMonitor"):
        (endpoint,) = monitor["spec"]["endpoints"]
        assert endpoint["port"] == "metrics"
        release = [r for r in endpoint["relabelings"] if r["targetLabel"] == "release"]
        assert release[0]["sourceLabels"] == [
            "__meta_kubernetes_service_label_app_kubernetes_io_instance"
        ]


def _rendered(*args: str) -> list[dict[str, object]]:
    out = run([tool("helm"), "template", "testbed", CHART, *args]).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_asl2019_profile_annotates_each_role_with_its_iperf_rate() -> None:
    docs = _rendered("--set", "bandwidth.profile=asl2019", "--set", "middleware.enabled=true")
    egress = {}
    for doc in docs:
        if doc["kind"] in ("StatefulSet", "Deployment"):
            template = doc["spec"]["template"]["metadata"]  # type: ignore[index]
            component = doc["metadata"]["labels"]["app.kubernetes.io/component"]  # type: ignore[index]
            egress[component] = template["annotations"]["kubernetes.io/egress-bandwidth"]
    assert egress == {"memcached": "88M", "middleware": "710M"}


def _redis_args(*sets: str) -> list[str]:
    args = [a for s in sets for a in ("--set", s)]
    docs = _rendered(
        "--set", "redis.enabled=true", "--set", "memcached.enabled=false",
        "--set", "middleware.backend=redis", *args,
    )  # fmt: skip
    (redis,) = [d for d in docs if d["kind"] == "StatefulSet"]
    container = redis["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
    return [str(a) for a in container["args"]]


def test_redis_settings_of_a_spec_reach_the_server_flags() -> None:
    # 2 GiB of items fit an a2 pod's memory limit (3 GiB), not an a1's (the chart refuses).
    stock = _redis_args("redis.persistence=true", "redis.maxmemoryMiB=2048", "redis.pool=a2")
    assert "--save" not in stock and "--appendonly" not in stock
    assert stock[stock.index("--maxmemory") + 1] == "2048mb"
    unlimited = _redis_args("redis.maxmemoryMiB=0")
    assert "--maxmemory" not in unlimited  # 0 = no limit, redis's own default
    assert unlimited[unlimited.index("--save") + 1] == ""
