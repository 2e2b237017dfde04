"""`point.json` (what one run started and how it ended) and `status.json` (the experiment's
progress, rewritten after every run so an interrupted experiment still says what it finished)."""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cachelab.results.errors import ResultsError
from cachelab.results.layout import write_json

if TYPE_CHECKING:
    from cachelab.spec import Point

RunStatus = Literal["ok", "partial", "failed"]
ExperimentState = Literal["running", "complete", "interrupted", "failed"]


def iso_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


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
        "command_line": list(sys.argv),
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


@dataclass(frozen=True)
class PointRecord:
    """A run's `point.json` as read back: which point, its resolved spec, how it ended, and
    the files the runner says it wrote."""

    point: int
    repetition: int
    values: dict[str, Any]
    spec: dict[str, Any]
    status: str
    message: str
    loadgens: list[dict[str, Any]]
    middlewares: list[dict[str, Any]]
    extra: dict[str, Any]

    @classmethod
    def load(cls, path: Path) -> PointRecord:
        """Read and check one point.json; a missing or malformed file raises ResultsError."""
        try:
            data = json.loads(path.read_text())
        except OSError as error:
            raise ResultsError(f"{path}: cannot read ({error.strerror})") from None
        except json.JSONDecodeError as error:
            raise ResultsError(f"{path}: not valid JSON ({error.msg})") from None
        if not isinstance(data, dict):
            raise ResultsError(f"{path}: top level is not an object")
        for key in ("point", "repetition", "spec"):
            if key not in data:
                raise ResultsError(f"{path}: missing field {key!r}")
        known = {"point", "repetition", "values", "spec", "status", "message"}
        known |= {"loadgens", "middlewares"}
        return cls(
            point=int(data["point"]),
            repetition=int(data["repetition"]),
            values=dict(data.get("values") or {}),
            spec=dict(data["spec"]),
            status=str(data.get("status", "ok")),
            message=str(data.get("message") or ""),
            loadgens=list(data.get("loadgens") or []),
            middlewares=list(data.get("middlewares") or []),
            extra={k: v for k, v in data.items() if k not in known},
        )


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
    started: str = field(default_factory=iso_now)
    finished: str | None = None
    message: str = ""
    runs: list[RunRecord] = field(default_factory=list)
    # a subset run: the --only terms, and how many of the sweep's points they chose
    only: list[str] = field(default_factory=list)
    points_selected: int = 0
    points_total: int = 0

    @property
    def runs_done(self) -> int:
        return len(self.runs)

    @property
    def subset(self) -> bool:
        """True when --only chose fewer points than the sweep has."""
        return 0 < self.points_selected < self.points_total

    def record(self, run: RunRecord) -> None:
        self.runs = [r for r in self.runs if (r.point, r.repetition) != (run.point, run.repetition)]
        self.runs.append(run)

    def finish(self, state: ExperimentState, message: str = "") -> None:
        self.state = state
        self.message = message
        self.finished = iso_now()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["runs_done"] = self.runs_done
        data["subset"] = self.subset
        return data

    def save(self, path: Path) -> None:
        write_json(path, self.to_json())

    @classmethod
    def load(cls, path: Path) -> Status:
        data = json.loads(path.read_text())
        data.pop("runs_done", None)
        data.pop("subset", None)
        data["runs"] = [RunRecord(**r) for r in data.get("runs", [])]
        return cls(**data)
