"""The experiment loop (cachelab.experiment) with a fake executor: order, status, selection
(`--only`), resume (only missing, partial or failed runs again), summary rows and Ctrl-C."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cachelab.experiment import (
    ExperimentLoop,
    ExperimentStatus,
    ResumeError,
    Selection,
    SelectionError,
    estimate_wall_s,
    open_for_resume,
)
from cachelab.results import ResultsDir, RunRecord, RunStatus
from cachelab.spec import Point, Spec, parse_spec

SAMPLE_JSON = Path(__file__).parent / "data" / "results-sample" / "raw" / "p0-r0" / "loadgen-0.json"
RAW = {
    "name": "loop",
    "topology": {"middlewares": 0},
    "sweep": {"topology.clients_per_thread": [1, 2, 4], "topology.workers": [8, 16]},
    "run": {"repetitions": 2, "duration_s": 5},
}


class FakeExecutor:
    """Writes a run folder the summary can read (a real loadgen JSON from the test data) and
    returns the status it is told to, or raises KeyboardInterrupt at one run."""

    target_name = "fake"

    def __init__(
        self,
        results: ResultsDir,
        outcome: dict[tuple[int, int], RunStatus] | None = None,
        interrupt_at: tuple[int, int] | None = None,
    ) -> None:
        self.results = results
        self.outcome = outcome or {}
        self.interrupt_at = interrupt_at
        self.ran: list[tuple[int, int]] = []
        self.closed = 0

    def run_one(self, point: Point, repetition: int) -> RunRecord:
        from cachelab.results import finish_point_record, start_point_record

        run_dir = self.results.run_dir(point.index, repetition)
        self.ran.append((point.index, repetition))
        record = start_point_record(point, repetition)
        record["loadgens"] = [
            {"index": 0, "target": "x", "json": "loadgen-0.json", "hdr_prefix": None,
             "launch_epoch_ms": None, "exit_code": 0}
        ]  # fmt: skip
        record["middlewares"] = []
        shutil.copyfile(SAMPLE_JSON, run_dir / "loadgen-0.json")
        if (point.index, repetition) == self.interrupt_at:
            finish_point_record(run_dir, record, "partial", "interrupted")
            raise KeyboardInterrupt
        status = self.outcome.get((point.index, repetition), "ok")
        finish_point_record(run_dir, record, status, "" if status == "ok" else "broke")
        return RunRecord(point.index, repetition, status, "" if status == "ok" else "broke")

    def close(self) -> None:
        self.closed += 1


class Lines:
    """A reporter that remembers what it was told."""

    def __init__(self) -> None:
        self.started: list[tuple[int, int, str]] = []
        self.finished: list[tuple[str, dict[str, Any] | None]] = []
        self.notes: list[str] = []

    def start_run(self, number: int, total: int, point: Point, repetition: int) -> None:
        self.started.append((number, total, f"p{point.index}-r{repetition}"))

    def finish_run(self, record: RunRecord, point: Point, row: dict[str, Any] | None) -> None:
        self.finished.append((record.status, row))

    def note(self, text: str) -> None:
        self.notes.append(text)


@pytest.fixture
def spec() -> Spec:
    return parse_spec(RAW)


@pytest.fixture
def results(tmp_path: Path, spec: Spec) -> ResultsDir:
    results = ResultsDir.create(tmp_path, spec.name)
    results.spec_file.write_text(json.dumps(RAW))
    return results


def _status(results: ResultsDir) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(results.status_file.read_text())
    return data


def test_every_run_in_order_with_status_and_one_summary_row_each(
    spec: Spec, results: ResultsDir
) -> None:
    executor, lines = FakeExecutor(results), Lines()
    status = ExperimentLoop(spec, results, executor, lines).run()
    assert executor.ran == [(p, r) for p in range(6) for r in range(2)]
    assert status.state == "complete" and status.runs_done == 12 == status.runs_total
    saved = _status(results)
    assert saved["runs_done"] == 12 and saved["target"] == "fake"
    assert lines.started[0] == (1, 12, "p0-r0") and lines.started[-1] == (12, 12, "p5-r1")
    rows = results.summary_file.read_text().splitlines()
    assert len(rows) == 1 + 12
    assert all(row is not None for _, row in lines.finished)
    assert executor.closed == 1


def test_a_failed_run_stops_the_experiment(spec: Spec, results: ResultsDir) -> None:
    executor = FakeExecutor(results, outcome={(1, 0): "failed"})
    status = ExperimentLoop(spec, results, executor, Lines()).run()
    assert executor.ran[-1] == (1, 0) and len(executor.ran) == 3
    assert status.state == "failed" and "broke" in status.message
    assert status.runs_done == 2  # the failed run is not done
    assert executor.closed == 1


def test_ctrl_c_marks_the_run_partial_and_does_not_count_it_done(
    spec: Spec, results: ResultsDir
) -> None:
    executor = FakeExecutor(results, interrupt_at=(2, 1))
    status = ExperimentLoop(spec, results, executor, Lines()).run()
    assert status.state == "interrupted" and "--resume" in status.message
    saved = _status(results)
    assert saved["runs_done"] == 5 and saved["runs_partial"] == 1
    assert {"point": 2, "repetition": 1, "status": "partial", "message": "interrupted"} in saved[
        "runs"
    ]
    assert executor.closed == 1


def test_resume_runs_only_the_missing_partial_and_failed_runs(
    spec: Spec, results: ResultsDir
) -> None:
    first = FakeExecutor(results, outcome={(0, 1): "failed"})
    ExperimentLoop(spec, results, first, Lines()).run()  # stops at p0-r1
    # a second attempt is interrupted in p3-r0 after the failed run went ok
    _, previous = open_for_resume(spec, results.path, "fake")
    second = FakeExecutor(results, interrupt_at=(3, 0))
    ExperimentLoop(spec, results, second, Lines(), previous=previous).run()
    assert second.ran[0] == (0, 1)  # the failed run first, p0-r0 was ok
    assert second.ran[-1] == (3, 0)
    _, previous = open_for_resume(spec, results.path, "fake")
    third, lines = FakeExecutor(results), Lines()
    status = ExperimentLoop(spec, results, third, lines, previous=previous).run()
    assert third.ran == [(3, 0), (3, 1), (4, 0), (4, 1), (5, 0), (5, 1)]
    assert lines.notes[0] == "resume: 6 runs already done, 6 to run"
    assert status.state == "complete" and status.runs_done == 12
    assert len(results.summary_file.read_text().splitlines()) == 1 + 12
    # the partial run's folder was started afresh
    point = json.loads((results.raw_dir / "p3-r0" / "point.json").read_text())
    assert point["status"] == "ok"


def test_resume_refuses_another_spec_and_a_folder_that_is_not_results(
    spec: Spec, results: ResultsDir, tmp_path: Path
) -> None:
    ExperimentLoop(spec, results, FakeExecutor(results), Lines()).run()
    other = parse_spec({**RAW, "run": {"repetitions": 3, "duration_s": 5}})
    with pytest.raises(ResumeError, match=r"its spec\.yaml is not this spec"):
        open_for_resume(other, results.path, "fake")
    with pytest.raises(ResumeError, match="made with --target fake, not local"):
        open_for_resume(spec, results.path, "local")
    with pytest.raises(ResumeError, match="not a results folder"):
        open_for_resume(spec, tmp_path, "fake")


def _chosen(spec: Spec, *terms: str) -> list[int]:
    return [p.index for p in Selection(terms).choose(spec.points())]


def test_only_selects_points_by_index_and_by_value(spec: Spec) -> None:
    # points: (c=1,w=8) (1,16) (2,8) (2,16) (4,8) (4,16)
    assert _chosen(spec, "3") == [3]
    assert _chosen(spec, "0-2,5") == [0, 1, 2, 5]
    assert _chosen(spec, "workers=16") == [1, 3, 5]
    assert _chosen(spec, "topology.clients_per_thread=2,clients_per_thread=4") == [2, 3, 4, 5]
    assert _chosen(spec, "workers=8", "clients_per_thread=4") == [4]  # terms must all match


def test_only_takes_the_numbers_after_field_as_values_of_that_field(spec: Spec) -> None:
    # the 4 is a clients_per_thread value (point 4 is c=4), not the point index 4
    assert _chosen(spec, "workers=8", "clients_per_thread=1,4") == [0, 4]
    assert _chosen(spec, "topology.workers=8,16") == [0, 1, 2, 3, 4, 5]
    assert _chosen(spec, "clients_per_thread=1,2", "workers=16") == [1, 3]


def test_only_as_in_the_run_help(tmp_path: Path) -> None:
    # `--only workers=8 --only clients_per_thread=1,4` on a sweep of 4 client counts and
    # workers 8 and 32 (the quickstart's): the points with clients 1 and 4 at 8 workers
    quickstart = parse_spec(
        {
            "name": "q",
            "sweep": {"topology.clients_per_thread": [1, 4, 8, 16], "topology.workers": [8, 32]},
        }
    )
    chosen = Selection(("workers=8", "clients_per_thread=1,4")).choose(quickstart.points())
    assert [
        (p.values["topology.clients_per_thread"], p.values["topology.workers"]) for p in chosen
    ] == [
        (1, 8),
        (4, 8),
    ]
    chosen = Selection(("topology.workers=8,32",)).choose(quickstart.points())
    assert len(chosen) == 8


@pytest.mark.parametrize(
    ("terms", "message"),
    [
        (("9",), r"points are numbered 0\.\.5"),
        (("threads=2",), r"not a swept field \(sweep: topology.clients_per_thread, topology"),
        (("workers=7",), "topology.workers takes the values 8, 16, not 7"),
        (("workers=8,7",), "topology.workers takes the values 8, 16, not 7"),
        (("3,workers=8",), "use point indices"),
        (("workers",), "use point indices"),
        (("workers=8", "workers=16"), "no point matches all"),
        (("1,,2",), "empty alternative"),
    ],
)
def test_bad_only_terms_are_explained(spec: Spec, terms: tuple[str, ...], message: str) -> None:
    with pytest.raises(SelectionError, match=message):
        Selection(terms).choose(spec.points())


def test_selected_runs_only_are_run_and_counted(spec: Spec, results: ResultsDir) -> None:
    executor = FakeExecutor(results)
    loop = ExperimentLoop(spec, results, executor, Lines(), Selection(("workers=16",)))
    status = loop.run()
    assert executor.ran == [(1, 0), (1, 1), (3, 0), (3, 1), (5, 0), (5, 1)]
    assert status.runs_total == 6 and status.runs_done == 6
    saved = json.loads(results.status_file.read_text())
    assert saved["only"] == ["workers=16"]
    assert (saved["points_selected"], saved["points_total"]) == (3, 6)
    assert saved["subset"] is True


def test_status_loads_what_it_saved(spec: Spec, results: ResultsDir) -> None:
    ExperimentLoop(spec, results, FakeExecutor(results, interrupt_at=(0, 1)), Lines()).run()
    status = ExperimentStatus.read(results.status_file)
    assert [r.status for r in status.runs] == ["ok", "partial"]


def test_wall_time_estimate_counts_runs_and_preloads(spec: Spec) -> None:
    # 12 read-only runs of 5 s plus overhead; the server set changes with nothing that is swept
    # here except the topology, so each point preloads once
    estimate = estimate_wall_s(spec)
    assert 12 * 5 < estimate < 12 * 5 + 12 * 10 + 6 * 10
