"""Open loop, the search and faults on the real local cluster (scripts/local-cluster.sh): one
short open-loop run of the benchmark Jobs, a short search whose steps are such runs, a
memcached pod's process stopped for a few seconds while the loadgen measures, and its pod's link
slowed for a few seconds.

Run as root with TOOLS_DIR and IMAGES_DIR exported (the tier's cluster fixture); the module
starts one cluster (ASL 2017 layout) and installs one release for all four tests."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from search_runs import interrupt_after_first_step, read_csv
from spec_parts import short_run, topology

from cachelab.cli import main
from cachelab.faults.recovery import loadgen_logs, read_timeline, recoveries_of
from cachelab.k8s.faults import container_pids, pod_link_ends, run_tc
from cachelab.report import build_report

from .conftest import LOCAL_VALUES, NAMESPACE, RELEASE, LocalCluster

pytestmark = pytest.mark.k8s_real

BASE: dict[str, Any] = {
    "topology": topology(clients_per_thread=4, on_pools=True),
    "workload": {"ratio": "0:1", "value_bytes": 256, "key_maximum": 500},
    "preload": {"enabled": True},
    "run": short_run(6),
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


def assert_in_force(
    event: dict[str, Any], at_s: float, for_s: float, duration_s: float, signal_s: float
) -> None:
    """A fault began at its time or later (a busy machine, an origin learnt late), never early,
    was in force for its length less what the action that began it took (`signal_s` at most),
    and was over before the run's end, so that the return can be seen."""
    began, ended = event["began_s"], event["ended_s"]
    assert began >= at_s - 0.01, event
    assert ended >= at_s + for_s - 0.01, event
    assert ended - began >= for_s - signal_s, event
    assert ended < duration_s, event


def assert_shown_and_healed(
    run_dir: Path, event: dict[str, Any], row: dict[str, str], duration_s: float
) -> None:
    """The fault showed after it began; the clients were served again before the run's end; the
    recovery rule (90 % of the throughput before, two seconds in a row), if a busy machine let it
    be met, was met after the fault's end and its detection, inside the run."""
    began, ended = event["began_s"], event["ended_s"]
    detect, recover = float(row["fault_detect_s"]), float(row["fault_recover_s"])
    record = json.loads((run_dir / "point.json").read_text())
    timeline = read_timeline(loadgen_logs(run_dir, record.get("loadgens", [])), duration_s)
    after = [s for s in timeline if s.second - 1 >= ended]
    print(f"good ops/s after the fault: {[round(s.good_ops_per_s) for s in after]}")
    assert math.isfinite(detect) and detect > 0, row
    assert after and after[-1].good_ops_per_s > 0, after
    if math.isfinite(recover):
        assert recover > 0 and ended + recover <= duration_s, row
        assert began + detect < ended + recover, row


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
    (row,) = read_csv(results / "summary.csv")
    assert row["status"] == "ok", row
    assert float(row["offered_ops_per_s"]) == RATE_OPS
    achieved = float(row["achieved_frac"])
    print(f"achieved {achieved:.3f} of the offered rate: {row['rate_verdict']}")
    # Poisson arrivals over 4 measured seconds (about 800 requests), plus at most the backlog of
    # the warm-up's arrivals: not far above the offered rate
    assert 0 < achieved < 1.4, row
    # a busy machine may fall short; then the verdict names it instead of "ok"
    if row["rate_verdict"] == "ok":
        assert achieved > 0.6, row
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
    steps = read_csv(folder / "search.csv")
    # how many steps depends on the capacity the probe found and on repeats of noisy steps
    print(f"{len(steps)} steps: {[(s['verdict'], s['load']) for s in steps]}")
    assert len(steps) >= 2, steps
    assert steps[0]["verdict"] == "probe" and float(steps[0]["throughput_ops_per_s"]) > 0
    decided = [s for s in steps if s["verdict"] in ("pass", "fail")]
    assert decided and all(0 < float(s["load"]) <= 400 for s in decided)
    for step in decided:
        assert float(step["throughput_ops_per_s"]) > 0, step
        assert (folder / "raw" / step["run"] / "k8s" / "kustomization.yaml").is_file()
    answer = (folder / "answer.txt").read_text()
    assert "meets p99<=2000ms" in answer, answer
    assert (folder / "search.png").stat().st_size > 10_000


def test_a_k8s_search_interrupted_after_its_probe_and_resumed(
    k8s_env: None, tmp_path: Path
) -> None:
    """`cachelab search --target k8s` stopped with SIGINT once its probe is in search.csv
    (exit 130, the Jobs left in the namespace), then `--resume`d: the kept steps stay as they
    were, the probe is not run again, and the folder has the local search's outputs."""
    workload = {**BASE["workload"], "rate_ops": RATE_OPS}
    spec = write_spec(tmp_path, "k8s-search-resume", workload=workload)
    base = tmp_path / "r"
    search = [
        "search", str(spec), "--target", "k8s", "--slo", "p99<=2000ms", "--max-load", "400",
        "--tolerance", "50", "--results", str(base),
    ]  # fmt: skip
    code, out = interrupt_after_first_step(
        search, base, "k8s-search-resume/*/search.csv", wait_s=600, exit_s=300
    )
    print(out)
    assert code == 130, out
    (folder,) = base.glob("k8s-search-resume/*")
    kept = read_csv(folder / "search.csv")
    assert kept and kept[0]["verdict"] in ("probe", "repeat") and kept[0]["load"] == "0", kept
    assert main([*search[:-2], "--resume", str(folder)]) == 0
    steps = read_csv(folder / "search.csv")
    print(f"{len(steps)} steps: {[(s['verdict'], s['load']) for s in steps]}")
    assert steps[: len(kept)] == kept  # nothing measured before the interrupt was lost
    assert [s["verdict"] for s in steps].count("probe") == 1  # not probed again on resume
    decided = [s for s in steps if s["verdict"] in ("pass", "fail")]
    assert decided and all(0 < float(s["load"]) <= 400 for s in decided)
    for name in ("answer.txt", "search.csv", "search.json", "search.png", "metadata.json"):
        assert (folder / name).is_file(), name
    assert "meets p99<=2000ms" in (folder / "answer.txt").read_text()


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
    # (never early); in force for its 3 s less what its own signals took; over inside the run
    assert_in_force(event, at_s=4, for_s=3, duration_s=run["duration_s"], signal_s=1.0)
    (row,) = read_csv(results / "summary.csv")
    print({k: row[k] for k in ("fault", "fault_detect_s", "fault_recover_s", "status")})
    assert row["fault"] == "stop server-0"
    assert_shown_and_healed(run_dir, event, row, run["duration_s"])
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
    run_dir = results / "raw" / "p0-r0"
    (event,) = json.loads((run_dir / "faults.json").read_text())
    print(event)
    assert not event["note"], event
    # tc on both ends of the link takes a while on a busy machine, at the start and at the end
    assert_in_force(event, at_s=4, for_s=3, duration_s=run["duration_s"], signal_s=3.0)
    (row,) = read_csv(results / "summary.csv")
    print({k: row[k] for k in ("fault", "fault_detect_s", "fault_recover_s", "status")})
    assert row["fault"] == "slow server-0"
    assert_shown_and_healed(run_dir, event, row, run["duration_s"])
    pod = real_cluster.get("pod", "-n", NAMESPACE, f"{RELEASE}-memcached-0")
    (status,) = [s for s in pod["status"]["containerStatuses"] if s["name"] == "memcached"]
    pids = container_pids(str(status["containerID"]).split("://", 1)[-1])
    pod_netns, node_netns, peer = pod_link_ends(pids[0])
    for netns, device in ((pod_netns, "eth0"), (node_netns, peer)):
        shown = run_tc(netns, ["qdisc", "show", "dev", device])
        assert "7e:" not in shown, f"{device} in {netns} kept the fault's qdisc: {shown}"


def test_faults_through_the_api_stop_a_server_and_delete_its_pod(
    k8s_env: None, real_cluster: LocalCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--faults-via api`, as on a cluster whose nodes are other machines: memcached's process
    stopped for 3 s from an ephemeral container in its pod (the pod sharing its process
    namespace), then its pod deleted and made again by its StatefulSet. Both show in the
    loadgen's seconds and heal; summary.csv has the first one's times, the report both."""
    before = real_cluster.get("pod", "-n", NAMESPACE, f"{RELEASE}-memcached-0")
    run = {**BASE["run"], "duration_s": 40}
    faults = [
        {"at_s": 4, "action": "stop", "target": "server-0", "for_s": 3},
        {"at_s": 12, "action": "restart", "target": "server-0", "for_s": 1},
    ]
    spec = write_spec(tmp_path, "k8s-api-faults", run=run, faults=faults)
    code = main(
        ["run", str(spec), "--target", "k8s", "--faults-via", "api",
         "--results", str(tmp_path / "r")]
    )  # fmt: skip
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    (results,) = (tmp_path / "r" / "k8s-api-faults").iterdir()
    run_dir = results / "raw" / "p0-r0"
    stop, restart = json.loads((run_dir / "faults.json").read_text())
    print(stop, restart, sep="\n")
    assert stop["pid"] > 1 and not stop["note"], stop  # not the pod's init: the pause process
    assert_in_force(stop, at_s=4, for_s=3, duration_s=run["duration_s"], signal_s=2.0)
    assert not restart["note"] and restart["began_s"] >= 12 - 0.01, restart
    assert restart["ended_s"] < run["duration_s"], restart  # the new pod was ready in the run
    (row,) = read_csv(results / "summary.csv")
    print({k: row[k] for k in ("fault", "fault_detect_s", "fault_recover_s", "status")})
    assert row["fault"] == "stop server-0"
    assert_shown_and_healed(run_dir, stop, row, run["duration_s"])
    record = json.loads((run_dir / "point.json").read_text())
    found = recoveries_of(run_dir, record["spec"], record["loadgens"])
    print([(r.action, r.detect_s, r.recover_s) for r in found])
    assert [r.action for r in found] == ["stop", "restart"]
    assert math.isfinite(found[1].detect_s) and found[1].detect_s > 0, found[1]
    after = real_cluster.get("pod", "-n", NAMESPACE, f"{RELEASE}-memcached-0")
    assert after["metadata"]["uid"] != before["metadata"]["uid"]  # a new pod, same name
    assert after["spec"].get("shareProcessNamespace") is True
    index = build_report(results)
    assert (index.parent / "faults-p0-r0.png").stat().st_size > 10_000
