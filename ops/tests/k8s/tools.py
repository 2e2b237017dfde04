"""Locations of the Kubernetes test-tier tools (built by `make k8s-tools`) and a command runner."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cachelab.paths import repo_root, tools_dir

ROOT = repo_root()
TOOLS_BIN = tools_dir() / "bin"
CHART = ROOT / "charts" / "testbed"
MANIFESTS = ROOT / "manifests"
ETCD = Path("/usr/bin/etcd")


def tool(name: str) -> Path:
    """Path of a built tool; fails with the command that builds it."""
    path = TOOLS_BIN / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `make k8s-tools` (scripts/k8s-tools.sh)")
    return path


def run(
    args: list[str | Path],
    *,
    env: dict[str, str] | None = None,
    check: bool = True,
    timeout_s: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run a command, capture its output, and fail with that output if `check` and it failed."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [str(a) for a in args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"command failed ({proc.returncode}): {' '.join(map(str, args))}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc
