"""`metadata.json`: where and with what an experiment ran (git sha, tool versions, host facts,
the command line and run settings), and the host's load before and after, so a noisy run is
visible in the report (`cachelab.results.noise`)."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from cachelab import __version__
from cachelab.results.errors import ResultsError
from cachelab.results.layout import write_json
from cachelab.results.records import iso_now


def _command_output(argv: list[str], timeout_s: float = 10.0) -> str | None:
    """First non-empty line of a command's output, or None if it cannot run or fails."""
    if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    for line in (done.stdout + done.stderr).splitlines():
        if line.strip():
            return line.strip()
    return None


def _git(root: Path, *args: str) -> str | None:
    return _command_output(["git", "-C", str(root), *args])


def _sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_first(path: str, prefix: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def host_facts() -> dict[str, Any]:
    """Facts about this machine; each one tolerates a missing /proc file."""
    load: list[float] | None
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "kernel": platform.release(),
        "cpu_count": os.cpu_count(),
        "cpu_model": _read_first("/proc/cpuinfo", "model name"),
        "memory_total": _read_first("/proc/meminfo", "MemTotal"),
        "load_avg": load,
        "python": platform.python_version(),
    }


def collect_metadata(
    root: Path,
    java: str | None = None,
    jars: dict[str, Path] | None = None,
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Git sha, tool versions, host facts and the command line of a run started from repository
    `root`; `settings` holds the run's own knobs (bandwidth profile, monitor settings, target).
    """
    sha = _git(root, "rev-parse", "HEAD")
    dirty = _command_output(["git", "-C", str(root), "status", "--porcelain"])
    tools: dict[str, str | None] = {
        "cachelab": __version__,
        "memcached": _command_output(["memcached", "-V"]),
        "redis-server": _command_output(["redis-server", "--version"]),
    }
    if java:
        tools["java"] = _command_output([java, "-version"])
    return {
        "created": iso_now(),
        "git": {
            "sha": sha,
            "branch": _git(root, "rev-parse", "--abbrev-ref", "HEAD"),
            "dirty": dirty is not None if sha else None,
        },
        "tools": tools,
        "jars": {
            name: {"path": str(path), "sha256": _sha256(path)}
            for name, path in (jars or {}).items()
        },
        "host": host_facts(),
        "command_line": list(sys.argv),
        "settings": dict(settings or {}),
    }


def _load_avg() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def finish_metadata(path: Path) -> None:
    """Add the host's load average at the end of the experiment (`host_after`) to metadata.json
    and record the command (`commands`). Called by a runner once per invocation, when its last
    run is done or it was interrupted (a resumed run adds its own command)."""
    data = read_metadata(path)
    data["host_after"] = {"time": iso_now(), "load_avg": _load_avg()}
    write_json(path, data)
    record_command(path)


def record_command(path: Path, argv: list[str] | None = None) -> None:
    """Append a command that wrote to the results folder to metadata.json's `commands` (its
    command line, when it ended and the load average then); `command_line` stays the first."""
    data = read_metadata(path)
    previous = data.get("commands")
    commands: list[Any] = previous if isinstance(previous, list) else []
    commands.append(
        {
            "command_line": list(sys.argv if argv is None else argv),
            "time": iso_now(),
            "load_avg": _load_avg(),
        }
    )
    data["commands"] = commands
    write_json(path, data)


def update_metadata(path: Path, changes: dict[str, Any]) -> None:
    """Set top-level keys of metadata.json (e.g. settings known only once a monitor started)."""
    data = read_metadata(path)
    data.update(changes)
    write_json(path, data)


def read_metadata(path: Path) -> dict[str, Any]:
    """metadata.json as a dict ({} when the file is absent); malformed JSON raises."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path}: not valid JSON ({error.msg})") from None
    return data if isinstance(data, dict) else {}
