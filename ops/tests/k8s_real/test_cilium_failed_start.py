"""A start with Cilium that fails (the agent exits at once on a flag it does not know) tears
down what `up` set up, the Cilium parts included: no chains, devices, network namespaces or
/var/run/cilium are left and the sysctls the agent would touch are as before."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from k8s.tools import TOOLS_BIN, run

from .conftest import SCRIPTS, _lock, leftovers

pytestmark = [pytest.mark.k8s_real, pytest.mark.cilium]

SYSCTLS = [
    Path("/proc/sys") / name
    for name in (
        "net/ipv4/ip_forward",
        "net/ipv4/conf/all/forwarding",
        "net/ipv4/conf/all/rp_filter",
        "net/ipv4/fib_multipath_use_neigh",
        "kernel/timer_migration",
        "kernel/unprivileged_bpf_disabled",
        "net/bridge/bridge-nf-call-iptables",
    )
]


def test_a_failed_start_with_cilium_restores_the_machine(tmp_path: Path) -> None:
    assert os.geteuid() == 0, "the real-cluster tier needs root"
    assert (TOOLS_BIN / "cilium-agent").exists(), "run CILIUM=1 make k8s-tools"
    env = {
        "TOOLS_DIR": str(TOOLS_BIN.parent),
        "CLUSTER_DIR": str(tmp_path / "cluster"),
        "CLUSTER_NETWORK_POLICY": "cilium",
        "CLUSTER_NODES": "1",
        "CILIUM_AGENT_ARGS": "--no-such-flag",
    }
    fd = _lock()
    try:
        assert not leftovers(), f"the machine is not clean before the test: {leftovers()}"
        before = [p.read_text() for p in SYSCTLS]
        had_run_dir = Path("/var/run/cilium").exists()
        failed = run([SCRIPTS / "local-cluster.sh", "up"], env=env, check=False, timeout_s=400)
        assert failed.returncode != 0, failed.stdout
        assert "cilium-agent exited" in failed.stderr, failed.stderr
        assert "cluster down; machine restored" in failed.stderr
        assert not leftovers(), leftovers()
        assert [p.read_text() for p in SYSCTLS] == before
        assert Path("/var/run/cilium").exists() == had_run_dir
        assert not (tmp_path / "cluster" / "pids").exists()
    finally:
        run([SCRIPTS / "local-cluster.sh", "down"], env=env, check=False, timeout_s=300)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
