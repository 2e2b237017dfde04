"""The results folder of one experiment (docs/interfaces.md §4).

```
results/<experiment>/<UTC timestamp>/
  spec.yaml  metadata.json  summary.csv  status.json
  raw/p<point>-r<rep>/ point.json loadgen-<i>.json loadgen-<i>.log middleware-<j>/ servers.json
  report/
```

`ResultsDir` creates and names the parts; `collect_metadata` records where and with what the
experiment ran (git sha, tool versions, host facts); `Status` is the progress record that is
rewritten after every run, so an interrupted experiment still says what it finished.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cachelab import __version__

if TYPE_CHECKING:
    from cachelab.spec import Point

RunStatus = Literal["ok", "partial", "failed"]
ExperimentState = Literal["running", "complete", "interrupted", "failed"]


def start_point_record(point: Point, repetition: int, **extra: Any) -> dict[str, Any]:
    """The point.json record of a run as it starts (failed until the runner says otherwise);
    `extra` holds a target's own fields. Called from a runner's thread."""
    return {
        "point": point.index,
        "repetition": repetition,
        "label": point.label(),
        "values": point.values,
        "spec": point.spec.model_dump(mode="json"),
        "status": "failed",
        "message": "",
        **extra,
        "started_epoch_ms": time.time() * 1000.0,
    }


def finish_point_record(
    run_dir: Path, record: dict[str, Any], status: RunStatus, message: str
) -> None:
    """Stamp a run's outcome and end time on its record and write point.json."""
    record["status"], record["message"] = status, message
    record["finished_epoch_ms"] = time.time() * 1000.0
    write_json(run_dir / "point.json", record)


def utc_stamp(now: dt.datetime | None = None) -> str:
    """A UTC timestamp usable as a folder name, e.g. 20261121T150600Z."""
    now = now or dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%dT%H%M%SZ")


def _iso_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(path)


class ResultsDir:
    """Paths of one experiment's results folder."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, base: Path, experiment: str, stamp: str | None = None) -> ResultsDir:
        """A new folder `base/<experiment>/<stamp>` (a suffix is added if it already exists)."""
        stamp = stamp or utc_stamp()
        path = base / experiment / stamp
        suffix = 1
        while path.exists():
            suffix += 1
            path = base / experiment / f"{stamp}-{suffix}"
        path.mkdir(parents=True)
        (path / "raw").mkdir()
        return cls(path)

    @property
    def spec_file(self) -> Path:
        return self.path / "spec.yaml"

    @property
    def metadata_file(self) -> Path:
        return self.path / "metadata.json"

    @property
    def summary_file(self) -> Path:
        return self.path / "summary.csv"

    @property
    def status_file(self) -> Path:
        return self.path / "status.json"

    @property
    def report_dir(self) -> Path:
        return self.path / "report"

    @property
    def raw_dir(self) -> Path:
        return self.path / "raw"

    def run_dir(self, point: int, repetition: int) -> Path:
        """`raw/p<point>-r<rep>/`, created on first use."""
        path = self.raw_dir / f"p{point}-r{repetition}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def run_dirs(self) -> list[Path]:
        """Every `raw/p*-r*` folder, in point then repetition order."""
        pattern = re.compile(r"^p(\d+)-r(\d+)$")
        found = []
        for child in self.raw_dir.iterdir() if self.raw_dir.is_dir() else []:
            match = pattern.match(child.name)
            if match and child.is_dir():
                found.append((int(match.group(1)), int(match.group(2)), child))
        return [path for _, _, path in sorted(found)]


@dataclass
class RunRecord:
    """Status of one point and repetition."""

    point: int
    repetition: int
    status: RunStatus
    message: str = ""


@dataclass
class Status:
    """The experiment's progress, written to status.json after every run."""

    experiment: str
    target: str
    runs_total: int
    state: ExperimentState = "running"
    started: str = field(default_factory=_iso_now)
    finished: str | None = None
    message: str = ""
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def runs_done(self) -> int:
        """Runs that finished ok (a partial or failed run is not done: --resume runs it again)."""
        return sum(r.status == "ok" for r in self.runs)

    def record(self, run: RunRecord) -> None:
        self.runs = [r for r in self.runs if (r.point, r.repetition) != (run.point, run.repetition)]
        self.runs.append(run)

    def finish(self, state: ExperimentState, message: str = "") -> None:
        self.state = state
        self.message = message
        self.finished = _iso_now()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["runs_done"] = self.runs_done
        data["runs_partial"] = sum(r.status == "partial" for r in self.runs)
        data["runs_failed"] = sum(r.status == "failed" for r in self.runs)
        return data

    def save(self, path: Path) -> None:
        write_json(path, self.to_json())

    @classmethod
    def load(cls, path: Path) -> Status:
        data = json.loads(path.read_text())
        for derived in ("runs_done", "runs_partial", "runs_failed"):
            data.pop(derived, None)
        data["runs"] = [RunRecord(**r) for r in data.get("runs", [])]
        return cls(**data)


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
    root: Path, java: str | None = None, jars: dict[str, Path] | None = None
) -> dict[str, Any]:
    """Git sha, tool versions and host facts of a run started from repository `root`."""
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
        "created": _iso_now(),
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
    }
