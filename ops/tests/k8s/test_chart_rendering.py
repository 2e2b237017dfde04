"""Tier 4 (no cluster needed): what `helm template` renders for the things a first real user hit
on AKS: the pool label key, rollouts with one middleware per node, probes, disruption
budgets, tolerations and pull secrets, the redis group, the metrics path of the runner, and the
middleware's event loops from the values and from a spec's plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.k8s import plan
from cachelab.spec import parse_spec

from .tools import CHART, run, tool

pytestmark = pytest.mark.k8s


def render(tmp_path: Path, body: str = "", *files: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Rendered objects by (kind, name)."""
    values = tmp_path / "values.yaml"
    values.write_text(body or "{}\n")
    args = [a for f in (*files, values) for a in ("-f", str(f))]
    out = run([tool("helm"), "template", "testbed", CHART, *args]).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def pod_specs(objs: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    specs = {}
    for (kind, name), obj in objs.items():
        if kind in ("Deployment", "StatefulSet"):
            specs[name] = obj["spec"]["template"]["spec"]
        elif kind == "Pod":
            specs[name] = obj["spec"]
    return specs


def test_pools_are_selected_by_agentpool_by_default_and_may_map_to_other_values(
    tmp_path: Path,
) -> None:
    specs = pod_specs(render(tmp_path))
    assert specs["testbed-memcached"]["nodeSelector"] == {"agentpool": "a1"}
    assert specs["testbed-middleware"]["nodeSelector"] == {"agentpool": "a4"}
    assert specs["testbed-test-roundtrip"]["nodeSelector"] == {"agentpool": "a2"}
    mapped = pod_specs(render(tmp_path, "nodePools:\n  sizes:\n    a4: {labelValue: big}\n"))
    assert mapped["testbed-middleware"]["nodeSelector"] == {"agentpool": "big"}
    assert mapped["testbed-memcached"]["nodeSelector"] == {"agentpool": "a1"}


def test_middleware_rollout_replaces_pods_without_surge_when_one_per_node(tmp_path: Path) -> None:
    objs = render(tmp_path)
    strategy = objs[("Deployment", "testbed-middleware")]["spec"]["strategy"]
    assert strategy == {"type": "Recreate"}
    free = render(tmp_path, "middleware:\n  spreadAcrossNodes: false\n")
    assert "strategy" not in free[("Deployment", "testbed-middleware")]["spec"]


def test_every_main_container_has_liveness_and_the_middleware_a_startup_probe(
    tmp_path: Path,
) -> None:
    body = "memcached:\n  pool: a2\nredis:\n  enabled: true\n"
    specs = pod_specs(render(tmp_path, body))
    for name in ("testbed-memcached", "testbed-redis", "testbed-middleware"):
        main = specs[name]["containers"][0]
        assert "livenessProbe" in main and "readinessProbe" in main, name
    middleware = specs["testbed-middleware"]["containers"][0]
    assert middleware["startupProbe"]["tcpSocket"] == {"port": "memcache"}
    assert specs["testbed-redis"]["securityContext"]["runAsGroup"] == 1000


def test_disruption_budgets_tolerations_and_pull_secrets(tmp_path: Path) -> None:
    objs = render(tmp_path)
    budgets = {n: o["spec"] for (k, n), o in objs.items() if k == "PodDisruptionBudget"}
    assert set(budgets) == {"testbed-memcached", "testbed-middleware"}
    assert all(b["maxUnavailable"] == 1 for b in budgets.values())
    assert (
        budgets["testbed-memcached"]["selector"]["matchLabels"]["app.kubernetes.io/component"]
        == "memcached"
    )
    body = (
        "tolerations:\n  - {key: sku, operator: Equal, value: testbed, effect: NoSchedule}\n"
        "imagePullSecrets:\n  - {name: regcred}\n"
    )
    for name, spec in pod_specs(render(tmp_path, body)).items():
        assert spec["tolerations"] == [
            {"key": "sku", "operator": "Equal", "value": "testbed", "effect": "NoSchedule"}
        ], name
        assert spec["imagePullSecrets"] == [{"name": "regcred"}], name
    off = render(tmp_path, "podDisruptionBudget:\n  enabled: false\n")
    assert not [k for k, _ in off if k == "PodDisruptionBudget"]


def test_metrics_port_admits_the_api_server_address_for_the_runner(tmp_path: Path) -> None:
    objs = render(tmp_path, "networkPolicy:\n  metricsFromCidrs: ['10.0.0.0/16']\n")
    ingress = objs[("NetworkPolicy", "testbed-middleware")]["spec"]["ingress"]
    (metrics_rule,) = [r for r in ingress if r["ports"] == [{"protocol": "TCP", "port": 9102}]]
    assert {"ipBlock": {"cidr": "10.0.0.0/16"}} in metrics_rule["from"]
    local = render(tmp_path, "", CHART / "examples" / "local-values.yaml")
    ingress = local[("NetworkPolicy", "testbed-middleware")]["spec"]["ingress"]
    assert any({"ipBlock": {"cidr": "10.244.0.1/32"}} in r["from"] for r in ingress)


def test_client_cidrs_admit_an_outside_harness_to_the_data_ports_only(tmp_path: Path) -> None:
    objs = render(tmp_path, "networkPolicy:\n  clientsFromCidrs: ['192.0.2.0/24']\n")
    block = {"ipBlock": {"cidr": "192.0.2.0/24"}}
    for name, port in (("testbed-middleware", 11212), ("testbed-servers", 11211)):
        ingress = objs[("NetworkPolicy", name)]["spec"]["ingress"]
        admitting = [r for r in ingress if block in r["from"]]
        assert [r["ports"] for r in admitting] == [[{"protocol": "TCP", "port": port}]], name
    default = render(tmp_path, "")
    for name in ("testbed-middleware", "testbed-servers"):
        ingress = default[("NetworkPolicy", name)]["spec"]["ingress"]
        assert not [p for r in ingress for p in r["from"] if "ipBlock" in p], name


def _middleware_args(objs: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    args: list[str] = pod_specs(objs)["testbed-middleware"]["containers"][0]["args"]
    return args


def test_middleware_runs_the_asl_net_thread_unless_event_loops_are_set(tmp_path: Path) -> None:
    default = _middleware_args(render(tmp_path))
    assert default[default.index("--event-loops") + 1] == "0"
    loops = _middleware_args(render(tmp_path, "middleware:\n  eventLoops: 2\n"))
    assert loops[loops.index("--event-loops") + 1] == "2"
    assert loops.count("--event-loops") == 1


def test_a_spec_with_event_loops_reaches_the_middleware_args(tmp_path: Path) -> None:
    spec = parse_spec({"name": "loops", "topology": {"event_loops": 3, "worker_batch": 16}})
    values = tmp_path / "plan-values.yaml"
    values.write_text(yaml.safe_dump(plan.release_values(spec, plan.Target())))
    args = _middleware_args(render(tmp_path, "", values))
    assert args[args.index("--event-loops") + 1] == "3"
    assert args[args.index("--worker-batch") + 1] == "16"


def every_image(objs: dict[tuple[str, str], dict[str, Any]]) -> dict[str, str]:
    """Image of every container (init containers too) by `<object>/<container>`."""
    return {
        f"{name}/{c['name']}": c["image"]
        for name, spec in pod_specs(objs).items()
        for c in [*spec.get("initContainers", []), *spec["containers"]]
    }


def test_global_image_registry_moves_every_image_of_the_release(tmp_path: Path) -> None:
    """Every role and sidecar (servers of both kinds, their exporters, the links' RTT sidecars,
    the wait-for-servers init container, the helm test pod) in one rendering."""
    everything = "redis: {enabled: true, pool: a2}\nlinks:\n  rttMs: {clientMw: 2, mwServer: 2}\n"
    before = every_image(render(tmp_path, everything))
    assert len(before) >= 10 and len(set(before.values())) == 7
    registry = "global: {imageRegistry: reg.example:5000/lab}\n"
    moved = every_image(render(tmp_path, everything + registry))
    assert moved.keys() == before.keys()
    for container, image in before.items():
        repository, tag = image.rsplit(":", 1)
        last = repository.rsplit("/", 1)[-1]
        assert moved[container] == f"reg.example:5000/lab/{last}:{tag}", container
    assert (
        moved["testbed-middleware/middleware"]
        == "reg.example:5000/lab/middleware:"
        + (yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"])
    )


def test_an_image_registry_that_is_no_registry_path_is_refused(tmp_path: Path) -> None:
    values = tmp_path / "bad.yaml"
    values.write_text("global: {imageRegistry: 'https://reg.example'}\n")
    out = run([tool("helm"), "template", "testbed", CHART, "-f", values], check=False)
    assert out.returncode != 0 and "global.imageRegistry" in out.stderr, out.stderr
