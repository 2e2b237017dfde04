"""Samples the CPU time of every process a local run started, from /proc (results/cpu.py has
the file format and the reader).

`ProcessCpuSampler` runs on its own thread while the loadgens measure: every `period_s` it reads
utime + stime of each listed process from `/proc/<pid>/stat` (all threads of the process), the
time its threads spent runnable but waiting for a CPU (the 2nd field of
`/proc/<pid>/task/<tid>/schedstat`, summed over its threads, an exited one with its last
reading), the CPU time and run-queue wait of its worker-pool threads (threads named
`worker-<n>`, the middleware's), the same two for its threads on a request's path
(`REQUEST_PATH_THREAD`: the loadgen's event loops, the middleware's net thread or event loops
(`event-loop-<n>`) and workers,
memcached's workers, redis's main thread), and the whole machine's busy time from `/proc/stat`
(role `host`: every process, also other people's), and appends one row each to the run's
`cpu.csv`. A process that has exited is skipped; a kernel without schedstat leaves the wait
columns empty.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachelab.results.cpu import CpuSample, CpuSampleWriter

CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SAMPLE_PERIOD_S = 0.5

# (role, name, pid) of a process to sample
ProcessRef = tuple[str, str, int]


HOST_ROLE, HOST_NAME = "host", "all processes"
# the middleware's worker threads (Middleware.java names them worker-<n>)
WORKER_THREAD = re.compile(r"worker-\d+")
# threads a request passes through (Loadgen's BenchmarkRun names its event loops
# loadgen-<run>-<thread>); the others (JIT compilers, GC, stats reporters, memcached's LRU
# maintainer) work off any request's path
REQUEST_PATH_THREAD = re.compile(
    r"loadgen-\d+-\d+|net|event-loop-\d+|worker-\d+|mc-worker|redis-server"
)


def host_cpu_s() -> float | None:
    """CPU seconds the whole machine has been busy (every process, this experiment's and
    everyone else's): user + nice + system + irq + softirq + steal of /proc/stat's `cpu` line."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if not first or first[0] != "cpu":
        return None
    try:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in first[1:9])
    except ValueError:
        return None
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS_PER_S


def process_cpu_s(pid: int) -> float | None:
    """Cumulative user + system CPU seconds of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = text[text.rfind(")") + 2 :].split()
    try:
        utime, stime = int(fields[11]), int(fields[12])
    except (IndexError, ValueError):
        return None
    return (utime + stime) / CLOCK_TICKS_PER_S


@dataclass(frozen=True)
class ThreadTimes:
    """Cumulative run-queue wait of a process's threads, and CPU time and wait of its
    worker-pool threads (seconds; None where /proc does not say)."""

    wait_s: float | None
    pool_cpu_s: float | None
    pool_wait_s: float | None
    path_cpu_s: float | None = None
    path_wait_s: float | None = None
    pool_slices: int | None = None  # times the worker-pool threads were put on a CPU


def _task_cpu_s(task: Path) -> float | None:
    try:
        text = (task / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_PER_S
    except (IndexError, ValueError):
        return None


def _task_schedstat(task: Path) -> tuple[float, int] | None:
    """(run-queue wait in seconds, times put on a CPU) of one thread; None without schedstat."""
    try:
        fields = (task / "schedstat").read_text().split()
        return int(fields[1]) / 1e9, int(fields[2])
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True)
class _TaskReading:
    """The last /proc reading of one thread: its cumulative run-queue wait, times put on a CPU
    and CPU time (None where /proc did not say), and whether it is a pool or request-path thread."""

    wait_s: float | None
    slices: int | None
    cpu_s: float | None
    pool: bool
    path: bool


def _read_task(task: Path) -> _TaskReading | None:
    schedstat = _task_schedstat(task)
    try:
        name = (task / "comm").read_text().strip()
    except OSError:
        return None
    pool = WORKER_THREAD.fullmatch(name) is not None
    path = REQUEST_PATH_THREAD.fullmatch(name) is not None
    return _TaskReading(
        schedstat[0] if schedstat is not None else None,
        schedstat[1] if schedstat is not None else None,
        _task_cpu_s(task) if pool or path else None,
        pool,
        path,
    )


def _add(total: float | None, value: float | None) -> float | None:
    return total if value is None else (total or 0.0) + value


def thread_times(pid: int, seen: dict[int, _TaskReading] | None = None) -> ThreadTimes:
    """Run-queue wait summed over a process's threads, and the CPU time and wait of its
    `worker-<n>` threads and of its request-path threads (None when the process is gone or the
    kernel has no schedstat).

    `seen` (the caller's, one per process, kept between calls) remembers every thread's last
    reading, so a thread that has exited still counts with what it had: summed over the live
    threads only, the totals would fall when a thread ends and a window's difference could be
    negative."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return ThreadTimes(None, None, None)
    readings = seen if seen is not None else {}
    for task in tasks:
        reading = _read_task(task)
        if reading is not None and task.name.isdigit():
            readings[int(task.name)] = reading
    wait: float | None = None
    pool_cpu: float | None = None
    pool_wait: float | None = None
    path_cpu: float | None = None
    path_wait: float | None = None
    pool_slices: int | None = None
    for reading in readings.values():
        wait = _add(wait, reading.wait_s)
        if reading.pool:
            pool_cpu = _add(pool_cpu, reading.cpu_s)
            pool_wait = _add(pool_wait, reading.wait_s)
            if reading.slices is not None:
                pool_slices = (pool_slices or 0) + reading.slices
        if reading.path:
            path_cpu = _add(path_cpu, reading.cpu_s)
            path_wait = _add(path_wait, reading.wait_s)
    return ThreadTimes(wait, pool_cpu, pool_wait, path_cpu, path_wait, pool_slices)


class ProcessCpuSampler:
    """Writes CPU samples of `processes()` to `path` until stopped. Started and stopped by the
    runner's thread; the sampling runs on the sampler's own daemon thread."""

    def __init__(
        self,
        path: Path,
        processes: Callable[[], Sequence[ProcessRef]],
        period_s: float = SAMPLE_PERIOD_S,
    ) -> None:
        self.path = path
        self.processes = processes
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)
        self._writer: CpuSampleWriter | None = None
        # per process, the last reading of every thread seen (thread_times)
        self._threads: dict[int, dict[int, _TaskReading]] = {}

    def start(self) -> ProcessCpuSampler:
        self._writer = CpuSampleWriter(self.path)
        self._sample()
        self._thread.start()
        return self

    def stop(self) -> None:
        """Take a last sample and close the file (at most one period's wait)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10 * self.period_s + 5.0)
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            self._sample()
        self._sample()

    def _sample(self) -> None:
        writer = self._writer
        if writer is None:
            return
        now_ms = time.time() * 1000.0
        rows = []
        busy_s = host_cpu_s()
        if busy_s is not None:
            rows.append(CpuSample(now_ms, HOST_ROLE, HOST_NAME, 0, busy_s))
        for role, name, pid in self.processes():
            cpu_s = process_cpu_s(pid)
            if cpu_s is not None:
                times = thread_times(pid, self._threads.setdefault(pid, {}))
                rows.append(
                    CpuSample(
                        now_ms,
                        role,
                        name,
                        pid,
                        cpu_s,
                        _or_nan(times.wait_s),
                        _or_nan(times.pool_cpu_s),
                        _or_nan(times.pool_wait_s),
                        _or_nan(times.path_cpu_s),
                        _or_nan(times.path_wait_s),
                        _or_nan(times.pool_slices),
                    )
                )
        writer.write(rows)


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
