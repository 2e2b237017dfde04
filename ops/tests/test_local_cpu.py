"""The per-process CPU sampler on a real process, read back through cachelab.results.cpu."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from cachelab.local.cpu import ProcessCpuSampler, process_cpu_s
from cachelab.results import MeasuredInterval
from cachelab.results.cpu import measured_cpu, read_cpu_samples

BUSY = "import time\nend = time.time() + 3\nwhile time.time() < end:\n    pass\n"


def test_sampler_records_a_busy_process_and_skips_a_gone_one(tmp_path: Path) -> None:
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)
    path = tmp_path / "cpu.csv"
    origin_ms = time.time() * 1000.0
    sampler = ProcessCpuSampler(
        path, lambda: [("loadgen", "busy", busy.pid), ("server", "gone", gone.pid)], 0.2
    ).start()
    try:
        busy.wait(timeout=60)
    finally:
        sampler.stop()
        if busy.poll() is None:
            busy.kill()
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
