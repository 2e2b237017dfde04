"""Node layout of the local multi-node cluster (scripts/local-cluster.sh): the nodes of each pool,
each node's CPU and memory caps (the pool's Azure size times one scale factor) and its link rate
under a bandwidth profile (the rates of cachelab.local.shaping, the local runner's).

    layout.py NODES SCALE PROFILE CORES MEM_MIB CONTROL_PLANE_MCPU

NODES is `a1:3,a4:1,a2:3` (pool:count; DEFAULT_NODES), SCALE a factor or `auto` (the largest
that fits, at most 1), CORES and MEM_MIB the machine's, CONTROL_PLANE_MCPU what the control plane
and the nodes' daemons keep. Prints `scale F` and then one `node NAME POOL CPU_M MEMORY_MIB
MBIT` line per node (MBIT 0: unshaped), or one `error: ...` line on stderr and exit 2 when the
machine cannot hold the layout, with what would fit.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ops"))

from cachelab.local.shaping import POOL_MBIT, PROFILES, ROLE_MBIT

# The default layout: the ASL 2017 §3 shape, three server machines, the middleware machine and
# three client machines (scripts/local-cluster.sh and the Makefile default to the same).
DEFAULT_NODES = "a1:3,a4:1,a2:3"
# Azure sizes of the seeds' machines: A1 1 vCPU 1.75 GiB, A2 2 vCPU 3.5 GiB, A4 8 vCPU 14 GiB.
POOL_SIZES = {"a1": (1, 1792), "a2": (2, 3584), "a4": (8, 14336)}
# The ASL hosts: servers on A1, clients on A2, the middleware on A4 (cachelab.spec.Hosts).
ROLE_POOL = {"server": "a1", "client": "a2", "middleware": "a4"}
# Below this a node cannot run its pods (a memcached or the JVM of a loadgen).
MIN_NODE_MCPU = 50
MIN_NODE_MEMORY_MIB = 128
# Memory the machine keeps for the control plane, the node daemons (about 180 MiB per node)
# and everything else it runs.
RESERVED_MEMORY_MIB = 2048
NODE_DAEMONS_MIB = 180


class LayoutError(ValueError):
    """A layout the machine cannot hold, or one that does not parse."""


def parse_nodes(text: str) -> list[tuple[str, int]]:
    """`a1:3,a4:1` -> [("a1", 3), ("a4", 1)], in the order given."""
    pools: list[tuple[str, int]] = []
    for part in text.split(","):
        pool, _, count = part.strip().partition(":")
        if pool not in POOL_SIZES or not count.isdigit() or int(count) < 1:
            raise LayoutError(
                f"NODES={text!r}: expected pool:count entries separated by commas with pools "
                f"{', '.join(POOL_SIZES)} and counts >= 1 (e.g. {DEFAULT_NODES}), or 1 for one node"
            )
        if pool in dict(pools):
            raise LayoutError(f"NODES={text!r}: pool {pool} named twice")
        pools.append((pool, int(count)))
    return pools


def pool_mbit(profile: str) -> dict[str, int]:
    """Link rate of each pool's nodes under `profile` ({} for off)."""
    if profile == "off":
        return {}
    if profile in ROLE_MBIT:
        return {ROLE_POOL[role]: mbit for role, mbit in ROLE_MBIT[profile].items()}
    if profile in POOL_MBIT:
        return dict(POOL_MBIT[profile])
    raise LayoutError(f"PROFILE={profile!r}: one of {', '.join(PROFILES)}")


def layout(
    nodes: str, scale: str, profile: str, cores: int, memory_mib: int, control_plane_mcpu: int
) -> tuple[float, list[tuple[str, str, int, int, int]]]:
    """The scale factor and (name, pool, cpu_m, memory_mib, mbit) of every node."""
    pools = parse_nodes(nodes)
    rates = pool_mbit(profile)
    pool_cores = sum(POOL_SIZES[p][0] * n for p, n in pools)
    pool_mib = sum(POOL_SIZES[p][1] * n for p, n in pools)
    node_count = sum(n for _, n in pools)
    cpu_left_m = cores * 1000 - control_plane_mcpu
    mib_left = memory_mib - RESERVED_MEMORY_MIB - NODE_DAEMONS_MIB * node_count
    smallest = min(POOL_SIZES[p] for p, _ in pools)
    # The largest factor at which every node still runs and the caps fit what is left.
    floor = max(MIN_NODE_MCPU / (smallest[0] * 1000), MIN_NODE_MEMORY_MIB / smallest[1])
    ceiling = min(cpu_left_m / (pool_cores * 1000), mib_left / pool_mib, 1.0)
    if scale == "auto":
        factor = math.floor(ceiling * 1000) / 1000
    else:
        try:
            factor = float(scale)
        except ValueError:
            raise LayoutError(f"SCALE={scale!r}: a factor such as 0.1, or auto") from None
        if not 0 < factor <= 1:
            raise LayoutError(f"SCALE={scale}: a factor in (0, 1]")
    fits = f"{cpu_left_m}m CPU and {mib_left} MiB are left for nodes ({cores} cores, "
    fits += f"{memory_mib} MiB, {control_plane_mcpu}m kept for the control plane)"
    if factor > ceiling + 1e-9:
        need_m = round(pool_cores * 1000 * factor)
        raise LayoutError(
            f"NODES={nodes} at SCALE={scale}: the caps add up to {need_m}m CPU and "
            f"{round(pool_mib * factor)} MiB, but {fits}; would fit: SCALE <= "
            f"{math.floor(ceiling * 1000) / 1000}"
        )
    if factor < floor - 1e-9:
        most = math.floor(min(cpu_left_m / (floor * 1000), mib_left / (floor * 1792)))
        raise LayoutError(
            f"NODES={nodes}: {pool_cores} pool cores (a1 1, a2 2, a4 8) at SCALE={factor:g} "
            f"give a node less than {MIN_NODE_MCPU}m CPU or {MIN_NODE_MEMORY_MIB} MiB, and "
            f"{fits}; would fit: at most {most} pool cores, e.g. {DEFAULT_NODES} (17) or "
            f"a1:1,a4:1,a2:1 (11)"
        )
    out = []
    for pool, count in pools:
        cpu, mib = POOL_SIZES[pool]
        for i in range(count):
            name = f"cachelab-{pool}-{i}"
            out.append(
                (name, pool, round(cpu * 1000 * factor), round(mib * factor), rates.get(pool, 0))
            )
    return factor, out


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    nodes, scale, profile, cores, memory_mib, control_plane_mcpu = argv
    try:
        factor, out = layout(
            nodes, scale, profile, int(cores), int(memory_mib), int(control_plane_mcpu)
        )
    except LayoutError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"scale {factor:g}")
    for row in out:
        print("node " + " ".join(str(x) for x in row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
