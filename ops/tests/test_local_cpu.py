"""The per-process CPU sampler on a real process, read back through cachelab.results.cpu."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

from cachelab.local.cpu import (
    REQUEST_PATH_THREAD,
    ProcessCpuSampler,
    _TaskReading,
    process_cpu_s,
    thread_times,
)
from cachelab.results import MeasuredInterval
from cachelab.results.cpu import measured_cpu, read_cpu_samples


def sample_until_exit(
    path: Path, busy: subprocess.Popen[bytes], processes: list[tuple[str, str, int]]
) -> float:
    """Samples `processes` (role, name, pid) into `path` every 0.2 s until `busy` exits (60 s at
    the most, then it is killed); the epoch ms the sampling started."""
    origin_ms = time.time() * 1000.0
    sampler = ProcessCpuSampler(path, lambda: processes, 0.2).start()
    try:
        busy.wait(timeout=60)
    finally:
        sampler.stop()
        if busy.poll() is None:
            busy.kill()
    return origin_ms


BUSY = "import time\nend = time.time() + 3\nwhile time.time() < end:\n    pass\n"


def test_sampler_records_a_busy_process_and_skips_a_gone_one(tmp_path: Path) -> None:
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)
    path = tmp_path / "cpu.csv"
    origin_ms = sample_until_exit(
        path, busy, [("loadgen", "busy", busy.pid), ("server", "gone", gone.pid)]
    )
    everything = read_cpu_samples(path)
    assert {s.name for s in everything} == {"busy", "all processes"}  # the host's busy time
    assert all(s.role == "host" for s in everything if s.name == "all processes")
    samples = [s for s in everything if s.name == "busy"]
    assert all(s.role == "loadgen" and s.pid == busy.pid for s in samples)
    assert [s.cpu_s for s in samples] == sorted(s.cpu_s for s in samples)  # cumulative
    used = measured_cpu(everything, origin_ms, MeasuredInterval(0, 60))
    assert [p.name for p in used] == ["all processes", "busy"]
    assert all(p.cores > 0 for p in used)


def test_cpu_of_a_missing_process_is_none() -> None:
    done = subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert done.returncode == 0
    assert process_cpu_s(2**22 + 12345) is None


POOL = """import threading, time
def work() -> None:
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as comm:
        comm.write("worker-0")
    end = time.time() + 3
    while time.time() < end:
        pass
thread = threading.Thread(target=work)
thread.start()
thread.join()
"""


def test_sampler_records_run_queue_wait_and_the_worker_threads(tmp_path: Path) -> None:
    # a process whose one busy thread is named like the middleware's workers: its CPU shows up
    # both as the process's and as the pool's, and the schedstat wait columns are filled
    busy = subprocess.Popen([sys.executable, "-c", POOL])
    path = tmp_path / "cpu.csv"
    origin_ms = sample_until_exit(path, busy, [("middleware", "mw", busy.pid)])
    samples = [s for s in read_cpu_samples(path) if s.name == "mw"]
    assert len(samples) >= 2
    assert all(math.isfinite(s.wait_s) and s.wait_s >= 0 for s in samples)
    assert any(math.isfinite(s.pool_cpu_s) for s in samples)
    used = {
        p.name: p for p in measured_cpu(read_cpu_samples(path), origin_ms, MeasuredInterval(0, 60))
    }
    mw = used["mw"]
    # the worker is most of it; not more than the process (a generous margin: the process and its
    # threads are read one after the other, so each window's ends differ a little under load)
    assert mw.pool_cores > 0 and mw.pool_cores <= 1.5 * mw.cores + 0.05
    assert mw.wait_cores >= 0 and mw.pool_wait_cores >= 0
    # worker-<n> is on a request's path too
    assert mw.path_cores >= mw.pool_cores - 0.05 and mw.path_wait_cores >= 0
    # the times the worker was put on a CPU (schedstat's 3rd field) are counted
    assert any(math.isfinite(s.pool_slices) for s in samples) and mw.pool_slices_per_s > 0


def test_cpu_files_without_the_thread_columns_read_as_not_measured(tmp_path: Path) -> None:
    path = tmp_path / "cpu.csv"
    path.write_text("epoch_ms,role,name,pid,cpu_s\n1000,loadgen,lg,7,1.0\n2000,loadgen,lg,7,1.5\n")
    samples = read_cpu_samples(path)
    assert all(math.isnan(s.wait_s) and math.isnan(s.pool_cpu_s) for s in samples)
    (used,) = measured_cpu(samples, 0.0, MeasuredInterval(0, 60))
    assert used.cores == 0.5 and math.isnan(used.wait_cores) and math.isnan(used.pool_cores)


# a worker-<n> thread says it is named, spins 0.3 s and ends; the process then waits for a
# line on stdin
ENDING_WORKER = """import sys, threading, time
def work() -> None:
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as comm:
        comm.write("worker-0")
    print("started", flush=True)
    end = time.time() + 0.3
    while time.time() < end:
        pass
thread = threading.Thread(target=work)
thread.start()
thread.join()
print("ended", flush=True)
sys.stdin.readline()
"""


def test_a_thread_that_ends_keeps_its_times_in_the_totals() -> None:
    # summed over live threads only, the pool's CPU time fell to nothing when its thread ended,
    # and a window's run-queue wait could come out negative (seen under load: -0.037 cores)
    proc = subprocess.Popen(
        [sys.executable, "-c", ENDING_WORKER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "started"
        seen: dict[int, _TaskReading] = {}
        during = thread_times(proc.pid, seen)
        assert proc.stdout.readline().strip() == "ended"
        after = thread_times(proc.pid, seen)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert during.pool_cpu_s is not None and after.pool_cpu_s is not None
    assert after.pool_cpu_s >= during.pool_cpu_s
    assert during.wait_s is not None and after.wait_s is not None
    assert after.wait_s >= during.wait_s
    # without a memory of earlier readings only the live threads count
    assert thread_times(os.getpid()).pool_cpu_s is None


def test_remembered_readings_of_gone_threads_are_added() -> None:
    gone = _TaskReading(wait_s=5.0, slices=7, cpu_s=2.0, pool=True, path=True)
    times = thread_times(os.getpid(), {2**22 + 54321: gone})
    assert times.wait_s is not None and times.wait_s >= 5.0
    assert times.pool_cpu_s == 2.0 and times.pool_wait_s == 5.0 and times.pool_slices == 7
    assert times.path_cpu_s is not None and times.path_cpu_s >= 2.0


def test_the_middlewares_event_loops_are_on_a_requests_path() -> None:
    for name in ("net", "event-loop-0", "event-loop-12", "worker-3", "loadgen-1-0", "mc-worker"):
        assert REQUEST_PATH_THREAD.fullmatch(name), name
    for name in ("event-loop-", "stats-reporter", "backend-watchdog", "C2 CompilerThre"):
        assert not REQUEST_PATH_THREAD.fullmatch(name), name
