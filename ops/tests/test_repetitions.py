"""Repetitions until certain: `run.repetitions: {min, max, ci_pct}` in the spec, the policy, and
the experiment loop adding runs to a point until its intervals are narrow (or max)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_experiment_loop import FakeExecutor, Lines

import cachelab.experiment as experiment
from cachelab.experiment import ExperimentLoop, open_for_resume
from cachelab.repetitions import RepetitionPolicy
from cachelab.results import ResultsDir
from cachelab.spec import SpecError, parse_spec

RAW: dict[str, Any] = {
    "name": "certain",
    "topology": {"middlewares": 0},
    "sweep": {"topology.workers": [8, 16]},
    "run": {"repetitions": {"min": 3, "max": 6, "ci_pct": 5}, "duration_s": 5},
}


def test_fixed_numbers_keep_working_and_the_mapping_parses() -> None:
    fixed = parse_spec({**RAW, "run": {"repetitions": 4, "duration_s": 5}})
    assert (fixed.run.repetitions, fixed.run.until_certain, fixed.run.max_repetitions) == (
        4,
        None,
        4,
    )
    spec = parse_spec(RAW)
    assert spec.run.repetitions == 3
    assert spec.run.until_certain is not None
    assert (spec.run.max_repetitions, spec.run.until_certain.ci_pct) == (6, 5)
    assert parse_spec(spec.model_dump(mode="json")) == spec


@pytest.mark.parametrize(
    ("repetitions", "message"),
    [
        ({"min": 1, "max": 5, "ci_pct": 5}, "2 <= min <= max"),
        ({"min": 4, "max": 3, "ci_pct": 5}, "2 <= min <= max"),
        ({"min": 3, "max": 5}, "with all three"),
        ({"min": 3, "max": 5, "ci_pct": 0}, "0 < ci_pct < 100"),
        ({"min": 3, "max": 500, "ci_pct": 5}, "max <= 100"),
    ],
)
def test_bad_repetitions_are_one_line(repetitions: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec({**RAW, "run": {"repetitions": repetitions, "duration_s": 5}})
    (problem,) = caught.value.problems
    assert problem.startswith("run.repetitions: ")
    assert message in problem


def rows(point: int, throughputs: list[float]) -> list[dict[str, Any]]:
    return [
        {"point": point, "repetition": k, "status": "ok", "throughput_ops_per_s": x,
         "response_time_ms": 1.0}
        for k, x in enumerate(throughputs)
    ]  # fmt: skip


def test_the_policy() -> None:
    policy = RepetitionPolicy(parse_spec(RAW).run)
    steady = rows(0, [1000, 1001, 999])
    noisy = rows(0, [1000, 1300, 800])
    assert not policy.another(0, 2, noisy)  # below min: the loop's plan still has runs
    assert not policy.another(0, 3, steady)
    assert policy.another(0, 3, noisy)
    assert not policy.another(0, 6, rows(0, [1000, 1300, 800, 1200, 900, 1100]))  # max
    state = policy.certainty(0, rows(0, [1000, 1300, 800, 1200, 900, 1100]))
    assert state is not None and state.n == 6 and not state.certain
    assert state.verdict == "not certain after 6 (max)"
    fixed = RepetitionPolicy(parse_spec({**RAW, "run": {"repetitions": 2}}).run)
    assert not fixed.another(0, 2, noisy)


# Point 0 is steady after its 3 runs; point 1 is within ±5 % (11, 6.2, 4.4 %) after its 5th.
THROUGHPUT = {0: [1000, 1002, 998, 1000, 1000, 1000], 1: [1000, 1080, 1000, 1000, 1000, 1000]}


@pytest.fixture
def scripted_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    def add_row(rows: list[dict[str, Any]], run_dir: Path, axes: Any, path: Path) -> None:
        point, rep = (int(x) for x in run_dir.name[1:].split("-r"))
        rows.append(
            {"point": point, "repetition": rep, "status": "ok",
             "throughput_ops_per_s": THROUGHPUT[point][rep], "response_time_ms": 1.0}
        )  # fmt: skip

    monkeypatch.setattr(experiment, "add_summary_row", add_row)


@pytest.mark.usefixtures("scripted_rows")
def test_the_loop_repeats_an_unsure_point_until_certain(tmp_path: Path) -> None:
    spec = parse_spec(RAW)
    results = ResultsDir.create(tmp_path, spec.name)
    results.spec_file.write_text(json.dumps(RAW))
    executor = FakeExecutor(results)
    status = ExperimentLoop(spec, results, executor, Lines()).run()
    assert executor.ran == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4)]
    assert status.state == "complete"
    assert status.runs_total == 8


@pytest.mark.usefixtures("scripted_rows")
def test_a_resumed_loop_keeps_the_extra_runs_and_goes_on(tmp_path: Path) -> None:
    spec = parse_spec(RAW)
    results = ResultsDir.create(tmp_path, spec.name)
    results.spec_file.write_text(json.dumps(RAW))
    first = FakeExecutor(results, interrupt_at=(1, 3))
    ExperimentLoop(spec, results, first, Lines()).run()
    assert first.ran[-1] == (1, 3)
    folder, previous = open_for_resume(spec, results.path, "fake")
    second = FakeExecutor(folder)
    status = ExperimentLoop(spec, folder, second, Lines(), previous=previous).run()
    assert second.ran == [(1, 3), (1, 4)]
    assert status.state == "complete"


def test_the_report_section_shows_n_and_the_intervals(tmp_path: Path) -> None:
    import yaml

    from cachelab.report.read import read_summary_rows
    from cachelab.report.sections.repetitions import repetitions_section
    from cachelab.results.experiment import read_spec
    from cachelab.summary import write_summary_csv

    results = ResultsDir.create(tmp_path, "certain")
    results.spec_file.write_text(yaml.safe_dump(RAW))
    steady = rows(0, [1000, 1002, 998])
    unsure = rows(1, [1000, 1300, 800, 1200, 900, 1100])
    write_summary_csv(steady + unsure, list(RAW["sweep"]), results.summary_file)
    section = repetitions_section(read_spec(results), read_summary_rows(results.path))
    assert section is not None
    first, second = section.rows
    assert (first["n"], first["verdict"]) == (3, "certain")
    assert first["± % (tp)"] == pytest.approx(0.5, abs=0.05)  # t(2) 4.303 x sd 2 / sqrt 3
    assert (second["n"], second["verdict"]) == (6, "not certain after 6 (max)")
    assert "1 of 2 points became certain" in section.note
    fixed = ResultsDir.create(tmp_path, "fixed")
    fixed.spec_file.write_text(yaml.safe_dump({**RAW, "run": {"repetitions": 3}}))
    write_summary_csv(steady, list(RAW["sweep"]), fixed.summary_file)
    assert repetitions_section(read_spec(fixed), read_summary_rows(fixed.path)) is None


def test_validate_says_how_many_runs_it_may_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    from cachelab.cli import main

    path = tmp_path / "certain.yaml"
    path.write_text(yaml.safe_dump(RAW))
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 points x 3-6 (until ±5 %) repetitions = 6-12 runs" in out
