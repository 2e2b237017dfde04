"""The timing of a Kubernetes point's steps (cachelab.k8s.phases)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import pytest

from cachelab.k8s.phases import PhaseClock, job_pod_marks, overhead_line


def test_a_clock_adds_up_its_steps_also_when_one_raises() -> None:
    clock = PhaseClock()
    with clock.phase("upgrade"):
        time.sleep(0.02)
    with pytest.raises(RuntimeError), clock.phase("benchmark_job"):
        time.sleep(0.01)
        raise RuntimeError("the Job failed")
    with clock.phase("upgrade"):
        time.sleep(0.01)
    record = clock.record(measured_s=0.01)
    assert list(record["phases_s"]) == ["upgrade", "benchmark_job"]
    assert record["phases_s"]["upgrade"] >= 0.03
    assert record["phases_s"]["benchmark_job"] >= 0.01
    assert record["wall_s"] >= 0.04
    assert record["overhead_s"] == pytest.approx(record["wall_s"] - 0.01, abs=0.01)
    assert record["overhead_share"] >= 2.9  # at least 0.03 s beyond 0.01 s measured


def test_the_overhead_line_gives_medians_over_the_timed_points() -> None:
    def timed(upgrade_s: float, job_s: float, wall_s: float) -> dict[str, object]:
        phases = {"upgrade": upgrade_s, "benchmark_job": job_s}
        overhead = wall_s - 20
        return {"phases_s": phases, "wall_s": wall_s, "measured_s": 20.0,
                "overhead_s": overhead, "overhead_share": overhead / 20}  # fmt: skip

    timings = [timed(4.0, 30.0, 40.0), timed(2.0, 28.0, 34.0), timed(3.0, 29.0, 36.0)]
    line = overhead_line(timings)
    assert line == (
        "a point's wall time (median of 3): 36.0 s for 20 s measured, overhead 16.0 s"
        " (80 % of the measured seconds); steps (s): upgrade 3.0, benchmark_job 29.0"
    )
    assert overhead_line([]) is None


def test_a_jobs_pods_say_when_they_were_made_started_and_finished() -> None:
    """Seconds after the release, of the latest pod; a pod still running has no end yet."""
    released = datetime.fromisoformat("2026-11-28T22:00:00Z").timestamp()

    def pod(created: str, started: str | None, finished: str | None) -> dict[str, Any]:
        state = {"terminated": {"startedAt": started, "finishedAt": finished}} if started else {}
        return {
            "metadata": {"creationTimestamp": created},
            "status": {"containerStatuses": [{"state": state}]},
        }

    pods = [
        pod("2026-11-28T22:00:01Z", "2026-11-28T22:00:03Z", "2026-11-28T22:00:30Z"),
        pod("2026-11-28T22:00:02Z", "2026-11-28T22:00:04Z", "2026-11-28T22:00:31Z"),
    ]
    assert job_pod_marks(pods, released, released + 32.25) == {
        "pod_created": 2.0,
        "container_started": 4.0,
        "container_finished": 31.0,
        "seen_done": 32.2,
    }
    running = job_pod_marks([pod("2026-11-28T22:00:01Z", None, None)], released, released + 5)
    assert running["container_started"] is None and running["pod_created"] == 1.0
