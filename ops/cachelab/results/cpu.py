"""Per-process CPU samples of a run: `raw/p<point>-r<rep>/cpu.csv`.

Columns
`epoch_ms,role,name,pid,cpu_s,wait_s,pool_cpu_s,pool_wait_s,path_cpu_s,path_wait_s,pool_slices`.
`cpu_s` is the process's cumulative user + system CPU time in seconds (all its threads;
/proc/<pid>/stat utime + stime locally, the scraped `process_cpu_seconds_total` / container
counters on Kubernetes). `wait_s` is its threads' cumulative time runnable but waiting for a
CPU (schedstat run delay, summed over the live threads). `pool_cpu_s` and `pool_wait_s` are the
same two for its worker-pool threads (the middleware's `worker-<n>`), `path_cpu_s` and
`path_wait_s` for its threads on a request's path (local/cpu.py names them); `pool_slices` is
how many times its worker-pool threads were put on a CPU (3rd field of schedstat), so
pool_wait_s / pool_slices is their mean wait per wake-up. The last six are empty where not
measured (Kubernetes, a kernel without schedstat, a process without such
threads, files written before they existed). `role` is one of `loadgen`, `middleware`,
`server`, or `host` for the whole machine's busy time (/proc/stat, every process including
other people's; name `all processes`); `name` tells the processes apart. A process's
utilisation over the measured interval is its CPU seconds per wall second (cores).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from cachelab.results.errors import ResultsError
from cachelab.results.memtier import number, optional_number
from cachelab.results.trim import MeasuredInterval

CPU_COLUMNS = ("epoch_ms", "role", "name", "pid", "cpu_s")
THREAD_COLUMNS = (
    "wait_s",
    "pool_cpu_s",
    "pool_wait_s",
    "path_cpu_s",
    "path_wait_s",
    "pool_slices",
)


@dataclass(frozen=True)
class CpuSample:
    """One reading of one process's cumulative CPU time."""

    epoch_ms: float
    role: str
    name: str
    pid: int
    cpu_s: float
    wait_s: float = math.nan
    pool_cpu_s: float = math.nan
    pool_wait_s: float = math.nan
    path_cpu_s: float = math.nan
    path_wait_s: float = math.nan
    pool_slices: float = math.nan  # times the worker-pool threads were put on a CPU (schedstat)


@dataclass(frozen=True)
class ProcessCpu:
    """One process's CPU use over the measured interval (per wall second; NaN if not sampled)."""

    role: str
    name: str
    cores: float  # CPU seconds per wall second
    seconds: float  # wall seconds the two samples span
    wait_cores: float = math.nan  # run-queue wait seconds per wall second, all threads
    pool_cores: float = math.nan  # CPU seconds per wall second of the worker-pool threads
    pool_wait_cores: float = math.nan  # run-queue wait per wall second of those threads
    path_cores: float = math.nan  # CPU seconds per wall second of the request-path threads
    path_wait_cores: float = math.nan  # run-queue wait per wall second of those threads
    pool_slices_per_s: float = math.nan  # worker-pool threads put on a CPU, per wall second


class CpuSampleWriter:
    """Appends samples to cpu.csv (header first). Called from the sampler's own thread only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: TextIO = path.open("w", newline="")
        self._writer = csv.writer(self._handle)
        self._writer.writerow(CPU_COLUMNS + THREAD_COLUMNS)

    def write(self, samples: Sequence[CpuSample]) -> None:
        for s in samples:
            self._writer.writerow(
                [f"{s.epoch_ms:.0f}", s.role, s.name, s.pid, f"{s.cpu_s:.3f}"]
                + [
                    _seconds(v)
                    for v in (s.wait_s, s.pool_cpu_s, s.pool_wait_s, s.path_cpu_s, s.path_wait_s)
                ]
                + [f"{s.pool_slices:.0f}" if math.isfinite(s.pool_slices) else ""]
            )
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def read_cpu_samples(path: Path) -> list[CpuSample]:
    """Every sample of a cpu.csv ([] when the file is absent)."""
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CPU_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ResultsError(f"{path}: missing columns {missing}")
        return [
            CpuSample(
                epoch_ms=number(row["epoch_ms"]),
                role=str(row["role"]),
                name=str(row["name"]),
                pid=int(number(row["pid"])),
                cpu_s=number(row["cpu_s"]),
                wait_s=optional_number(row, "wait_s"),
                pool_cpu_s=optional_number(row, "pool_cpu_s"),
                pool_wait_s=optional_number(row, "pool_wait_s"),
                path_cpu_s=optional_number(row, "path_cpu_s"),
                path_wait_s=optional_number(row, "path_wait_s"),
                pool_slices=optional_number(row, "pool_slices"),
            )
            for row in reader
        ]


def measured_cpu(
    samples: Sequence[CpuSample], origin_epoch_ms: float, interval: MeasuredInterval
) -> list[ProcessCpu]:
    """Per process, the CPU seconds per second between its first sample at or after the
    interval's start and its last one at or before the end (processes with fewer than two
    samples in the interval are left out)."""
    low, high = interval.epoch_bounds_ms(origin_epoch_ms)
    by_name: dict[str, list[CpuSample]] = {}
    for sample in samples:
        if low <= sample.epoch_ms <= high:
            by_name.setdefault(sample.name, []).append(sample)
    found = []
    for name, rows in sorted(by_name.items()):
        rows.sort(key=lambda s: s.epoch_ms)
        first, last = rows[0], rows[-1]
        wall_s = (last.epoch_ms - first.epoch_ms) / 1000.0
        if len(rows) < 2 or wall_s <= 0:
            continue
        found.append(
            ProcessCpu(
                first.role,
                name,
                max(0.0, last.cpu_s - first.cpu_s) / wall_s,
                wall_s,
                _rate(rows, "wait_s"),
                _rate(rows, "pool_cpu_s"),
                _rate(rows, "pool_wait_s"),
                _rate(rows, "path_cpu_s"),
                _rate(rows, "path_wait_s"),
                _rate(rows, "pool_slices"),
            )
        )
    return found


def _rate(rows: Sequence[CpuSample], column: str) -> float:
    """A thread column's increase per wall second between its first and last measured sample
    (NaN with fewer than two: a thread that did not exist yet, a kernel without schedstat)."""
    found = [r for r in rows if math.isfinite(getattr(r, column))]
    if len(found) < 2 or found[-1].epoch_ms <= found[0].epoch_ms:
        return math.nan
    increase = float(getattr(found[-1], column)) - float(getattr(found[0], column))
    return increase / ((found[-1].epoch_ms - found[0].epoch_ms) / 1000.0)


def _seconds(value: float) -> str:
    return f"{value:.6f}" if math.isfinite(value) else ""
