"""Small helpers over Kubernetes objects (parsed `kubectl get -o json`) for the tier-4 tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_MEMORY_UNITS = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
}


def cpu_millis(quantity: str) -> int:
    """CPU quantity in millicores: '500m' -> 500, '2' -> 2000."""
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return int(float(quantity) * 1000)


def memory_bytes(quantity: str) -> int:
    """Memory quantity in bytes: '768Mi' -> 805306368."""
    for suffix, factor in _MEMORY_UNITS.items():
        if quantity.endswith(suffix):
            return int(float(quantity[: -len(suffix)]) * factor)
    return int(quantity)


def pod_requests(pod: dict[str, Any]) -> tuple[int, int]:
    """(cpu millicores, memory bytes) requested by the pod's containers."""
    cpu = mem = 0
    for c in pod["spec"]["containers"]:
        req = c.get("resources", {}).get("requests", {})
        cpu += cpu_millis(req.get("cpu", "0"))
        mem += memory_bytes(req.get("memory", "0"))
    return cpu, mem


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = 90) -> T:
    """Poll `probe` until it returns something other than None/False; fail naming `what`."""
    deadline = time.monotonic() + timeout_s
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what} (last: {last!r})")
