"""Tier 4: a shipped overlay applied as a user would (`helm install` with its values, `kubectl
apply -k`, release the benchmark), then `cachelab collect` writes the results folder and
`cachelab report` builds the report from it.

The numbers are RECORDED, NOT MEASURED: kwok runs no containers and serves
data/memtier-sample.json as the log of every loadgen container in the namespace
cachelab-collect (conftest.py). What is real: the overlay, the Jobs' lifecycle, the ConfigMap
with the point, `kubectl logs` and the collection into the results layout."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from cachelab.cli import main

from .conftest import COLLECT_NAMESPACE, RECORDED_JSON, Cluster
from .tools import MANIFESTS

pytestmark = pytest.mark.k8s

OVERLAY = MANIFESTS / "overlays" / "asl17-3-one-middleware"  # 1 client machine x 1 instance


def test_collect_writes_the_results_of_an_overlays_jobs_and_report_reads_them(
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    print("NOTE: the throughput and latency in these results are recorded, not measured.")
    capsys.readouterr()  # the note stays out of what the CLI's output is compared with
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    results = tmp_path / "r"
    empty = cluster.namespace("collect-empty")
    namespace = cluster.namespace(COLLECT_NAMESPACE)
    try:
        assert main(["collect", "-n", empty, "--results", str(results)]) == 2
        assert capsys.readouterr().out.startswith(
            "error: no ConfigMap cachelab-point (cachelab.dev/role=point-spec) in namespace "
            f"{empty}"
        )

        cluster.install(namespace, OVERLAY / "testbed-values.yaml")
        cluster.kubectl("apply", "-n", namespace, "-k", OVERLAY)
        cluster.kubectl(
            "wait", "-n", namespace, "--for=condition=complete", "job/preload", "--timeout=90s"
        )
        assert main(["collect", "-n", namespace, "--results", str(results)]) == 2
        assert capsys.readouterr().out.startswith(
            "error: Job benchmark has not completed (suspended: release it with kubectl patch)"
        )
        assert not results.exists()

        cluster.kubectl(
            "patch", "-n", namespace, "job/benchmark", "--type=merge",
            "-p", '{"spec":{"suspend":false}}',
        )  # fmt: skip
        cluster.kubectl(
            "wait", "-n", namespace, "--for=condition=complete", "job/benchmark", "--timeout=90s"
        )
        assert main(["collect", "-n", namespace, "--results", str(results)]) == 0
        (folder,) = (results / "asl17-one-mw").iterdir()
        status = json.loads((folder / "status.json").read_text())
        assert (status["state"], status["runs_done"], status["target"]) == ("complete", 1, "k8s")
        record = json.loads((folder / "raw" / "p0-r0" / "point.json").read_text())
        assert record["status"] == "ok" and record["collected_by"] == "cachelab collect"
        assert record["values"] == {
            "topology.clients_per_thread": 16,
            "topology.workers": 32,
            "workload.ratio": "0:1",
        }
        collected = json.loads((folder / "raw" / "p0-r0" / "loadgen-0.json").read_text())
        assert collected == json.loads(RECORDED_JSON.read_text())
        (row,) = csv.DictReader((folder / "summary.csv").open())
        assert (row["status"], row["topology.workers"], row["total_clients"]) == ("ok", "32", "32")
        assert float(row["throughput_ops_per_s"]) > 0

        assert main(["report", str(folder)]) == 0
        assert (folder / "report" / "index.html").is_file()
    finally:
        cluster.delete_namespace(namespace)
        cluster.delete_namespace(empty)
