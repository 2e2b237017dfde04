"""The faults' targets in a local run: the server and middleware processes of cachelab.local.

`LocalFaultTargets` signals a target's process group (SIGSTOP, SIGCONT, SIGKILL), starts a killed
target again with its own command line on its own port (a server answers, a middleware prints
its listening line), and slows a target by shaping its port on the loopback device with tc
(both directions, for the fault's duration). Called from the injector's thread; `current`
from the runner's thread once the injector has stopped.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cachelab.local.shaping import Link, LoopbackShaper, ShapingError
from cachelab.processes import ManagedProcess, ProcessSet
from cachelab.spec import Fault, Spec
from cachelab.terminal import last_progress


@dataclass
class FaultProcess:
    """One process a fault can hit: its process, its port and how to tell it is ready."""

    proc: ManagedProcess
    port: int
    ready: Callable[[ManagedProcess], None]
    restarts: int = 0


@dataclass
class LocalFaultTargets:
    """Targets by name (`server-0`, `middleware-1`), the process set new ones join."""

    procs: ProcessSet
    targets: dict[str, FaultProcess]
    killed: set[str] = field(default_factory=set)
    _shapers: dict[str, LoopbackShaper] = field(default_factory=dict)

    def _target(self, name: str) -> FaultProcess:
        return self.targets[name]

    def stop(self, target: str) -> int:
        proc = self._target(target).proc
        proc.signal_group(signal.SIGSTOP)
        return proc.pid

    def resume(self, target: str) -> None:
        self._target(target).proc.signal_group(signal.SIGCONT)

    def kill(self, target: str) -> int:
        proc = self._target(target).proc
        proc.signal_group(signal.SIGKILL)
        self.killed.add(target)
        return proc.pid

    def start_again(self, target: str) -> int:
        entry = self._target(target)
        old = entry.proc
        entry.restarts += 1
        log = old.log_path.with_name(f"{old.log_path.stem}-restart{entry.restarts}.log")
        proc = self.procs.start(old.name, old.argv, log)
        entry.ready(proc)
        entry.proc = proc
        self.killed.discard(target)
        return proc.pid

    def slow(self, target: str, mbit: float) -> None:
        port = self._target(target).port
        rate = max(1, round(mbit))
        shaper = LoopbackShaper()
        shaper.apply(
            [
                Link(f"{target} out (fault)", "sport", (port,), rate),
                Link(f"-> {target} (fault)", "dport", (port,), rate),
            ]
        )
        self._shapers[target] = shaper

    def unslow(self, target: str) -> None:
        shaper = self._shapers.pop(target, None)
        if shaper is not None:
            shaper.clear()

    def current(self, target: str) -> ManagedProcess:
        """The target's process now (a restarted one's new process)."""
        return self._target(target).proc


def check_local_faults(spec: Spec, bandwidth: str) -> None:
    """Raises ShapingError (one line) when a `slow` fault cannot be shaped here."""
    slow = [f for f in spec.faults if f.action == "slow"]
    if not slow:
        return
    where = f"faults: slow on {slow[0].target}"
    if bandwidth != "off":
        raise ShapingError(f"{where} cannot be combined with --bandwidth (both shape lo)")
    try:
        LoopbackShaper().check()
    except ShapingError as error:
        raise ShapingError(f"{where}: {str(error).replace('--bandwidth', 'it')}") from None


def progress_origin(log: Path) -> Callable[[], float | None]:
    """When the loadgen writing `log` had its second 0 (monotonic), once it printed progress."""

    def origin() -> float | None:
        sample = last_progress(log)
        return None if sample is None else time.monotonic() - sample.second

    return origin


def targets_touched(faults: list[Fault], role: str) -> bool:
    """Whether a fault kills or restarts a target of `role` (its data or counters are gone)."""
    return any(f.role == role and f.action in ("kill", "restart") for f in faults)
