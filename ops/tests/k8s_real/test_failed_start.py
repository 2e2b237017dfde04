"""A start that fails half way (the API server exits at once) tears down what it set up: the
`up` of scripts/local-cluster.sh runs `down` from its trap, so the bridge, iptables chains,
network namespaces and processes are gone and the sysctls are as before."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from k8s.tools import TOOLS_BIN, run, tool

from .conftest import SCRIPTS, _lock, leftovers

pytestmark = pytest.mark.k8s_real

SYSCTLS = [
    Path("/proc/sys/net/ipv4/ip_forward"),
    Path("/proc/sys/net/ipv6/conf/all/forwarding"),
    Path("/proc/sys/net/bridge/bridge-nf-call-iptables"),
]


def test_a_failed_start_restores_the_machine(tmp_path: Path) -> None:
    assert os.geteuid() == 0, "the real-cluster tier needs root"
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    for name in ("kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "coredns"):
        (tools / name).symlink_to(tool(name))
    (tools / "kube-apiserver").write_text("#!/bin/sh\necho 'fake apiserver: exits' >&2\nexit 1\n")
    (tools / "kube-apiserver").chmod(0o755)
    env = {"TOOLS_DIR": str(tools.parent), "CLUSTER_DIR": str(tmp_path / "cluster")}
    fd = _lock()
    try:
        assert not leftovers(), f"the machine is not clean before the test: {leftovers()}"
        before = [p.read_text() for p in SYSCTLS]
        failed = run([SCRIPTS / "local-cluster.sh", "up"], env=env, check=False, timeout_s=180)
        assert failed.returncode != 0, failed.stdout
        assert "kube-apiserver exited" in failed.stderr, failed.stderr
        assert "start failed: tearing down" in failed.stderr
        assert "cluster down; machine restored" in failed.stderr
        assert not leftovers(), leftovers()
        assert [p.read_text() for p in SYSCTLS] == before
        assert not (tmp_path / "cluster" / "pids").exists()  # every process it started is gone
    finally:
        run([SCRIPTS / "local-cluster.sh", "down"], env=env, check=False, timeout_s=300)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_an_unknown_network_policy_enforcer_is_refused_before_anything_changes(
    tmp_path: Path,
) -> None:
    assert os.geteuid() == 0, "the real-cluster tier needs root"
    env = {
        "TOOLS_DIR": str(TOOLS_BIN.parent),
        "CLUSTER_DIR": str(tmp_path / "cluster"),
        "CLUSTER_NETWORK_POLICY": "calico",
    }
    failed = run([SCRIPTS / "local-cluster.sh", "up"], env=env, check=False, timeout_s=60)
    assert failed.returncode != 0
    assert "CLUSTER_NETWORK_POLICY must be none or cilium, not 'calico'" in failed.stderr
    assert not (tmp_path / "cluster").exists()  # refused before any state was written
