"""Local experiments as the end-to-end tests drive them: `cachelab run --target local` in a
child process, and what is left running afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_locally(spec: Path, results: Path, *overrides: str, timeout_s: float = 300) -> None:
    """`cachelab run SPEC --target local` with `--set` for each of `overrides`; it must succeed."""
    words = ["run", str(spec), "--target", "local", "--results", str(results)]
    for term in overrides:
        words += ["--set", term]
    done = subprocess.run(
        [sys.executable, "-m", "cachelab.cli", *words],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def start_locally(spec: Path, results: Path) -> subprocess.Popen[str]:
    """`cachelab run SPEC --target local` started in the background, its output on one pipe."""
    words = ["run", str(spec), "--target", "local", "--results", str(results)]
    return subprocess.Popen(
        [sys.executable, "-m", "cachelab.cli", *words],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes other than this one whose command line contains `text`."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        if int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline and alive(int(proc.name)):
            found.append(int(proc.name))
    return found
