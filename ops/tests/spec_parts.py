"""Parts of the experiment specs that the tests write (cachelab.spec's fields): a small topology
of one middleware, as each test varies it, and a short run."""

from __future__ import annotations

from typing import Any

POOLS = {"client": "a2", "middleware": "a4", "server": "a1"}  # the hosts of the Kubernetes tests


def topology(
    *,
    client_machines: int = 1,
    threads: int = 1,
    clients_per_thread: int = 1,
    workers: int = 4,
    servers: int = 1,
    on_pools: bool = False,
) -> dict[str, Any]:
    """One loadgen instance per client machine and one middleware in front of memcached;
    `on_pools`: each role on its node pool (POOLS)."""
    parts: dict[str, Any] = {
        "client_machines": client_machines,
        "instances_per_machine": 1,
        "threads": threads,
        "clients_per_thread": clients_per_thread,
        "middlewares": 1,
        "workers": workers,
        "servers": servers,
        "backend": "memcached",
    }
    if on_pools:
        parts["hosts"] = dict(POOLS)
    return parts


def short_run(duration_s: int, **more: Any) -> dict[str, Any]:
    """One repetition of `duration_s` seconds, one trimmed at each end; `more` run fields."""
    return {"repetitions": 1, "duration_s": duration_s, "warmup_s": 1, "cooldown_s": 1, **more}
