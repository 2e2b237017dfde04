"""Unit tests of what a spec point becomes on Kubernetes (no cluster needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.cli import main
from cachelab.k8s import plan
from cachelab.paths import repo_root
from cachelab.spec import load_spec, parse_spec

ROOT = repo_root()

RAW: dict[str, Any] = {
    "name": "plan-test",
    "topology": {
        "client_machines": 3,
        "instances_per_machine": 2,
        "threads": 1,
        "clients_per_thread": 8,
        "middlewares": 2,
        "workers": 16,
        "servers": 3,
        "hosts": {"client": "a2", "middleware": "a4", "server": "a1"},
    },
    "workload": {"ratio": "1:9", "multi_get": 9, "sharded": True},
    "run": {"duration_s": 30, "warmup_s": 2, "cooldown_s": 2},
}


def spec_with(**changes: Any) -> Any:
    raw = yaml.safe_load(yaml.safe_dump(RAW))
    for path, value in changes.items():
        node = raw
        *parents, leaf = path.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return parse_spec(raw)


def test_release_values_follow_the_topology() -> None:
    values = plan.release_values(spec_with(), plan.Target())
    assert values["memcached"] == {
        "enabled": True,
        "replicas": 3,
        "pool": "a1",
        "threads": 1,
        "memoryMiB": 512,
    }
    mw = values["middleware"]
    assert (mw["enabled"], mw["replicas"], mw["workers"], mw["sharded"]) == (True, 2, 16, True)
    assert mw["workerBatch"] == 1
    assert mw["eventLoops"] == 0
    assert (
        plan.release_values(spec_with(topology__event_loops=4), plan.Target())["middleware"][
            "eventLoops"
        ]
        == 4
    )
    assert (
        plan.release_values(spec_with(topology__worker_batch=16), plan.Target())["middleware"][
            "workerBatch"
        ]
        == 16
    )
    assert values["networkPolicy"] == {"clientsToServers": False}
    baseline = plan.release_values(spec_with(topology__middlewares=0), plan.Target())
    assert baseline["middleware"]["enabled"] is False
    assert baseline["networkPolicy"] == {"clientsToServers": True}


def test_job_config_names_the_release_objects_and_the_workload() -> None:
    config = plan.job_config(spec_with(), plan.Target(release="exp1"))
    assert config["MIDDLEWARE_HOST"] == "exp1-testbed-middleware"
    assert config["SERVER_STATEFULSET"] == "exp1-testbed-memcached"
    assert (config["CLIENT_MACHINES"], config["INSTANCES"]) == ("3", "2")
    args = config["LOADGEN_ARGS"].split()
    assert {"--clients=8", "--ratio=1:9", "--multi-key-get=9", "--test-time=30"} <= set(args)
    assert {"--ratio=1:0", "--requests=allkeys"} <= set(config["PRELOAD_FILL_ARGS"].split())
    assert "--ratio=0:1" in config["PRELOAD_VERIFY_ARGS"].split()
    assert config["TARGET"] == "middleware"
    direct = plan.job_config(spec_with(topology__middlewares=0), plan.Target())
    assert direct["TARGET"] == "servers" and direct["SERVER_STATEFULSET"] == "testbed-memcached"


def test_kustomization_uses_relative_paths_and_the_point_components(tmp_path: Path) -> None:
    text = plan.kustomization(
        spec_with(preload__enabled=False),
        plan.Target(loadgen="memtier"),
        ROOT / "manifests",
        tmp_path,
        {"a": "b"},
    )
    doc = yaml.safe_load(text)
    assert not any(Path(p).is_absolute() for p in [*doc["resources"], *doc["components"]])
    assert [Path(c).name for c in doc["components"]] == [
        "clients-pool-a2",
        "target-middleware",
        "loadgen-memtier",
        "bandwidth-asl2017",
        "image-registry",
    ]
    assert "images" not in doc  # the release names no registry
    assert any("$patch: delete" in p["patch"] for p in doc["patches"])  # no preload Job
    job_ops = yaml.safe_load(doc["patches"][0]["patch"])
    assert {
        "op": "replace",
        "path": "/spec/template/spec/nodeSelector",
        "value": {"agentpool": "a2"},
    } in job_ops


@pytest.mark.integration  # runs kubectl kustomize
def test_kustomization_selects_the_client_pool_by_the_release_label_key(tmp_path: Path) -> None:
    doc = yaml.safe_load(
        plan.kustomization(
            spec_with(), plan.Target(), ROOT / "manifests", tmp_path, {}, "agentpool"
        )
    )
    (kust := tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(doc))
    out = subprocess.run(
        ["kubectl", "kustomize", str(kust.parent)], capture_output=True, text=True, check=True
    ).stdout
    jobs = [d for d in yaml.safe_load_all(out) if d and d["kind"] == "Job"]
    assert [j["spec"]["template"]["spec"]["nodeSelector"] for j in jobs] == [
        {"agentpool": "a2"}
    ] * 2


@pytest.mark.integration  # runs kubectl kustomize
def test_cachelab_loadgen_pods_carry_the_release_label(tmp_path: Path) -> None:
    target = plan.Target(release="exp7", loadgen="cachelab")
    doc = yaml.safe_load(plan.kustomization(spec_with(), target, ROOT / "manifests", tmp_path, {}))
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(doc))
    out = subprocess.run(
        ["kubectl", "kustomize", str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout
    jobs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(out) if d and d["kind"] == "Job"}
    labels = jobs["benchmark"]["spec"]["template"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/instance"] == "exp7"  # -> `release` of the dashboards
    (container,) = jobs["benchmark"]["spec"]["template"]["spec"]["containers"]
    assert [p["name"] for p in container["ports"]] == [f"metrics-{j}" for j in range(4)]
    config = next(
        d
        for d in yaml.safe_load_all(out)
        if d and d["metadata"]["name"].startswith("benchmark-config")
    )
    assert int(config["data"]["METRICS_PORTS"]) == plan.LOADGEN_METRICS_PORTS
    with pytest.raises(plan.PlanError, match=r"topology\.instances_per_machine: 5 is more than"):
        plan.job_config(spec_with(topology__instances_per_machine=5), target)
    assert "app.kubernetes.io/instance" not in jobs["preload"]["spec"]["template"]["metadata"].get(
        "labels", {}
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"topology__hosts__client": "d4"}, "topology.hosts.client: 'd4' is not a pool"),
        ({"workload__think_time_ms": 5}, "workload.think_time_ms: 5.0 needs the cachelab loadgen"),
    ],
)
def test_points_that_kubernetes_cannot_run_are_rejected_naming_the_field(
    changes: dict[str, Any], message: str
) -> None:
    spec = spec_with(**changes)
    with pytest.raises(plan.PlanError, match=message):
        plan.check(spec)
        plan.job_config(spec, plan.Target(loadgen="memtier"))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("loadgen", "wrk", "loadgen: 'wrk' is not one of"), ("bandwidth", "10G", "bandwidth: '10G'")],
)
def test_bad_target_options_are_rejected(field: str, value: str, message: str) -> None:
    with pytest.raises(plan.PlanError, match=message):
        plan.Target(**{field: value})


@pytest.mark.integration  # runs kubectl against a loopback port where nothing listens
def test_run_target_k8s_without_a_cluster_fails_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(RAW))
    kubeconfig = tmp_path / "kubeconfig"  # a cluster on a loopback port where nothing listens
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "users": [{"name": "u", "user": {}}],
                "current-context": "c",
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("CACHELAB_HELM", "/bin/true")
    code = main(["run", str(spec_file), "--target", "k8s", "--results", str(tmp_path / "r")])
    assert code == 2
    assert "cannot reach the cluster" in capsys.readouterr().out
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "spec_file", sorted((ROOT / "ops" / "experiments").glob("*.yaml")), ids=lambda p: p.stem
)
def test_every_experiment_spec_can_run_on_kubernetes(spec_file: Path) -> None:
    spec = load_spec(spec_file)
    loadgen = (
        "cachelab"
        if spec.workload.think_time_ms
        or spec.workload.open_loop
        or "think_time_ms" in str(spec.sweep)
        else "memtier"
    )
    for point in spec.points():
        plan.check(point.spec)
        plan.job_config(point.spec, plan.Target(loadgen=loadgen))


def test_run_help_shows_the_k8s_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--values FILE" in text and "$CACHELAB_K8S_VALUES" in text
    assert "--loadgen {cachelab,memtier}" in text and "$CACHELAB_K8S_LOADGEN" in text


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--target", "k8s", "--values", "x.yaml"], {}, "error: --values: x.yaml is not a file"),
        (
            ["--target", "k8s"],
            {"CACHELAB_K8S_VALUES": "gone.yaml"},
            "error: CACHELAB_K8S_VALUES: gone.yaml is not a file",
        ),
        (
            ["--target", "k8s"],
            {"CACHELAB_K8S_LOADGEN": "locust"},
            "error: loadgen: 'locust': the runner reads memtier JSON",
        ),
        (["--loadgen", "memtier"], {}, "error: --values and --loadgen are for --target k8s"),
    ],
)
def test_bad_k8s_options_fail_before_the_cluster_is_asked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(RAW))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = main(["run", str(spec_file), *argv, "--results", str(tmp_path / "r")])
    assert code == 2
    assert capsys.readouterr().out.startswith(message)
    assert not (tmp_path / "r").exists()


def test_the_jobs_project_images_follow_the_release_registry(tmp_path: Path) -> None:
    """A release with global.imageRegistry: the Jobs' loadgen and locust images move there as
    the chart moves the release's (the last path segment under the registry)."""
    text = plan.kustomization(
        spec_with(),
        plan.Target(loadgen="cachelab"),
        ROOT / "manifests",
        tmp_path,
        {"a": "b"},
        image_registry="10.244.0.1:5100",
    )
    assert yaml.safe_load(text)["images"] == [
        {"name": "ghcr.io/cachelab/loadgen", "newName": "10.244.0.1:5100/loadgen"},
        {"name": "ghcr.io/cachelab/locust", "newName": "10.244.0.1:5100/locust"},
    ]
