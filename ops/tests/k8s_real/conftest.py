"""Fixtures of the real-cluster tier: one local cluster (scripts/local-cluster.sh) for the module,
with every image of scripts/images.sh imported, and one testbed release installed with
charts/testbed/examples/local-values.yaml.

The cluster needs root and owns machine-wide things (a bridge, iptables chains, port 6443 on its
node IP), so one runs at a time: sessions queue on a lock file. Teardown always runs
`local-cluster.sh down` and then fails the tier if KUBE-/CNI-/CILIUM_ iptables chains, the bridge,
Cilium's devices or pod network namespaces are left behind.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from k8s.conftest import Cluster
from k8s.tools import CHART, ROOT, TOOLS_BIN, run, tool

LOCAL_VALUES = CHART / "examples" / "local-values.yaml"
SCRIPTS = ROOT / "scripts"
BRIDGE = "cachelab0"
LOCK = Path("/tmp/cachelab-local-cluster.lock")
LOCK_WAIT_S = 1200.0
NAMESPACE = "cachelab"
RELEASE = "testbed"


def leftovers() -> list[str]:
    """What a stopped cluster must not leave on the machine."""
    found = []
    for save in ("iptables-save", "ip6tables-save"):
        out = subprocess.run([save], capture_output=True, text=True, check=False).stdout
        prefixes = (":KUBE-", ":CNI-", ":CILIUM_")
        chains = [line for line in out.splitlines() if line.startswith(prefixes)]
        if chains:
            found.append(f"{save}: {len(chains)} KUBE-/CNI-/CILIUM_ chains, e.g. {chains[0]}")
    if subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True).returncode == 0:
        found.append(f"bridge {BRIDGE}")
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False).stdout
    cilium_links = [w for w in links.split() if w.startswith("cilium_")]
    if cilium_links:
        found.append(f"links {cilium_links}")
    netns = Path("/run/netns")
    if netns.is_dir() and any(p.name.startswith("cni-") for p in netns.iterdir()):
        found.append("network namespaces under /run/netns")
    return found


def _lock() -> int:
    fd = os.open(LOCK, os.O_CREAT | os.O_RDWR, 0o644)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise AssertionError(
                    f"another local cluster held {LOCK} for {LOCK_WAIT_S:.0f} s"
                ) from None
            time.sleep(2)


@contextmanager
def local_cluster(
    tmp_path_factory: pytest.TempPathFactory, network_policy: str = "none"
) -> Iterator[Cluster]:
    """A started local cluster with every image imported; stopped and checked clean after."""
    if os.geteuid() != 0:
        raise AssertionError("the real-cluster tier needs root (bridge, iptables, containerd)")
    for name in ("kube-apiserver", "kubelet", "kube-proxy", "coredns", "helm"):
        tool(name)  # fails early with `make k8s-tools` if one is missing
    fd = _lock()
    directory = tmp_path_factory.mktemp("cluster")
    env = {
        "TOOLS_DIR": str(TOOLS_BIN.parent),
        "CLUSTER_DIR": str(directory),
        "CLUSTER_NETWORK_POLICY": network_policy,
    }
    script = SCRIPTS / "local-cluster.sh"
    try:
        assert not leftovers(), f"the machine is not clean before the tier: {leftovers()}"
        started = time.monotonic()
        out = run([script, "up"], env=env, timeout_s=600).stdout
        kubeconfig = Path(out.strip().splitlines()[-1].removeprefix("export KUBECONFIG="))
        took_s = time.monotonic() - started
        print(f"local cluster (NetworkPolicy: {network_policy}) up in {took_s:.1f} s")
        started = time.monotonic()
        run([SCRIPTS / "images.sh", "import"], env=env, timeout_s=1800)
        print(f"images built/imported in {time.monotonic() - started:.1f} s")
        yield Cluster(name="local", kubeconfig=kubeconfig, workdir=directory)
    finally:
        run([script, "down"], env=env, check=False, timeout_s=300)
        left = leftovers()
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        assert not left, f"local-cluster.sh down left behind: {left}"


@pytest.fixture(scope="module")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with local_cluster(tmp_path_factory) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def release(real_cluster: Cluster) -> str:
    """The testbed release with the local values, installed with --wait."""
    real_cluster.kubectl("create", "namespace", NAMESPACE)
    started = time.monotonic()
    real_cluster.helm(
        "install", RELEASE, CHART, "-n", NAMESPACE, "-f", LOCAL_VALUES,
        "--wait", "--timeout", "240s", timeout_s=300,
    )  # fmt: skip
    print(f"helm install --wait took {time.monotonic() - started:.1f} s")
    return NAMESPACE
