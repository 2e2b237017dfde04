"""Where everything of one experiment lives (docs/interfaces.md §4).

```
results/<experiment>/<UTC timestamp>/
  spec.yaml  metadata.json  summary.csv  status.json
  raw/p<point>-r<rep>/ point.json loadgen-<i>.json loadgen-<i>-hdr*  cpu.csv
                       middleware-<j>/{windows.csv,summary.json}  servers.json
  report/
```

Only this module spells the names; readers, the summary, the report and the runners ask it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUN_DIR_PATTERN = re.compile(r"^p(?P<point>\d+)-r(?P<rep>\d+)$")
LOADGEN_JSON_PATTERN = re.compile(r"^loadgen-(?P<index>\d+)\.json$")
POINT_FILE = "point.json"
CPU_FILE = "cpu.csv"


def utc_stamp(now: dt.datetime | None = None) -> str:
    """A UTC timestamp usable as a folder name, e.g. 20261121T150600Z."""
    now = now or dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%dT%H%M%SZ")


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(path)


@dataclass(frozen=True)
class RunDir:
    """`raw/p<point>-r<rep>/`: the files of one point and repetition."""

    point: int
    repetition: int
    path: Path

    @property
    def point_file(self) -> Path:
        return self.path / POINT_FILE

    @property
    def cpu_file(self) -> Path:
        """Per-process CPU samples (`cachelab.results.cpu`)."""
        return self.path / CPU_FILE

    def loadgen_files(self) -> list[Path]:
        """`loadgen-<i>.json`, in instance order."""
        found = []
        for child in self.path.iterdir() if self.path.is_dir() else []:
            match = LOADGEN_JSON_PATTERN.match(child.name)
            if match:
                found.append((int(match["index"]), child))
        return [p for _, p in sorted(found)]

    def hdr_logs(self, prefix: str) -> list[Path]:
        """The HdrHistogram interval logs a loadgen wrote with `--hdr-file-prefix=<prefix>`."""
        return sorted(self.path.glob(f"{prefix}*FULL_RUN*.txt"))

    def hgrm_file(self, index: int) -> Path | None:
        """The whole-run percentile summary (`.hgrm`) of loadgen instance `index`, if any."""
        found = sorted(self.path.glob(f"loadgen-{index}*FULL_RUN*.hgrm"))
        return found[0] if found else None

    def middleware_dirs(self) -> list[Path]:
        """`middleware-<j>/` stats folders."""
        return sorted(p for p in self.path.glob("middleware-*") if p.is_dir())


class ResultsDir:
    """Paths of one experiment's results folder."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

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

    def runs(self) -> list[RunDir]:
        """Every `raw/p*-r*` folder, in point then repetition order."""
        found = []
        for child in self.raw_dir.iterdir() if self.raw_dir.is_dir() else []:
            match = RUN_DIR_PATTERN.match(child.name)
            if match and child.is_dir():
                found.append(RunDir(int(match["point"]), int(match["rep"]), child))
        return sorted(found, key=lambda r: (r.point, r.repetition))

    def run_dirs(self) -> list[Path]:
        """Paths of `runs()`."""
        return [run.path for run in self.runs()]
