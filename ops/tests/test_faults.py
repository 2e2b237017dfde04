"""Faults as experiment steps: the spec section, the injector's schedule, the per-second
timeline and the times to detect and to recover."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cachelab.faults import FaultInjector, fault_columns, read_timeline
from cachelab.faults.injector import FaultEvent
from cachelab.faults.recovery import Second, recovery
from cachelab.local.faults import check_local_faults
from cachelab.local.shaping import ShapingError
from cachelab.spec import SpecError, parse_spec

BASE: dict[str, Any] = {
    "name": "faulty",
    "topology": {"servers": 2, "middlewares": 1},
    "run": {"duration_s": 12, "warmup_s": 2, "cooldown_s": 1},
}


def spec_with(*faults: dict[str, Any]) -> Any:
    return parse_spec({**BASE, "faults": list(faults)})


def test_a_fault_section_parses() -> None:
    spec = spec_with(
        {"at_s": 4, "action": "stop", "target": "server-1", "for_s": 3},
        {"at_s": 5, "action": "kill", "target": "middleware-0"},
    )
    assert [(f.action, f.role, f.index, f.end_s) for f in spec.faults] == [
        ("stop", "server", 1, 7),
        ("kill", "middleware", 0, 5),
    ]


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            {"at_s": 1, "action": "stop", "target": "server-2", "for_s": 1},
            "faults.0: target 'server-2' does not exist (the servers: server-0, server-1)",
        ),
        (
            {"at_s": 1, "action": "stop", "target": "middleware-1", "for_s": 1},
            "faults.0: target 'middleware-1' does not exist (the middlewares: middleware-0)",
        ),
        ({"at_s": 1, "action": "stop", "target": "server-0"}, "stop needs for_s > 0"),
        (
            {"at_s": 1, "action": "kill", "target": "server-0", "for_s": 2},
            "kill does not bring the target back",
        ),
        (
            {"at_s": 10, "action": "restart", "target": "server-0", "for_s": 2},
            "at_s + for_s must be < run.duration_s, got 10 + 2 >= 12",
        ),
        ({"at_s": 1, "action": "pause", "target": "server-0", "for_s": 1}, "must be one of"),
        ({"at_s": 1, "action": "stop", "target": "client-0", "for_s": 1}, "must match"),
    ],
)
def test_a_bad_fault_is_one_clear_line(fault: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as caught:
        spec_with(fault)
    assert len(caught.value.problems) == 1
    assert message in caught.value.problems[0]


def test_slow_cannot_share_lo_with_a_bandwidth_profile() -> None:
    spec = spec_with({"at_s": 1, "action": "slow", "target": "server-0", "for_s": 1})
    with pytest.raises(ShapingError, match="slow on server-0 cannot be combined with --bandwidth"):
        check_local_faults(spec, "asl2017")
    check_local_faults(spec_with(), "asl2017")  # no slow fault: nothing to check


class Recorder:
    """FaultTargets that write down what they were asked, with the time."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, float]] = []
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def _note(self, what: str, target: str) -> int:
        with self.lock:
            self.calls.append((what, target, time.monotonic() - self.started))
        return 100 + len(self.calls)

    def stop(self, target: str) -> int:
        return self._note("stop", target)

    def resume(self, target: str) -> None:
        self._note("resume", target)

    def kill(self, target: str) -> int:
        return self._note("kill", target)

    def start_again(self, target: str) -> int:
        return self._note("start_again", target)

    def slow(self, target: str, mbit: float) -> None:
        self._note(f"slow {mbit:g}", target)

    def unslow(self, target: str) -> None:
        self._note("unslow", target)


def test_the_injector_keeps_the_schedule_and_ends_what_is_in_force(tmp_path: Path) -> None:
    spec = parse_spec(
        {
            **BASE,
            "run": {"duration_s": 60},
            "faults": [
                {"at_s": 0.1, "action": "stop", "target": "server-0", "for_s": 0.2},
                {"at_s": 0.2, "action": "restart", "target": "middleware-0", "for_s": 0.2},
                {"at_s": 0.3, "action": "slow", "target": "server-1", "for_s": 30, "rate_mbit": 5},
            ],
        }
    )
    targets = Recorder()
    origin = targets.started
    injector = FaultInjector(spec.faults, targets, lambda: origin).start()
    deadline = time.monotonic() + 20
    while len(targets.calls) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    events = injector.stop()  # the slow fault, 30 s long, ends now
    order = [(what, target) for what, target, _ in targets.calls]
    assert order == [
        ("stop", "server-0"),
        ("kill", "middleware-0"),
        ("slow 5", "server-1"),
        ("resume", "server-0"),
        ("start_again", "middleware-0"),
        ("unslow", "server-1"),
    ]
    stop_at = targets.calls[0][2]
    resume_at = next(t for what, _, t in targets.calls if what == "resume")
    assert resume_at - stop_at >= 0.15
    # on time or late (a busy machine wakes the thread late), never early; the 30 s fault ended
    # by stop(), not on schedule
    assert 0.1 - 0.01 <= events[0].began_s < events[0].ended_s, events[0]
    assert events[2].ended_s < 30
    injector.write(tmp_path)
    assert (tmp_path / "faults.json").is_file()


def test_an_origin_learnt_late_shifts_the_faults_and_keeps_their_length() -> None:
    """The loadgens' second 0 was 2 s before the injector learnt it (a slow first read of their
    progress): the fault due at 0.5 s begins at once and still lasts its 0.4 s."""
    spec = parse_spec(
        {
            **BASE,
            "run": {"duration_s": 60},
            "faults": [{"at_s": 0.5, "action": "stop", "target": "server-0", "for_s": 0.4}],
        }
    )
    targets = Recorder()
    origin = targets.started - 2.0
    injector = FaultInjector(spec.faults, targets, lambda: origin).start()
    deadline = time.monotonic() + 20
    while len(targets.calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    (event,) = injector.stop()
    assert [what for what, _, _ in targets.calls] == ["stop", "resume"]
    assert event.began_s >= 2.0
    # its 0.4 s, less what a busy machine delays the thread at the start (a fault whose end was
    # not shifted too would end at once); no upper bound: a late wake-up only lengthens it
    assert event.ended_s - event.began_s >= 0.2, event


def test_a_restart_not_yet_due_is_not_done_after_the_run() -> None:
    spec = parse_spec(
        {
            **BASE,
            "run": {"duration_s": 60},
            "faults": [{"at_s": 0, "action": "restart", "target": "server-0", "for_s": 50}],
        }
    )
    targets = Recorder()
    injector = FaultInjector(spec.faults, targets, lambda: targets.started).start()
    deadline = time.monotonic() + 20
    while not targets.calls and time.monotonic() < deadline:
        time.sleep(0.05)
    events = injector.stop()
    assert [what for what, _, _ in targets.calls] == ["kill"]
    assert events[0].note == "the run ended before its restart"


PROGRESS = (
    "[RUN #1  {pct}%, {second:3d} secs]  2 threads:       {ops} ops,     {rate} (avg:     1000) "
    "ops/sec, 0.500 (avg: 0.500) msec latency, {p99:.3f} p99 msec, {errors} errors"
)


def write_log(path: Path, seconds: list[tuple[int, float, float, int]]) -> Path:
    lines = ["starting"]
    for second, rate, p99, errors in seconds:
        lines.append(
            PROGRESS.format(pct=10, second=second, ops=1, rate=rate, p99=p99, errors=errors)
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_timeline_sums_instances_and_counts_errors_per_second(tmp_path: Path) -> None:
    a = write_log(tmp_path / "a.log", [(1, 100, 1.0, 0), (2, 100, 2.0, 3), (3, 100, 1.0, 3)])
    b = write_log(tmp_path / "b.log", [(1, 50, 4.0, 1), (2, 50, 1.0, 1)])
    assert read_timeline([a, b]) == [Second(1, 150, 4.0, 1), Second(2, 150, 2.0, 3)]


def steady_then_stopped() -> list[Second]:
    """1000 ops/s, a server stopped from 5 s to 8 s (nothing completes, errors at 6 s), then
    a second at half speed and back to full."""
    rates = {6: 0, 7: 0, 8: 0, 9: 500}
    return [
        Second(s, rates.get(s, 1000), 50.0 if s in rates else 1.0, 4 if s == 6 else 0)
        for s in range(1, 15)
    ]


def test_time_to_detect_and_to_recover() -> None:
    event = FaultEvent("server-0", "stop", 5, 3, began_s=5.0, ended_s=8.0)
    r = recovery(steady_then_stopped(), event, warmup_s=1)
    assert r.before_ops_per_s == pytest.approx(1000)
    assert r.detect_s == pytest.approx(1.0)  # the second ending at 6 s
    assert r.recover_s == pytest.approx(2.0)  # 9 s is at half speed, 10 s is back
    assert fault_columns([r]) == {
        "fault": "stop server-0",
        "fault_detect_s": r.detect_s,
        "fault_recover_s": r.recover_s,
    }


def test_a_fault_never_recovered_from_has_no_recovery_time() -> None:
    timeline = [Second(s, 1000 if s <= 5 else 0, 1.0, 0) for s in range(1, 12)]
    event = FaultEvent("server-0", "kill", 5, 0, began_s=5.0, ended_s=5.0)
    r = recovery(timeline, event, warmup_s=1)
    assert r.detect_s == pytest.approx(1.0)
    assert math.isnan(r.recover_s)
