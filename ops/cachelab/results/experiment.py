"""A whole results folder read through the package: the validated `Spec`, metadata, status and
every readable run (`read_experiment`). Runs that failed, were cut short or cannot be read are
left out and counted, so a report can be built from an interrupted experiment."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachelab.results.errors import ResultsError
from cachelab.results.layout import ResultsDir
from cachelab.results.metadata import read_metadata
from cachelab.results.run import RunData, read_run
from cachelab.spec import Spec, SpecError, load_spec


@dataclass
class Experiment:
    """One results folder, read."""

    results: ResultsDir
    spec: Spec
    metadata: dict[str, Any]
    status: dict[str, Any]
    runs: list[RunData]
    skipped: dict[str, list[str]] = field(default_factory=dict)  # reason -> run folder names

    def skipped_count(self, reason: str) -> int:
        return len(self.skipped.get(reason, []))

    def run(self, point: int, repetition: int) -> RunData | None:
        for run in self.runs:
            if (run.point, run.repetition) == (point, repetition):
                return run
        return None

    def runs_of(self, point: int) -> list[RunData]:
        return [r for r in self.runs if r.point == point]


def read_spec(results: ResultsDir) -> Spec:
    """The spec the experiment ran, validated (a missing or invalid spec raises ResultsError)."""
    if not results.spec_file.is_file():
        raise ResultsError(f"{results.spec_file}: missing (a results folder holds the spec it ran)")
    try:
        return load_spec(results.spec_file)
    except SpecError as error:
        raise ResultsError(f"{results.spec_file}: {error}") from None


def read_status(results: ResultsDir) -> dict[str, Any]:
    if not results.status_file.is_file():
        return {}
    try:
        data = json.loads(results.status_file.read_text())
    except json.JSONDecodeError as error:
        raise ResultsError(f"{results.status_file}: not valid JSON ({error.msg})") from None
    return data if isinstance(data, dict) else {}


def read_experiment(path: Path, with_runs: bool = True) -> Experiment:
    """Read a results folder. Runs whose point.json says `failed` or `partial`, and runs whose
    files cannot be read, are skipped and listed in `skipped` by reason."""
    results = ResultsDir(Path(path))
    if not results.path.is_dir():
        raise ResultsError(f"{results.path}: not a directory")
    experiment = Experiment(
        results=results,
        spec=read_spec(results),
        metadata=read_metadata(results.metadata_file),
        status=read_status(results),
        runs=[],
    )
    for run_dir in results.runs() if with_runs else []:
        if not run_dir.point_file.is_file():
            experiment.skipped.setdefault("no point.json", []).append(run_dir.path.name)
            continue
        try:
            data = read_run(run_dir)
        except (ResultsError, KeyError, ValueError) as error:
            experiment.skipped.setdefault("unreadable", []).append(f"{run_dir.path.name}: {error}")
            continue
        if data.status != "ok" or not data.clients:
            experiment.skipped.setdefault(data.status, []).append(run_dir.path.name)
            continue
        experiment.runs.append(data)
    return experiment
