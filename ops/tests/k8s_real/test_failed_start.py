"""A start that fails half way (the API server exits at once) tears down what it set up: the
`up` of scripts/local-cluster.sh runs `down` from its trap, so the nodes' namespaces, veths,
qdiscs and cgroups, the bridge, iptables chains and processes are gone and the kernel settings
are as before. Bad input is refused before anything changes, with what would fit."""

from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path

import pytest
from k8s.tools import TOOLS_BIN, run, tool

from .conftest import SCRIPTS, _lock, leftovers, machine_state

pytestmark = pytest.mark.k8s_real


def test_a_failed_start_restores_the_machine(tmp_path: Path) -> None:
    assert os.geteuid() == 0, "the real-cluster tier needs root"
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    names = ("kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "coredns")
    for name in (*names, "kube-router"):
        (tools / name).symlink_to(tool(name))
    (tools / "kube-apiserver").write_text("#!/bin/sh\necho 'fake apiserver: exits' >&2\nexit 1\n")
    (tools / "kube-apiserver").chmod(0o755)
    env = {"TOOLS_DIR": str(tools.parent), "CLUSTER_DIR": str(tmp_path / "cluster")}
    fd = _lock()
    try:
        assert not leftovers(), f"the machine is not clean before the test: {leftovers()}"
        before = machine_state()
        failed = run([SCRIPTS / "local-cluster.sh", "up"], env=env, check=False, timeout_s=180)
        assert failed.returncode != 0, failed.stdout
        assert "kube-apiserver exited" in failed.stderr, failed.stderr
        assert "start failed: tearing down" in failed.stderr
        assert "cluster down; machine restored" in failed.stderr
        assert not leftovers(), leftovers()
        assert machine_state() == before
        assert not (tmp_path / "cluster" / "pids").exists()  # every process it started is gone
    finally:
        run([SCRIPTS / "local-cluster.sh", "down"], env=env, check=False, timeout_s=300)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_a_start_whose_kube_router_exits_restores_the_machine(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """kube-router starts in every node's namespace after the nodes are Ready and exits at once on
    a flag it does not know: `up` fails naming it, and its trap's `down` restores the machine."""
    assert os.geteuid() == 0, "the real-cluster tier needs root"
    tool("kube-router")
    # a short folder: the nodes' containerd sockets live under it (a unix socket path is short)
    directory = tmp_path_factory.mktemp("kr")
    env = {
        "TOOLS_DIR": str(TOOLS_BIN.parent),
        "CLUSTER_DIR": str(directory / "cluster"),
        "KUBE_ROUTER_ARGS": "--no-such-flag",
    }
    fd = _lock()
    try:
        assert not leftovers(), f"the machine is not clean before the test: {leftovers()}"
        before = machine_state()
        failed = run([SCRIPTS / "local-cluster.sh", "up"], env=env, check=False, timeout_s=400)
        assert failed.returncode != 0, failed.stdout
        assert re.search(r"kube-router-cachelab-\S+ exited", failed.stderr), failed.stderr
        assert "cluster down; machine restored" in failed.stderr
        assert not leftovers(), leftovers()
        assert machine_state() == before
        assert not (directory / "cluster" / "pids").exists()
    finally:
        run([SCRIPTS / "local-cluster.sh", "down"], env=env, check=False, timeout_s=300)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"CLUSTER_NETWORK_POLICY": "calico"}, "must be kube-router, cilium or none, not 'calico'"),
        # 3 + 24 pool cores: at the scale that fits, an a1 node would get 55m CPU and 98 MiB
        ({"CLUSTER_NODES": "a1:3,a4:3"}, "would fit: at most"),
        ({"CLUSTER_NODES": "a1:3,a4:1,a2:2", "CLUSTER_SCALE": "0.2"}, "would fit: SCALE <= 0.1"),
        ({"CLUSTER_NODES": "a3:1"}, "expected pool:count entries"),
        ({"CLUSTER_PROFILE": "fast"}, "PROFILE='fast': one of off, asl2017"),
        ({"CLUSTER_NETWORK_POLICY": "cilium"}, "Cilium runs on one node here (CLUSTER_NODES=1"),
        (
            {"CLUSTER_NETWORK_POLICY": "kube-router", "CLUSTER_NODES": "1"},
            "kube-router runs in the nodes' namespaces of the multi-node cluster",
        ),
    ],
)  # fmt: skip
def test_bad_settings_are_refused_before_anything_changes(
    tmp_path: Path, settings: dict[str, str], message: str
) -> None:
    assert os.geteuid() == 0, "the real-cluster tier needs root"
    if (
        settings.get("CLUSTER_NETWORK_POLICY") == "cilium"
        and not (TOOLS_BIN / "cilium-agent").exists()
    ):
        settings = {**settings}  # refused on the layout before the build is looked at
    env = {"TOOLS_DIR": str(TOOLS_BIN.parent), "CLUSTER_DIR": str(tmp_path / "cluster"), **settings}
    failed = run([SCRIPTS / "local-cluster.sh", "up"], env=env, check=False, timeout_s=60)
    assert failed.returncode != 0
    (line,) = failed.stderr.strip().splitlines()  # one clear line
    print(line)
    assert message in line, line
    assert not (tmp_path / "cluster").exists()  # refused before any state was written
