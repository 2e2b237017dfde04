"""Tier 4: `cachelab run SPEC --target k8s` end to end on the kwok cluster.

The numbers in this test's results are RECORDED, NOT MEASURED: kwok runs no containers, so it
serves tests/k8s/data/memtier-sample.json (a loadgen run recorded once on the development
machine, in memtier's JSON layout; see data/README.md) as the log of every loadgen container in
the namespace cachelab-run. What is real: the Helm upgrades with each point's values, the Jobs
from manifests/ built by the runner's kustomization, their scheduling on the client pool, the
Job lifecycles, `kubectl logs`, and the collection code that turns the logs into the results
folder and summary.csv."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from spec_parts import short_run, topology

from cachelab.cli import main
from cachelab.results import MeasuredInterval
from cachelab.results.run import client_stats

from .conftest import RECORDED_JSON, RECORDED_LOGS_NAMESPACE, REPEAT_NAMESPACE, Cluster

pytestmark = pytest.mark.k8s

SPEC: dict[str, Any] = {
    "name": "k8s-two-points",
    "description": "2 points on kwok: clients per thread 1 and 4, one middleware, 3 servers",
    "topology": topology(client_machines=2, threads=2, workers=8, servers=3, on_pools=True),
    "workload": {"ratio": "0:1", "value_bytes": 1024, "key_maximum": 2000},
    "preload": {"enabled": True},
    "sweep": {"topology.workers": [8, 32]},
    "run": short_run(6, restart_servers=True),
}


USER_MAX_CONNECTIONS = 2048  # the chart's default is 1024


def run_on_kwok(
    cluster: Cluster,
    namespace: str,
    spec: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> int:
    """`cachelab run SPEC --target k8s --results tmp_path/r` in `namespace`, with an extra
    values file for the release: the pools selected by AKS's label key, and a value of the
    user's that the runner does not set (USER_MAX_CONNECTIONS)."""
    spec_file = tmp_path / f"{spec['name']}.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    monkeypatch.setenv("CACHELAB_K8S_NAMESPACE", namespace)
    monkeypatch.setenv("CACHELAB_K8S_TIMEOUT_S", "120")
    extra = tmp_path / "agentpool-values.yaml"
    extra.write_text(
        f"nodePools:\n  labelKey: agentpool\nmemcached:\n  maxConnections: {USER_MAX_CONNECTIONS}\n"
    )
    monkeypatch.setenv("CACHELAB_K8S_VALUES", str(extra))
    return main(["run", str(spec_file), "--target", "k8s", "--results", str(tmp_path / "r")])


def test_run_target_k8s_collects_recorded_memtier_json_into_the_results_layout(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    print("NOTE: the throughput and latency in these results are recorded, not measured.")
    namespace = cluster.namespace(RECORDED_LOGS_NAMESPACE)
    try:
        assert run_on_kwok(cluster, namespace, SPEC, tmp_path, monkeypatch) == 0
        (results,) = (tmp_path / "r" / "k8s-two-points").iterdir()
        status = json.loads((results / "status.json").read_text())
        assert status["state"] == "complete" and status["runs_done"] == 2, status
        metadata = json.loads((results / "metadata.json").read_text())
        assert metadata["target"] == "k8s"
        assert metadata["cluster"]["server_version"] == "v1.31.3"
        assert metadata["release"]["helm"].startswith("v3.")

        recorded = json.loads(RECORDED_JSON.read_text())
        for point in (0, 1):
            run_dir = results / "raw" / f"p{point}-r0"
            record = json.loads((run_dir / "point.json").read_text())
            assert record["status"] == "ok", record["message"]
            assert [e["index"] for e in record["loadgens"]] == [0, 1]
            for entry in record["loadgens"]:
                assert entry["node"].startswith("a2-")
                collected = json.loads((run_dir / entry["json"]).read_text())
                assert collected == recorded  # the log came through kubectl logs intact
            assert "kustomization.yaml" in {p.name for p in (run_dir / "k8s").iterdir()}
            (mw,) = record["middlewares"]
            assert "simulated by kwok" in mw["unavailable"]
            timing = record["timing"]  # where the point's wall time went
            assert list(timing["phases_s"]) == [
                "upgrade", "restart_servers", "delete_jobs", "apply_jobs", "preload", "scrape",
                "benchmark_job", "collect", "panels",
            ]  # fmt: skip
            # no Prometheus Operator here: the panels are not recorded, and the run says why
            assert "Prometheus" in record["panels"]["unavailable"], record["panels"]
            assert sum(timing["phases_s"].values()) <= timing["wall_s"] + 0.1, timing
            assert timing["measured_s"] == 6
            assert timing["overhead_s"] == pytest.approx(max(0, timing["wall_s"] - 6), abs=0.02)

        pods = cluster.get("pods", "-n", namespace, "-l", "batch.kubernetes.io/job-name=benchmark")
        selectors = [p["spec"]["nodeSelector"] for p in pods["items"]]
        assert selectors == [{"agentpool": "a2"}] * 2, selectors

        # The release followed the last point's values.
        values = json.loads(cluster.helm("get", "values", "testbed", "-n", namespace, "-o", "json"))
        assert values["middleware"]["workers"] == 32
        # The user's values file was merged with the runner's at every point's upgrade: each
        # revision the run made (one a point, workers 8 then 32) kept the user's value.
        history = json.loads(cluster.helm("history", "testbed", "-n", namespace, "-o", "json"))
        kept = []
        for revision in [h["revision"] for h in history]:
            at = json.loads(
                cluster.helm(
                    "get", "values", "testbed", "-n", namespace, "--revision", str(revision),
                    "-o", "json",
                )
            )  # fmt: skip
            kept.append((at["middleware"]["workers"], at["memcached"]["maxConnections"]))
        assert kept == [(8, USER_MAX_CONNECTIONS), (32, USER_MAX_CONNECTIONS)], kept
        memcached = cluster.get("statefulset", "-n", namespace, "testbed-memcached")
        args = memcached["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("-c") + 1] == str(USER_MAX_CONNECTIONS), args

        rows = list(csv.DictReader((results / "summary.csv").open()))
        assert [(r["point"], r["topology.workers"], r["status"]) for r in rows] == [
            ("0", "8", "ok"),
            ("1", "32", "ok"),
        ]
        # Two client machines, each "reporting" the same recorded run.
        one = client_stats(RECORDED_JSON, MeasuredInterval.of_run(1, 1, 6))
        for row in rows:
            assert float(row["throughput_ops_per_s"]) == pytest.approx(2 * one.throughput, 1e-3)
            assert float(row["get_ops_per_s"]) > 0 and float(row["misses"]) == 0, row
            assert row["total_clients"] == "4"
            assert row["mw_throughput_ops_per_s"] == ""  # no middleware process under kwok
    finally:
        cluster.delete_namespace(namespace)


def test_a_repetition_with_the_same_values_skips_the_upgrade_and_the_preload(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repetitions of one point upgrade the release and preload the servers once."""
    spec = {**SPEC, "name": "k8s-repeated", "sweep": {}}
    spec["run"] = {**SPEC["run"], "repetitions": 2, "restart_servers": False}
    namespace = cluster.namespace(REPEAT_NAMESPACE)
    try:
        assert run_on_kwok(cluster, namespace, spec, tmp_path, monkeypatch) == 0
        (results,) = (tmp_path / "r" / "k8s-repeated").iterdir()
        records = [
            json.loads((results / "raw" / f"p0-r{r}" / "point.json").read_text()) for r in (0, 1)
        ]
        assert [r["status"] for r in records] == ["ok", "ok"], [r["message"] for r in records]
        assert [r["release_upgraded"] for r in records] == [True, False]
        history = json.loads(cluster.helm("history", "testbed", "-n", namespace, "-o", "json"))
        assert len(history) == 1, history
        # The servers were neither upgraded nor restarted: the second run keeps the preload.
        assert records[0]["preload"]["verified_by"].startswith("preload Job complete")
        assert "previous point's preload" in records[1]["preload"]["skipped"]
        assert "preload" in records[0]["timing"]["phases_s"]
        assert "preload" not in records[1]["timing"]["phases_s"]

        # A later run of the same spec finds the release it would install: no upgrade either.
        again = tmp_path / "again"
        again.mkdir()
        assert run_on_kwok(cluster, namespace, spec, again, monkeypatch) == 0
        (later,) = (again / "r" / "k8s-repeated").iterdir()
        first = json.loads((later / "raw" / "p0-r0" / "point.json").read_text())
        assert first["status"] == "ok" and first["release_upgraded"] is False, first
        history = json.loads(cluster.helm("history", "testbed", "-n", namespace, "-o", "json"))
        assert len(history) == 1, history
    finally:
        cluster.delete_namespace(namespace)


@pytest.mark.parametrize(
    ("via", "action", "said"),
    [
        ("api", "slow", "faults.0: slow on server-0: the Kubernetes API has no way to shape"),
        ("node", "stop", "faults.0: stop on server-0: --faults-via node signals the target's"),
    ],
)
def test_a_fault_the_cluster_cannot_do_is_refused_in_one_line_before_anything_runs(
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    via: str,
    action: str,
    said: str,
) -> None:
    """kwok's nodes are not this machine's: `--faults-via node` cannot reach the containers;
    the API path has no way to slow a link. Either is one line, and nothing is installed."""
    spec = {
        **SPEC,
        "name": f"k8s-faults-{via}",
        "sweep": {},
        "faults": [{"at_s": 2, "action": action, "target": "server-0", "for_s": 2}],
    }
    namespace = cluster.namespace(f"cachelab-faults-{via}")
    monkeypatch.setenv("CACHELAB_K8S_FAULTS", via)
    try:
        assert run_on_kwok(cluster, namespace, spec, tmp_path, monkeypatch) != 0
        captured = capsys.readouterr()
        lines = [line for line in (captured.out + captured.err).splitlines() if said in line]
        assert len(lines) == 1, captured
        assert "\n" not in lines[0]
        assert cluster.helm("list", "-n", namespace, "-q").strip() == ""
        assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("point.json"))
    finally:
        cluster.delete_namespace(namespace)
