"""Faults as experiment steps: the spec's `faults` carried out on a run's processes, on time.

`FaultInjector` is a thread started once a run's loadgens are running. It learns when their
second 0 was (`origin`, from their first progress line), then at each fault's `at_s` begins it
and at `at_s + for_s` ends it through a `FaultTargets` (the local runner's processes: signals,
a new process, tc on the loopback device). `stop` (the runner's thread, when the loadgens have
exited or the run is interrupted) ends every fault still in force, so no process stays stopped
and no shaping stays installed, and returns what happened (`faults.json`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from cachelab.results import write_json
from cachelab.spec import Fault

FAULTS_FILE = "faults.json"
ORIGIN_TIMEOUT_S = 60.0


class FaultTargets(Protocol):
    """What a target platform does for each action. Called from the injector's thread."""

    def stop(self, target: str) -> int: ...  # SIGSTOP; returns the pid

    def resume(self, target: str) -> None: ...  # SIGCONT

    def kill(self, target: str) -> int: ...  # SIGKILL; returns the pid

    def start_again(self, target: str) -> int: ...  # a new process, ready; returns its pid

    def slow(self, target: str, mbit: float) -> None: ...

    def unslow(self, target: str) -> None: ...


@dataclass
class FaultEvent:
    """One fault as it happened (seconds after the loadgens' second 0; NaN: did not happen)."""

    target: str
    action: str
    at_s: float
    for_s: float
    began_s: float = float("nan")
    ended_s: float = float("nan")
    pid: int = 0
    note: str = ""


class FaultInjector:
    """Carries out `faults` against `targets`; see the module docstring."""

    def __init__(
        self,
        faults: Sequence[Fault],
        targets: FaultTargets,
        origin: Callable[[], float | None],
    ) -> None:
        self.faults = list(faults)
        self.targets = targets
        self.origin = origin  # monotonic time of the loadgens' second 0, None until known
        self.events = [FaultEvent(f.target, f.action, f.at_s, f.for_s) for f in self.faults]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._in_force: set[int] = set()
        self._origin_s: float | None = None
        self._thread = threading.Thread(target=self._run, name="fault-injector", daemon=True)

    def start(self) -> FaultInjector:
        self._thread.start()
        return self

    def _now_s(self) -> float:
        assert self._origin_s is not None
        return time.monotonic() - self._origin_s

    def _wait_origin(self) -> bool:
        deadline = time.monotonic() + ORIGIN_TIMEOUT_S
        while not self._stop.is_set() and time.monotonic() < deadline:
            origin = self.origin()
            if origin is not None:
                self._origin_s = origin
                return True
            self._stop.wait(0.1)
        return False

    def _schedule(self) -> list[tuple[float, int, bool]]:
        steps = []
        for k, fault in enumerate(self.faults):
            steps.append((fault.at_s, k, True))
            if fault.action != "kill":
                steps.append((fault.end_s, k, False))
        return sorted(steps)

    def _run(self) -> None:
        if not self._wait_origin():
            for event in self.events:
                event.note = "the loadgens never reported their start"
            return
        schedule = self._schedule()
        # an origin learnt after the first fault was due (a slow first read of the loadgens'
        # progress) shifts every fault by as much, so each still lasts its for_s
        late_s = max(0.0, self._now_s() - schedule[0][0]) if schedule else 0.0
        for at_s, k, begin in schedule:
            if self._stop.wait(max(0.0, at_s + late_s - self._now_s())):
                return
            with self._lock:
                if self._stop.is_set():
                    return
                self._begin(k) if begin else self._end(k)

    def _begin(self, k: int) -> None:
        fault, event = self.faults[k], self.events[k]
        try:
            if fault.action == "stop":
                event.pid = self.targets.stop(fault.target)
            elif fault.action in ("kill", "restart"):
                event.pid = self.targets.kill(fault.target)
            else:
                self.targets.slow(fault.target, fault.rate_mbit)
        except Exception as error:  # a target that is gone: say so in faults.json
            event.note = f"{fault.action} failed: {error}"
            return
        event.began_s = self._now_s()
        if fault.action == "kill":
            event.ended_s = event.began_s
        else:
            self._in_force.add(k)

    def _end(self, k: int) -> None:
        if k not in self._in_force:
            return
        fault, event = self.faults[k], self.events[k]
        self._in_force.discard(k)
        try:
            if fault.action == "stop":
                self.targets.resume(fault.target)
            elif fault.action == "restart":
                event.pid = self.targets.start_again(fault.target)
            else:
                self.targets.unslow(fault.target)
        except Exception as error:
            event.note = f"ending {fault.action} failed: {error}"
        event.ended_s = self._now_s()

    def stop(self) -> list[FaultEvent]:
        """End every fault still in force (a stopped process continues, shaping goes; a target
        whose restart had not come yet stays down) and stop the thread."""
        with self._lock:
            self._stop.set()
            for k in sorted(self._in_force):
                if self.faults[k].action == "restart":
                    self._in_force.discard(k)
                    self.events[k].note = "the run ended before its restart"
                    continue
                self._end(k)
        self._thread.join(timeout=30.0)
        return self.events

    def write(self, run_dir: Path) -> Path:
        path = run_dir / FAULTS_FILE
        write_json(path, [_json(e) for e in self.events])
        return path


def _json(event: FaultEvent) -> dict[str, Any]:
    data = asdict(event)
    for key in ("began_s", "ended_s"):
        if data[key] != data[key]:  # NaN is not JSON
            data[key] = None
    return data
