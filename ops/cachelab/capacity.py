"""Will a point's load fit the processes that carry it? Checked when a spec loads, before
anything starts: the connections of each loadgen instance and middleware against their JVM heap
(the -Xmx of `cachelab.local.commands`) and this machine's open-file limit, and all the
processes of one point together against this machine's memory.

The per-connection sizes are the buffers the processes allocate once per connection: the
loadgen 64 KiB of heap to read into and at least 64 KiB of direct memory to write from
(loadgen ClientConnection), the middleware 4 KiB to read into plus a request's value
(middleware ClientConnection). Pure functions of the spec and the machine's limits; any thread.
"""

from __future__ import annotations

import os
import re
import resource
from collections.abc import Sequence
from dataclasses import dataclass

from cachelab.spec import Spec

KIB, MIB = 1024, 1024 * 1024
LOADGEN_HEAP_PER_CONNECTION = 64 * KIB
LOADGEN_DIRECT_PER_CONNECTION = 64 * KIB
MIDDLEWARE_READ_PER_CONNECTION = 4 * KIB
JVM_BASE_BYTES = 48 * MIB  # classes, histograms and the rest a JVM holds before any connection
SPARE_FDS = 64  # files, sockets to the servers and pipes besides the clients' connections


@dataclass(frozen=True)
class Limits:
    """The limits a local point runs under."""

    loadgen_heap_bytes: int
    middleware_heap_bytes: int
    open_files: int
    memory_bytes: int

    @classmethod
    def of_this_machine(cls) -> Limits:
        from cachelab import jvm
        from cachelab.paths import repo_root

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        root = repo_root()
        loadgen, middleware = jvm.flags(root, "loadgen"), jvm.flags(root, "middleware")
        return cls(_heap(loadgen), _heap(middleware), soft, pages)


def _heap(flags: Sequence[str]) -> int:
    for flag in flags:
        match = re.fullmatch(r"-Xmx(\d+)([kmg]?)", flag, re.IGNORECASE)
        if match:
            unit = {"": 1, "k": KIB, "m": MIB, "g": 1024 * MIB}[match[2].lower()]
            return int(match[1]) * unit
    return 256 * MIB  # the JVM's default on a small machine


def _size(n: float) -> str:
    return f"{n / (1024 * MIB):.1f} GiB" if n >= 1024 * MIB else f"{n / MIB:.0f} MiB"


def check(spec: Spec, limits: Limits | None = None) -> str | None:
    """One error line when some point does not fit (the first, and how many more), else None."""
    found = problems(spec, limits or Limits.of_this_machine())
    if not found:
        return None
    more = f" (and {len(found) - 1} more points)" if len(found) > 1 else ""
    return f"load does not fit: {found[0]}{more}"


def problems(spec: Spec, limits: Limits) -> list[str]:
    """One sentence per point whose load does not fit, saying what would (empty: all fit)."""
    found = []
    for point in spec.points():
        problem = point_problem(point.spec, limits)
        if problem:
            found.append(f"{point.label()}: {problem}")
    return found


def point_problem(p: Spec, limits: Limits) -> str | None:
    """Why one resolved point does not fit, or None."""
    t = p.topology
    per_instance = t.threads * t.clients_per_thread
    heap_fit = (limits.loadgen_heap_bytes - JVM_BASE_BYTES) // LOADGEN_HEAP_PER_CONNECTION
    fd_fit = limits.open_files - SPARE_FDS
    if per_instance > min(heap_fit, fd_fit):
        need = JVM_BASE_BYTES + per_instance * LOADGEN_HEAP_PER_CONNECTION
        return (
            f"{t.total_clients:,} clients are {per_instance:,} connections per loadgen instance, "
            f"which need about {_size(need)} of its {_size(limits.loadgen_heap_bytes)} heap "
            f"(64 KiB each) and {per_instance + SPARE_FDS:,} of its {limits.open_files:,} open "
            f"files: at most {max(0, min(heap_fit, fd_fit)):,} per instance fit (use more "
            "instances_per_machine or client_machines, or fewer clients_per_thread)"
        )
    memory = t.instances * (
        JVM_BASE_BYTES
        + per_instance * (LOADGEN_HEAP_PER_CONNECTION + LOADGEN_DIRECT_PER_CONNECTION)
    )
    if t.middlewares > 0:
        per_mw = -(-t.total_clients // t.middlewares)
        per_connection = MIDDLEWARE_READ_PER_CONNECTION + p.workload.value_bytes
        mw_fit = (limits.middleware_heap_bytes - JVM_BASE_BYTES) // per_connection
        if per_mw + t.workers * t.servers > min(mw_fit, fd_fit):
            return (
                f"{per_mw:,} client connections per middleware need about "
                f"{_size(JVM_BASE_BYTES + per_mw * per_connection)} of its "
                f"{_size(limits.middleware_heap_bytes)} heap and {per_mw + SPARE_FDS:,} of its "
                f"{limits.open_files:,} open files: at most {max(0, min(mw_fit, fd_fit)):,} fit "
                "(use more middlewares or fewer clients)"
            )
        memory += t.middlewares * (JVM_BASE_BYTES + per_mw * per_connection)
    if memory > limits.memory_bytes:
        return (
            f"its loadgens and middlewares need about {_size(memory)} together, more than this "
            f"machine's {_size(limits.memory_bytes)} of memory (use fewer clients)"
        )
    return None
