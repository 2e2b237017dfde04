"""A search run as a user stops it: `cachelab search` started as a process and interrupted
(SIGINT) once its search.csv holds a step, for the resume tests locally and on the cluster."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def interrupt_after_first_step(
    args: list[str], results: Path, csv_glob: str, wait_s: float, exit_s: float
) -> tuple[int, str]:
    """Runs `cachelab ARGS`, sends SIGINT once a `results/CSV_GLOB` file has a row (or after
    `wait_s`, or when it exits), and returns its exit code and output (waited up to `exit_s`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cachelab.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and process.poll() is None:
        found = list(results.glob(csv_glob))
        if found and len(read_csv(found[0])) >= 1:
            break
        time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=exit_s)
    return process.returncode, out
