"""Fixtures of the real-cluster tier: one local cluster (scripts/local-cluster.sh) shared by the
modules of the tier, by default in the ASL 2017 §3 shape (nodes a1 x 3, a4, a2 x 3 in network
namespaces of their own) with kube-router's firewall enforcing NetworkPolicies on every node,
with every image of scripts/images.sh pushed to its registry (the nodes pull them from there,
as AKS nodes from an ACR), and one testbed release per module installed with
charts/testbed/examples/local-values.yaml (local-one-node-values.yaml on one node), whose
NetworkPolicies are on.

Starting a cluster and pushing the images to its registry takes one to three minutes, so
the modules share one (ClusterPool): after each module its namespaces and cluster-wide objects
are deleted again (restore), and a module whose cleanup fails stops the cluster so that the next
one starts afresh. Tests that start clusters of their own run before the shared one starts, and
the test of `down` runs last.

The cluster needs root and owns machine-wide things (a bridge, namespaces, cgroups, iptables
chains, port 6443 on its address), so one runs at a time: sessions queue on a lock file.
Teardown always runs `local-cluster.sh down` and then fails the tier if anything of it is left
on the machine or a kernel setting differs from before `up` (machine_state).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s.conftest import Cluster
from k8s.tools import CHART, ROOT, TOOLS_BIN, run, tool

from cachelab.k8s.images import job_images

LOCAL_VALUES = CHART / "examples" / "local-values.yaml"
ONE_NODE_VALUES = CHART / "examples" / "local-one-node-values.yaml"
ASL2017_NODES = "a1:3,a4:1,a2:3"  # the script's default layout (layout.py DEFAULT_NODES)
# Kernel settings the cluster may change (kubelet, kube-proxy, Cilium) and `down` restores.
SYSCTLS = (
    "vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes", "net/ipv4/ip_forward",
    "net/ipv4/conf/all/forwarding", "net/ipv6/conf/all/forwarding", "net/ipv4/conf/all/rp_filter",
    "net/bridge/bridge-nf-call-iptables", "net/bridge/bridge-nf-call-ip6tables",
    "kernel/timer_migration", "kernel/unprivileged_bpf_disabled",
)  # fmt: skip
RUNTIME_DIRS = (
    "/run/netns",
    "/var/log/pods",
    "/var/log/containers",
    "/run/containerd",
    "/var/lib/cni",
)
SCRIPTS = ROOT / "scripts"
BRIDGE = "cachelab0"
LOCK = Path("/tmp/cachelab-local-cluster.lock")
LOCK_WAIT_S = 1200.0
NAMESPACE = "cachelab"
RELEASE = "testbed"


def leftovers() -> list[str]:
    """What a stopped cluster must not leave on the machine: chains of kube-proxy, kube-router
    (KUBE-ROUTER-*, KUBE-NWPLCY-*, KUBE-POD-FW-*), the CNI plugins and Cilium, kube-router's
    ipsets, the bridge, Cilium's links and the pods' network namespaces."""
    found = []
    for save in ("iptables-save", "ip6tables-save"):
        out = subprocess.run([save], capture_output=True, text=True, check=False).stdout
        prefixes = (":KUBE-", ":CNI-", ":CILIUM_")
        chains = [line for line in out.splitlines() if line.startswith(prefixes)]
        if chains:
            found.append(f"{save}: {len(chains)} KUBE-/CNI-/CILIUM_ chains, e.g. {chains[0]}")
    if shutil.which("ipset"):
        names = subprocess.run(["ipset", "list", "-n"], capture_output=True, text=True).stdout
        sets = [n for n in names.split() if n.removeprefix("inet6:").startswith("KUBE-")]
        if sets:
            found.append(f"ipsets {sets}")
    if subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True).returncode == 0:
        found.append(f"bridge {BRIDGE}")
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False).stdout
    cilium_links = [w for w in links.split() if w.startswith("cilium_")]
    if cilium_links:
        found.append(f"links {cilium_links}")
    netns = Path("/run/netns")
    if netns.is_dir() and any(p.name.startswith("cni-") for p in netns.iterdir()):
        found.append("network namespaces under /run/netns")
    found += [f"registry process {pid}" for pid in cluster_registries()]
    return found


def cluster_registries() -> list[int]:
    """Pids of docker-registry processes a local cluster started (`serve <cluster
    dir>/registry.yml`; a service of the machine serves /etc/docker/registry/config.yml)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = any(a.endswith(b"/registry.yml") for a in argv)
        if proc.name.isdigit() and argv[0].endswith(b"docker-registry") and ours:
            pids.append(int(proc.name))
    return pids


def machine_state() -> dict[str, Any]:
    """What of the machine a cluster touches: kernel settings, the cluster's network namespaces,
    links, qdiscs and cgroups, runtime directories and the /run/netns mount."""
    cgroup = Path("/sys/fs/cgroup")
    ours = ("cachelab-", "kubepods")
    netns = Path("/run/netns")
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    qdiscs = subprocess.run(["tc", "qdisc", "show"], capture_output=True, text=True).stdout
    mounts = Path("/proc/mounts").read_text().split("\n")
    return {
        "sysctls": {k: (Path("/proc/sys") / k).read_text().strip() for k in SYSCTLS
                    if (Path("/proc/sys") / k).exists()},
        "netns": sorted(p.name for p in netns.iterdir()) if netns.is_dir() else None,
        "links": sorted(
            name for line in links.splitlines()
            for name in [line.split(": ")[1].split("@")[0]]
            if name == BRIDGE or name.startswith(("v-", "cilium_", "bwp"))
        ),
        "qdiscs": sorted(
            q for q in qdiscs.splitlines() if f" dev {BRIDGE} " in q or " dev v-" in q
        ),
        "cgroups": sorted(
            str(d.relative_to(cgroup)) for h in cgroup.iterdir() if h.is_dir()
            for d in h.iterdir() if d.is_dir() and d.name.startswith(ours)
        ),
        "dirs": {d: Path(d).exists() for d in RUNTIME_DIRS},
        "netns_mount": any(m.split(" ")[1:2] == ["/run/netns"] for m in mounts if m),
    }  # fmt: skip


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


@dataclass(frozen=True)
class LocalCluster(Cluster):
    """A running local cluster: the kwok Cluster's kubectl/helm, plus how to stop it and what
    the machine was like before it started."""

    env_vars: dict[str, str] = field(default_factory=dict)
    before: dict[str, Any] = field(default_factory=dict)

    def layout(self) -> list[dict[str, str | int]]:
        """The nodes `up` made: name, pool, cpu_m, memory_mib, mbit, ip, pod_cidr."""
        keys = ("name", "pool", "cpu_m", "memory_mib", "mbit", "ip", "pod_cidr")
        rows = []
        for line in (self.workdir / "layout").read_text().splitlines():
            if line.startswith("node "):
                values = line.split()[1:]
                rows.append(
                    {k: int(v) if v.isdigit() else v for k, v in zip(keys, values, strict=True)}
                )
        return rows

    def node_pool(self, name: str) -> str:
        """The pool of node `name`."""
        (pool,) = [str(n["pool"]) for n in self.layout() if n["name"] == name]
        return pool

    def down(self) -> subprocess.CompletedProcess[str]:
        return run(
            [SCRIPTS / "local-cluster.sh", "down"], env=self.env_vars, check=False, timeout_s=300
        )


@contextmanager
def local_cluster(
    tmp_path_factory: pytest.TempPathFactory,
    network_policy: str = "kube-router",
    nodes: str = ASL2017_NODES,
) -> Iterator[LocalCluster]:
    """A started local cluster with every image imported; stopped and checked clean after.
    `network_policy` is CLUSTER_NETWORK_POLICY: kube-router (multi-node), cilium (one node) or
    none."""
    if os.geteuid() != 0:
        raise AssertionError("the real-cluster tier needs root (bridge, iptables, containerd)")
    names = ["kube-apiserver", "kubelet", "kube-proxy", "coredns", "helm"]
    if network_policy == "kube-router":
        names.append("kube-router")
    for name in names:
        tool(name)  # fails early with `make k8s-tools` if one is missing
    fd = _lock()
    stale = leftovers()
    if stale:  # another cluster's: its own `down` (with its CLUSTER_DIR) removes them
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        raise AssertionError(f"the machine is not clean before the tier: {stale}")
    directory = tmp_path_factory.mktemp("cluster")
    env = {
        "TOOLS_DIR": str(TOOLS_BIN.parent),
        "CLUSTER_DIR": str(directory),
        "CLUSTER_NETWORK_POLICY": network_policy,
        "CLUSTER_NODES": nodes,
    }
    script = SCRIPTS / "local-cluster.sh"
    before = machine_state()
    try:
        started = time.monotonic()
        out = run([script, "up"], env=env, timeout_s=600).stdout
        kubeconfig = Path(out.strip().splitlines()[-1].removeprefix("export KUBECONFIG="))
        took_s = time.monotonic() - started
        print(
            f"local cluster (nodes {nodes}, NetworkPolicy: {network_policy}) up in {took_s:.1f} s"
        )
        started = time.monotonic()
        registry = run([script, "registry"], env=env).stdout.strip()
        run([SCRIPTS / "images.sh", "push"], env={**env, "REGISTRY": registry}, timeout_s=1800)
        print(f"images built/pushed to {registry} in {time.monotonic() - started:.1f} s")
        yield LocalCluster(
            name="local", kubeconfig=kubeconfig, workdir=directory, env_vars=env, before=before
        )
    finally:
        run([script, "down"], env=env, check=False, timeout_s=300)
        left = leftovers()
        after = machine_state()
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        assert not left, f"local-cluster.sh down left behind: {left}"
        assert after == before, f"the machine differs after down: before {before}, after {after}"


def from_cluster_registry(overlay: Path, folder: Path) -> Path:
    """A kustomization in `folder` of `overlay` with the Jobs' project images moved to the local
    cluster's registry (local-values.yaml's global.imageRegistry), as a user moves them with the
    image-registry component (or `cachelab run --target k8s` from the release's registry)."""
    registry = yaml.safe_load(LOCAL_VALUES.read_text())["global"]["imageRegistry"]
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(overlay, folder)],
        "images": job_images(registry),
    }
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


class ClusterPool:
    """The tier's one shared cluster: started by the first module that asks for it, restored
    after each module (restore), stopped at the end of the session or when a restore fails.
    Called on pytest's main thread only."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._stack: ExitStack | None = None
        self.cluster: LocalCluster | None = None

    def get(self) -> LocalCluster:
        """The running cluster, started (up, images imported) if none runs."""
        if self.cluster is None:
            stack = ExitStack()
            self.cluster = stack.enter_context(local_cluster(self._factory))
            self._stack = stack
        return self.cluster

    def stop(self) -> None:
        """`down` and the checks of local_cluster, if a cluster runs."""
        stack, self._stack, self.cluster = self._stack, None, None
        if stack is not None:
            stack.close()


@pytest.fixture(scope="session")
def cluster_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterPool]:
    pool = ClusterPool(tmp_path_factory)
    try:
        yield pool
    finally:
        pool.stop()


SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
# Cluster-wide kinds a module may add (the chart, the operator's manifests, probes).
CLUSTER_KINDS = (
    "customresourcedefinitions", "clusterroles", "clusterrolebindings", "priorityclasses",
    "storageclasses", "persistentvolumes", "ingressclasses", "apiservices",
    "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
)  # fmt: skip
# Kinds a module may add to the namespaces that stay (default, kube-system); not pods, since a
# system pod that its controller replaces gets a new name.
NAMESPACED_KINDS = (
    "deployments", "statefulsets", "daemonsets", "jobs", "services", "configmaps", "secrets",
    "serviceaccounts", "networkpolicies", "roles", "rolebindings",
)  # fmt: skip
RESTORE_TIMEOUT_S = 240


def cluster_objects(cluster: LocalCluster) -> set[str]:
    """The namespaces, the cluster-wide objects and the objects in the system namespaces, as
    `namespace/kind/name` (namespace empty for cluster-wide ones)."""
    found = {f"/{name}" for name in cluster.kubectl("get", "namespaces", "-o", "name").split()}
    found |= {
        f"/{name}" for name in cluster.kubectl("get", ",".join(CLUSTER_KINDS), "-o", "name").split()
    }
    for namespace in sorted(SYSTEM_NAMESPACES):
        names = cluster.kubectl("get", ",".join(NAMESPACED_KINDS), "-n", namespace, "-o", "name")
        found |= {f"{namespace}/{name}" for name in names.split()}
    return found


def restore(cluster: LocalCluster, baseline: set[str]) -> None:
    """Delete what a module added to the shared cluster since `baseline` (cluster_objects): the
    custom resources of new definitions first, while their operators still run and can drop
    their finalizers, then the new namespaces (waited for), new objects in the system
    namespaces, and the new cluster-wide objects; then every node must be Ready."""
    started = time.monotonic()
    added = sorted(cluster_objects(cluster) - baseline)
    crds = [o.split("/")[-1] for o in added if o.startswith("/customresourcedefinition")]
    for crd in crds:
        cluster.kubectl(
            "delete", crd, "--all", "-A", "--ignore-not-found", "--timeout=60s",
            check=False, timeout_s=90,
        )  # fmt: skip
    namespaces = [o.split("/")[-1] for o in added if o.startswith("/namespace/")]
    local = [o.split("/", 1) for o in added if not o.startswith("/")]
    cluster_wide = [o[1:] for o in added if o.startswith("/") and not o.startswith("/namespace/")]
    if namespaces:
        cluster.kubectl(
            "delete", "namespace", *namespaces, f"--timeout={RESTORE_TIMEOUT_S}s",
            timeout_s=RESTORE_TIMEOUT_S + 30,
        )  # fmt: skip
    for namespace, name in local:
        cluster.kubectl("delete", name, "-n", namespace, "--ignore-not-found", timeout_s=90)
    if cluster_wide:
        cluster.kubectl("delete", *cluster_wide, "--ignore-not-found", timeout_s=120)
    cluster.kubectl("wait", "--for=condition=Ready", "nodes", "--all", "--timeout=60s")
    # A system object that its controller makes again is not the module's; the rest must be gone.
    left = [o for o in cluster_objects(cluster) - baseline if o.startswith("/")]
    assert not left, f"still on the shared cluster after the module's cleanup: {sorted(left)}"
    print(f"shared cluster restored in {time.monotonic() - started:.1f} s: deleted {added}")


@pytest.fixture(scope="module")
def real_cluster(cluster_pool: ClusterPool) -> Iterator[LocalCluster]:
    """The shared cluster, as it was before the module when the module ends."""
    cluster = cluster_pool.get()
    baseline = cluster_objects(cluster)
    yield cluster
    try:
        restore(cluster, baseline)
    except BaseException:
        cluster_pool.stop()  # the next module starts a fresh cluster
        raise


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start clusters of their own first, then the modules of the shared cluster
    (each module's tests together, in their order), the test of `down` last."""

    def rank(item: pytest.Item) -> int:
        if "k8s_real" not in item.path.parts:
            return 0
        if "cluster_pool" in getattr(item, "fixturenames", ()) and item.name.startswith(
            "test_down"
        ):
            return 3
        return 2 if "real_cluster" in getattr(item, "fixturenames", ()) else 1

    items.sort(key=rank)


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
