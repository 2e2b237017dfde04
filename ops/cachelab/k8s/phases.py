"""Where a Kubernetes point's wall time goes: the runner times each step of a point (release
upgrade, server restart, Job cleanup and start, preload, link probes, the benchmark Job, log
collection) and writes the seconds into point.json, beside the point's overhead (wall time beyond
the seconds the loadgens measure)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from statistics import median
from typing import Any


class PhaseClock:
    """Wall seconds per named step of one point, in the order the steps ran. Used by the
    runner's thread only (one clock per point)."""

    def __init__(self) -> None:
        self._started_s = time.monotonic()
        self._phases_s: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as `name` (added to an earlier block of the same name), also when it
        raises."""
        began_s = time.monotonic()
        try:
            yield
        finally:
            spent_s = time.monotonic() - began_s
            self._phases_s[name] = self._phases_s.get(name, 0.0) + spent_s

    def record(self, measured_s: float) -> dict[str, Any]:
        """The point.json fields: `phases_s` (each step's seconds, rounded to 0.01 s),
        `wall_s` (since the clock started), `measured_s` (the loadgens' measured window),
        `overhead_s` (wall beyond measured) and `overhead_share` (overhead over measured)."""
        wall_s = time.monotonic() - self._started_s
        overhead_s = max(0.0, wall_s - measured_s)
        return {
            "phases_s": {name: round(s, 2) for name, s in self._phases_s.items()},
            "wall_s": round(wall_s, 2),
            "measured_s": measured_s,
            "overhead_s": round(overhead_s, 2),
            "overhead_share": round(overhead_s / measured_s, 3) if measured_s > 0 else None,
        }


def overhead_line(timings: list[dict[str, Any]]) -> str | None:
    """One line on the points' overhead: the median wall, measured and overhead seconds and the
    median seconds of each step, over the timings (PhaseClock.record) of the points."""
    if not timings:
        return None

    names: list[str] = []
    for t in timings:
        names += [n for n in t["phases_s"] if n not in names]
    steps = ", ".join(
        f"{name} {median([t['phases_s'].get(name, 0.0) for t in timings]):.1f}" for name in names
    )
    wall = median([t["wall_s"] for t in timings])
    measured = median([t["measured_s"] for t in timings])
    overhead = median([t["overhead_s"] for t in timings])
    share = f" ({overhead / measured * 100:.0f} % of the measured seconds)" if measured > 0 else ""
    return (
        f"a point's wall time (median of {len(timings)}): {wall:.1f} s for {measured:.0f} s"
        f" measured, overhead {overhead:.1f} s{share}; steps (s): {steps}"
    )


def _epoch_s(stamp: str | None) -> float | None:
    return datetime.fromisoformat(stamp).timestamp() if stamp else None


def job_pod_marks(
    pods: list[dict[str, Any]], released_epoch_s: float, done_epoch_s: float
) -> dict[str, float | None]:
    """Where a Job's time went, in seconds after its release (the latest pod's, at the API
    server's one-second resolution): `pod_created`, `container_started`, `container_finished`,
    and `seen_done` when the runner saw every pod succeeded."""
    created, started, finished = [], [], []
    for pod in pods:
        created.append(_epoch_s(pod["metadata"].get("creationTimestamp")))
        for status in pod.get("status", {}).get("containerStatuses", []):
            terminated = status.get("state", {}).get("terminated", {})
            started.append(_epoch_s(terminated.get("startedAt")))
            finished.append(_epoch_s(terminated.get("finishedAt")))

    def latest(stamps: list[float | None]) -> float | None:
        known = [s for s in stamps if s is not None]
        return round(max(known) - released_epoch_s, 1) if known else None

    return {
        "pod_created": latest(created),
        "container_started": latest(started),
        "container_finished": latest(finished),
        "seen_done": round(done_epoch_s - released_epoch_s, 1),
    }
