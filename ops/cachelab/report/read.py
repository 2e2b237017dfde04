"""The report's first stage: a results folder read once (docs/interfaces.md §4). The spec is
parsed once, with the metadata, status and runs (`cachelab.results.experiment`), and
``summary.csv`` is read once, both as a frame and as its text rows (a section that counts in
text, such as the tail breakdown, reads the same bytes as the frame)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from cachelab.columns import RESPONSE_TIME_MS, THINK_TIME_MS, THROUGHPUT_OPS_PER_S, TOTAL_CLIENTS
from cachelab.results import ResultsError
from cachelab.results.experiment import Experiment, read_experiment
from cachelab.spec import Spec

SUMMARY_FILE = "summary.csv"
REQUIRED_COLUMNS = (
    "point",
    "repetition",
    TOTAL_CLIENTS,
    THINK_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
)


class ReportError(ValueError):
    """The results folder is missing a file or a column the report needs."""


@dataclass(frozen=True)
class ReadResults:
    """Everything the report takes from a results folder."""

    results_dir: Path
    experiment: Experiment
    summary: pd.DataFrame  # every row of summary.csv
    summary_rows: list[dict[str, str]]  # the same rows as text

    @property
    def spec(self) -> Spec:
        return self.experiment.spec


def read_summary(results_dir: Path) -> pd.DataFrame:
    """``summary.csv`` with the contract's required columns checked."""
    return summary_frame(results_dir / SUMMARY_FILE, _summary_text(results_dir / SUMMARY_FILE))


def read_results(results_dir: Path) -> ReadResults:
    """Read the folder: spec, metadata, status, runs and summary.

    Raises
    ------
    ReportError
        If the folder, ``spec.yaml`` or ``summary.csv`` is missing or malformed.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    try:
        experiment = read_experiment(results_dir)
    except ResultsError as error:
        raise ReportError(str(error)) from None
    path = results_dir / SUMMARY_FILE
    text = _summary_text(path)
    return ReadResults(results_dir, experiment, summary_frame(path, text), _rows(text))


def read_summary_rows(results_dir: Path) -> list[dict[str, str]]:
    """``summary.csv``'s rows as text."""
    return _rows(_summary_text(results_dir / SUMMARY_FILE))


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _summary_text(path: Path) -> str:
    if not path.is_file():
        raise ReportError(f"{path}: missing (the runner writes one row per point and repetition)")
    return path.read_text(encoding="utf-8")


def summary_frame(path: Path, text: str) -> pd.DataFrame:
    """The summary's text as a frame; a missing ``status`` column reads as every row ok."""
    try:
        frame = pd.read_csv(io.StringIO(text))
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as exc:
        raise ReportError(f"{path}: cannot parse ({exc})") from exc
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ReportError(f"{path}: missing columns {missing}")
    if "status" not in frame.columns:
        frame["status"] = "ok"
    return frame
