"""Open loop, the search and faults on the real local cluster (scripts/local-cluster.sh): one
short open-loop run of the benchmark Jobs, a short search whose steps are such runs, a
memcached pod's process stopped for a few seconds while the loadgen measures, and its pod's link
slowed for a few seconds.

Run as root with TOOLS_DIR and IMAGES_DIR exported (the tier's cluster fixture); the module
starts one cluster (ASL 2017 layout) and installs one release for all four tests."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.cli import main
from cachelab.faults.k8s import container_pids, pod_link_ends, run_tc
from cachelab.report import build_report

from .conftest import LOCAL_VALUES, NAMESPACE, RELEASE, LocalCluster

pytestmark = pytest.mark.k8s_real

BASE: dict[str, Any] = {
    "topology": {
        "client_machines": 1,
        "instances_per_machine": 1,
        "threads": 1,
        "clients_per_thread": 4,
        "middlewares": 1,
        "workers": 4,
        "servers": 1,
        "backend": "memcached",
        "hosts": {"client": "a2", "middleware": "a4", "server": "a1"},
    },
    "workload": {"ratio": "0:1", "value_bytes": 256, "key_maximum": 500},
    "preload": {"enabled": True},
    "run": {"repetitions": 1, "duration_s": 6, "warmup_s": 1, "cooldown_s": 1},
}
RATE_OPS = 200  # far below what one loadgen pod on a scaled a2 node offers


@pytest.fixture
def k8s_env(real_cluster: LocalCluster, release: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(real_cluster.kubeconfig))
    monkeypatch.setenv("CACHELAB_K8S_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("CACHELAB_K8S_RELEASE", RELEASE)
    monkeypatch.setenv("CACHELAB_K8S_LOADGEN", "cachelab")
    monkeypatch.setenv("CACHELAB_K8S_VALUES", str(LOCAL_VALUES))
    monkeypatch.setenv("CACHELAB_K8S_TIMEOUT_S", "240")


def write_spec(tmp_path: Path, name: str, **changes: Any) -> Path:
    spec = {**BASE, "name": name, **changes}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_an_open_loop_run_of_the_jobs_has_offered_and_achieved(
    k8s_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workload = {**BASE["workload"], "rate_ops": RATE_OPS}
    spec = write_spec(tmp_path, "k8s-open", workload=workload)
    code = main(["run", str(spec), "--target", "k8s", "--results", str(tmp_path / "r")])
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    (results,) = (tmp_path / "r" / "k8s-open").iterdir()
    (row,) = read_rows(results / "summary.csv")
    assert row["status"] == "ok", row
    assert float(row["offered_ops_per_s"]) == RATE_OPS
    # Poisson arrivals over 4 measured seconds: about 800 requests, so a generous band
    assert 0.6 < float(row["achieved_frac"]) < 1.4, row
    config = (results / "raw" / "p0-r0" / "k8s" / "kustomization.yaml").read_text()
    assert f"--open-loop-rate={RATE_OPS}" in config


def test_a_short_search_on_the_cluster(
    k8s_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workload = {**BASE["workload"], "rate_ops": RATE_OPS}
    spec = write_spec(tmp_path, "k8s-search", workload=workload)
    code = main(
        ["search", str(spec), "--target", "k8s", "--slo", "p99<=2000ms", "--max-load", "400",
         "--tolerance", "50", "--results", str(tmp_path / "r")]
    )  # fmt: skip
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    (folder,) = (tmp_path / "r" / "k8s-search").iterdir()
    steps = read_rows(folder / "search.csv")
    assert 2 <= len(steps) <= 4, steps
    assert steps[0]["verdict"] == "probe" and float(steps[0]["throughput_ops_per_s"]) > 0
    decided = [s for s in steps if s["verdict"] in ("pass", "fail")]
    assert decided and all(0 < float(s["load"]) <= 400 for s in decided)
    for step in decided:
        assert float(step["throughput_ops_per_s"]) > 0, step
        assert (folder / "raw" / step["run"] / "k8s" / "kustomization.yaml").is_file()
    answer = (folder / "answer.txt").read_text()
    assert "meets p99<=2000ms" in answer, answer
    assert (folder / "search.png").stat().st_size > 10_000


def test_a_stopped_memcached_pod_recovers(
    k8s_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """memcached's process in its pod stopped 4 s after the loadgen starts, for 3 s: the
    loadgen stalls (no replies, or a p99 jump) and recovers once it continues."""
    run = {**BASE["run"], "duration_s": 16}
    faults = [{"at_s": 4, "action": "stop", "target": "server-0", "for_s": 3}]
    spec = write_spec(tmp_path, "k8s-fault", run=run, faults=faults)
    code = main(["run", str(spec), "--target", "k8s", "--results", str(tmp_path / "r")])
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    (results,) = (tmp_path / "r" / "k8s-fault").iterdir()
    run_dir = results / "raw" / "p0-r0"
    (event,) = json.loads((run_dir / "faults.json").read_text())
    print(event)
    assert event["pid"] > 0 and not event["note"], event
    # at 4 s, or later by as much as the runner's first read of the pods' progress came late
    assert 3.0 <= event["began_s"] <= 8.0, event
    assert event["ended_s"] - event["began_s"] == pytest.approx(3.0, abs=0.5)
    (row,) = read_rows(results / "summary.csv")
    print({k: row[k] for k in ("fault", "fault_detect_s", "fault_recover_s", "status")})
    assert row["fault"] == "stop server-0"
    detect, recover = float(row["fault_detect_s"]), float(row["fault_recover_s"])
    assert 0 <= detect <= 3.0 + 2.0, row  # seen within the stop (plus the origin's lag)
    assert math.isfinite(recover) and 0 <= recover <= 6.0, row
    index = build_report(results)
    assert (index.parent / "faults-p0-r0.png").stat().st_size > 10_000


def test_a_slowed_memcached_pod_link_recovers_and_gets_its_qdiscs_back(
    k8s_env: None, real_cluster: LocalCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """memcached's pod link cut to 1 Mbit/s both ways 4 s after the loadgen starts, for 3 s,
    with 4 KiB values (a reply takes 33 ms at that rate): the loadgen sees the latency jump,
    recovers once the link is back, and neither end of the link keeps the fault's htb."""
    run = {**BASE["run"], "duration_s": 16}
    workload = {**BASE["workload"], "value_bytes": 4096}
    faults = [{"at_s": 4, "action": "slow", "target": "server-0", "for_s": 3, "rate_mbit": 1}]
    spec = write_spec(tmp_path, "k8s-slow", run=run, workload=workload, faults=faults)
    code = main(["run", str(spec), "--target", "k8s", "--results", str(tmp_path / "r")])
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    (results,) = (tmp_path / "r" / "k8s-slow").iterdir()
    (event,) = json.loads((results / "raw" / "p0-r0" / "faults.json").read_text())
    print(event)
    assert not event["note"], event
    assert event["ended_s"] - event["began_s"] == pytest.approx(3.0, abs=0.5)
    (row,) = read_rows(results / "summary.csv")
    print({k: row[k] for k in ("fault", "fault_detect_s", "fault_recover_s", "status")})
    assert row["fault"] == "slow server-0"
    detect, recover = float(row["fault_detect_s"]), float(row["fault_recover_s"])
    assert 0 <= detect <= 3.0 + 2.0, row
    assert math.isfinite(recover) and 0 <= recover <= 6.0, row
    pod = real_cluster.get("pod", "-n", NAMESPACE, f"{RELEASE}-memcached-0")
    (status,) = [s for s in pod["status"]["containerStatuses"] if s["name"] == "memcached"]
    pids = container_pids(str(status["containerID"]).split("://", 1)[-1])
    pod_netns, node_netns, peer = pod_link_ends(pids[0])
    for netns, device in ((pod_netns, "eth0"), (node_netns, peer)):
        shown = run_tc(netns, ["qdisc", "show", "dev", device])
        assert "7e:" not in shown, f"{device} in {netns} kept the fault's qdisc: {shown}"
