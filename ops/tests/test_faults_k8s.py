"""Faults on Kubernetes without a cluster: the pods a spec's faults name, the container's
processes found through /proc, the signals sent, the checks before a run, and each instance's
per-second series cut from its pod's log."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from cachelab.k8s.api_faults import (
    api_fault_problem,
    helper_image,
    needs_shared_processes,
    signaller_running,
)
from cachelab.k8s.faults import (
    K8sFaultError,
    K8sFaultTargets,
    LinkShaper,
    container_pids,
    is_local_cluster,
    k8s_fault_problem,
    parent_pid,
    resolve,
)
from cachelab.k8s.loadgens import instance_log
from cachelab.k8s.progress import OriginTracker
from cachelab.spec import parse_spec
from cachelab.terminal import LiveSample

CONTAINER = "c0ffee" * 10 + "abcd"
SPEC: dict[str, Any] = {
    "name": "faulty",
    "topology": {"threads": 1, "clients_per_thread": 2, "middlewares": 1, "servers": 3},
    "run": {"duration_s": 12, "warmup_s": 1, "cooldown_s": 1},
    "faults": [{"at_s": 4, "action": "stop", "target": "server-1", "for_s": 3}],
}


def fake_proc(tmp_path: Path) -> Path:
    proc = tmp_path / "proc"
    for pid, cgroup in (
        (4321, f"12:cpu:/kubepods/besteffort/pod1/{CONTAINER}\n"),
        (4400, f"12:cpu:/kubepods/besteffort/pod1/{CONTAINER}\n"),
        (5000, "12:cpu:/user.slice\n"),
    ):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "cgroup").write_text(cgroup)
    (proc / "self").mkdir()
    return proc


def pod(restarts: int = 0, ready: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": "testbed-memcached-1"},
        "status": {
            "containerStatuses": [
                {
                    "name": "memcached",
                    "containerID": f"containerd://{CONTAINER}",
                    "restartCount": restarts,
                    "ready": ready,
                }
            ]
        },
    }


def test_a_containers_processes_are_found_by_its_id(tmp_path: Path) -> None:
    assert container_pids(CONTAINER, fake_proc(tmp_path)) == [4321, 4400]
    assert container_pids("f" * 64, fake_proc(tmp_path / "other")) == []


def test_stop_resume_and_kill_signal_every_process_of_the_container(tmp_path: Path) -> None:
    sent: list[tuple[int, int]] = []
    restarts = [0]
    targets = K8sFaultTargets(
        {"server-1": ("testbed-memcached-1", "memcached")},
        lambda name: pod(restarts[0]),
        fake_proc(tmp_path),
        lambda pid, signum: sent.append((pid, signum)),
    )
    targets.prepare()
    looked_up: list[str] = []

    def counted(name: str) -> dict[str, Any]:
        looked_up.append(name)
        return pod(restarts[0])

    targets.get_pod = counted
    assert targets.stop("server-1") == 4321
    assert not looked_up  # prepared: the stop only signals
    targets.resume("server-1")
    assert sent == [
        (4321, signal.SIGSTOP), (4400, signal.SIGSTOP),
        (4321, signal.SIGCONT), (4400, signal.SIGCONT),
    ]  # fmt: skip
    sent.clear()
    assert targets.kill("server-1") == 4321
    assert sent == [(4321, signal.SIGKILL), (4400, signal.SIGKILL)]
    restarts[0] = 1  # the kubelet started the container again
    assert targets.start_again("server-1") == 4321
    with pytest.raises(K8sFaultError, match="server-2: no such pod"):
        targets.stop("server-2")


def test_a_container_with_no_process_here_is_one_line(tmp_path: Path) -> None:
    targets = K8sFaultTargets(
        {"server-1": ("testbed-memcached-1", "memcached")},
        lambda name: pod(),
        tmp_path,
        lambda pid, signum: None,
    )
    with pytest.raises(K8sFaultError, match="no process of its container on this machine"):
        targets.stop("server-1")


def test_targets_resolve_to_the_releases_pods() -> None:
    spec = parse_spec(
        {**SPEC, "faults": [*SPEC["faults"], {"at_s": 2, "action": "stop",
                                              "target": "middleware-0", "for_s": 1}]}
    )  # fmt: skip
    servers = [f"testbed-memcached-{i}" for i in range(3)]
    middlewares = ["testbed-middleware-7d9-x", "testbed-middleware-7d9-a"]
    found = resolve(spec, servers, middlewares, "testbed")
    assert found == {
        "server-1": ("testbed-memcached-1", "memcached"),
        "middleware-0": ("testbed-middleware-7d9-a", "middleware"),
    }
    with pytest.raises(K8sFaultError, match=r"server-1: no pod testbed-memcached-1 \(the release"):
        resolve(spec, ["testbed-memcached-0"], ["m"], "testbed")


def test_faults_that_cannot_run_on_the_cluster_say_why() -> None:
    stop = parse_spec(SPEC)
    assert k8s_fault_problem(stop, local_cluster=True) is None
    remote = k8s_fault_problem(stop, local_cluster=False)
    assert remote is not None and remote.startswith("faults.0: stop on server-1: --faults-via node")
    slow = parse_spec({**SPEC, "faults": [{**SPEC["faults"][0], "action": "slow"}]})
    assert k8s_fault_problem(slow, local_cluster=True) is None
    remote_slow = k8s_fault_problem(slow, local_cluster=False)
    assert remote_slow is not None and "only on the local cluster" in remote_slow
    local = {"nodes": [{"name": "cachelab-a1-0", "labels": {"cachelab.dev/scale": "0.5"}}]}
    assert is_local_cluster(local)
    assert not is_local_cluster({"nodes": [{"name": "aks-a1-123", "labels": {}}]})


def test_faults_through_the_api_name_the_action_and_what_the_cluster_lacks() -> None:
    """One line each: slow has no API; a verb the user may not use is named."""
    stop = parse_spec(SPEC)
    assert api_fault_problem(stop, lambda verb, resource: True) is None
    assert needs_shared_processes(stop)
    denied = api_fault_problem(stop, lambda verb, resource: resource != "pods/ephemeralcontainers")
    assert denied == (
        "faults.0: stop on server-1: this cluster does not let you update "
        "pods/ephemeralcontainers here"
    )
    kill = parse_spec({**SPEC, "faults": [{**SPEC["faults"][0], "action": "restart"}]})
    assert not needs_shared_processes(kill)
    assert api_fault_problem(kill, lambda verb, resource: resource != "pods") == (
        "faults.0: restart on server-1: this cluster does not let you delete pods here"
    )
    slow = parse_spec({**SPEC, "faults": [{**SPEC["faults"][0], "action": "slow"}]})
    problem = api_fault_problem(slow, lambda verb, resource: True)
    assert problem is not None and "\n" not in problem
    assert problem.startswith("faults.0: slow on server-1: the Kubernetes API has no way")


def test_a_slow_link_end_is_htb_at_the_rate_and_gets_its_previous_qdisc_back() -> None:
    calls: list[list[str]] = []
    shown = {"qdisc": "qdisc tbf 1: root refcnt 2 rate 100Mbit burst 256Kb lat 25ms\n"}

    def fake_tc(netns: Path, args: list[str]) -> str:
        calls.append([str(netns), *args])
        return shown["qdisc"] if args[:2] == ["qdisc", "show"] else ""

    shaper = LinkShaper(Path("/proc/7/ns/net"), "veth1", run=fake_tc)
    shaper.apply(2.4)
    assert calls[1][1:] == [
        "qdisc", "replace", "dev", "veth1", "root", "handle", "7e:", "htb", "default", "1"
    ]  # fmt: skip
    assert calls[2][-4:] == ["rate", "2mbit", "ceil", "2mbit"]
    shaper.clear()
    assert calls[-2][1:] == ["qdisc", "del", "dev", "veth1", "root"]
    assert calls[-1][1:] == [
        "qdisc", "add", "dev", "veth1", "root", "handle", "1:", "tbf",
        "rate", "100Mbit", "burst", "256Kb", "lat", "25ms",
    ]  # fmt: skip
    calls.clear()
    shown["qdisc"] = "qdisc noqueue 0: root refcnt 2\n"
    plain = LinkShaper(Path("/proc/7/ns/net"), "eth0", run=fake_tc)
    plain.apply(0.2)
    assert calls[2][-4:] == ["rate", "1mbit", "ceil", "1mbit"]  # at least 1 Mbit/s
    calls.clear()
    plain.clear()
    assert calls == [["/proc/7/ns/net", "qdisc", "del", "dev", "eth0", "root"]]


def test_a_process_parent_is_read_past_a_command_with_spaces_and_parentheses(
    tmp_path: Path,
) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "stat").write_text("42 (containerd-shim (x) y) S 17 42 42 0 -1\n")
    assert parent_pid(42, tmp_path) == 17


def test_each_instance_keeps_its_own_progress_lines() -> None:
    log = (
        "instance 0 -> a:1\n"
        "progress machine=1 instance=0: [RUN #1 10%, 1 secs] 100 ops/sec\n"
        "progress machine=1 instance=1: [RUN #1 10%, 1 secs] 200 ops/sec\n"
        "done\n"
    )
    assert instance_log(log, 1, 1) == (
        "instance 0 -> a:1\nprogress machine=1 instance=1: [RUN #1 10%, 1 secs] 200 ops/sec\ndone\n"
    )


def test_the_origin_is_the_first_second_seen() -> None:
    origin = OriginTracker()
    assert origin.origin() is None
    origin.seen(LiveSample(second=3, ops_per_s=1.0, mean_ms=0.1, p99_ms=0.2, errors=0))
    first = origin.origin()
    assert first is not None
    origin.seen(LiveSample(second=9, ops_per_s=1.0, mean_ms=0.1, p99_ms=0.2, errors=0))
    assert origin.origin() == first


def test_the_signaller_image_is_moved_by_the_release_registry() -> None:
    """The ephemeral container runs the chart's helper image from where the release pulls its
    own: under global.imageRegistry as the chart's templates move it."""
    values: dict[str, Any] = {"helper": {"image": {"repository": "busybox", "tag": "1.37.0"}}}
    assert helper_image(values) == "busybox:1.37.0"
    values["global"] = {"imageRegistry": "10.244.0.1:5100/"}
    assert helper_image(values) == "10.244.0.1:5100/busybox:1.37.0"


def test_a_signaller_whose_image_cannot_be_pulled_fails_at_once_naming_it() -> None:
    def pod(state: dict[str, Any]) -> dict[str, Any]:
        statuses = [{"name": "cachelab-signal-0", "state": state}]
        return {"metadata": {"name": "m-0"}, "status": {"ephemeralContainerStatuses": statuses}}

    assert not signaller_running({"metadata": {"name": "m-0"}}, "cachelab-signal-0")
    assert not signaller_running(
        pod({"waiting": {"reason": "ContainerCreating"}}), "cachelab-signal-0"
    )
    assert signaller_running(pod({"running": {}}), "cachelab-signal-0")
    back_off = {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "busybox:1.37.0"'}
    with pytest.raises(
        K8sFaultError,
        match=r"cachelab-signal-0 in pod m-0: ImagePullBackOff.*busybox:1\.37\.0.*imageRegistry",
    ):
        signaller_running(pod({"waiting": back_off}), "cachelab-signal-0")
