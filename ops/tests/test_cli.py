"""The cachelab command line (everything except a real run, which test_e2e covers)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cachelab.cli import _first_missing, _remove_made, incomplete_note, main

EXPERIMENTS = Path(__file__).parents[1] / "experiments"
QUICKSTART = EXPERIMENTS / "quickstart.yaml"
RUN = Path(__file__).parent / "data" / "run-two-instances"


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: cachelab" in capsys.readouterr().out


def test_validate_good_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(QUICKSTART)]) == 0
    out = capsys.readouterr().out
    assert "8 points x 3-5 (until ±10 %) repetitions = 24-40 runs of 10 s" in out


def test_validate_bad_spec_names_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ntopology:\n  workers: 0\n")
    assert main(["validate", str(QUICKSTART), str(bad)]) == 1
    assert "topology.workers: must be >= 1, got 0" in capsys.readouterr().out


def test_a_missing_spec_points_to_the_shipped_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXPERIMENTS.parents[1])
    assert main(["run", "quickstart.yaml", "--results", str(tmp_path / "r")]) == 2
    out = capsys.readouterr().out
    assert "quickstart.yaml:\n  cannot read: No such file or directory" in out
    assert "did you mean ops/experiments/quickstart.yaml?" in out
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 1
    assert f"`cachelab list` shows the specs in {EXPERIMENTS.resolve()}" in capsys.readouterr().out
    assert not (tmp_path / "r").exists()


def test_run_names_a_results_folder_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    for base in (Path("/proc/nope"), tmp_path / "file" / "results"):
        assert main(["run", str(QUICKSTART), "--results", str(base)]) == 2
        out = capsys.readouterr().out
        assert f"error: --results {base}: cannot write there (" in out, out
        assert "Traceback" not in out


def test_list_names_a_folder_without_specs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--dir", str(tmp_path / "nope")]) == 2
    assert f"error: --dir {tmp_path / 'nope'}: no such folder" in capsys.readouterr().out
    assert main(["list", "--dir", str(tmp_path)]) == 2
    assert f"error: --dir {tmp_path}: no *.yaml spec in it" in capsys.readouterr().out


def test_summarize_refuses_to_replace_a_summary_with_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "spec.yaml").write_text("name: fixture\n")
    (tmp_path / "summary.csv").write_text("kept\n")
    assert main(["summarize", str(tmp_path)]) == 2
    assert "no run with a point.json to summarize (summary.csv left as it was)" in (
        capsys.readouterr().out
    )
    assert (tmp_path / "summary.csv").read_text() == "kept\n"
    (tmp_path / "spec.yaml").write_text("name: Bad_Name\n")
    assert main(["summarize", str(tmp_path)]) == 2
    assert "name: must match [a-z0-9-]+" in capsys.readouterr().out


def test_folders_made_for_a_failed_command_are_removed_up_to_the_first_made(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "a" / "b" / "c"
    made = _first_missing(folder)
    assert made == tmp_path / "a"
    folder.mkdir(parents=True)
    (tmp_path / "kept").mkdir()
    _remove_made(folder, made)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]
    assert _first_missing(tmp_path) is None
    folder.mkdir(parents=True)
    (folder / "result").write_text("x")  # something was written: nothing is removed
    _remove_made(folder, tmp_path / "a")
    assert (folder / "result").is_file()


def test_ctrl_c_in_a_report_is_a_line_and_status_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import cachelab.report

    def interrupted(results_dir: Path) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(cachelab.report, "build_report", interrupted)
    (tmp_path / "summary.csv").write_text("point\n")
    assert main(["report", str(tmp_path)]) == 130
    out = capsys.readouterr().out
    assert "error: interrupted" in out and "Traceback" not in out


def test_messages_keep_their_brackets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # rich took "[a-z0-9-]" for markup and printed "must match +"
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Bad_Name\n")
    assert main(["validate", str(bad)]) == 1
    assert "name: must match [a-z0-9-]+, got 'Bad_Name'" in capsys.readouterr().out
    assert main(["run", str(bad), "--results", str(tmp_path / "results")]) == 2
    assert "name: must match [a-z0-9-]+, got 'Bad_Name'" in capsys.readouterr().out


def test_run_rejects_a_bad_spec_before_starting_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nrun:\n  repetitons: 2\n")
    assert main(["run", str(bad), "--results", str(tmp_path / "results")]) == 2
    assert "run.repetitons: unknown field" in capsys.readouterr().out
    assert not (tmp_path / "results").exists()


def test_list_shows_every_shipped_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for path in EXPERIMENTS.glob("*.yaml"):
        assert f"{path.stem} " in out
    # the estimated wall time of each spec, and of all of them, in 80 columns, nothing cut
    assert "wall" in out and "all specs ~" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out


def test_schema_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "cachelab experiment spec"


def test_report_needs_a_results_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "no summary.csv" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert f"error: {tmp_path / 'nope'}: no such folder" in capsys.readouterr().out
    (tmp_path / "file").write_text("x")
    assert main(["report", str(tmp_path / "file")]) == 2
    assert f"error: {tmp_path / 'file'}: not a folder" in capsys.readouterr().out


def test_incomplete_note_names_the_state_and_the_runs(tmp_path: Path) -> None:
    status = {"state": "interrupted", "runs_done": 2, "runs_total": 10}
    (tmp_path / "status.json").write_text(json.dumps(status))
    assert incomplete_note(tmp_path) == (
        f"{tmp_path}: the experiment is interrupted (2/10 runs); the report shows only the runs"
        " that ended"
    )
    (tmp_path / "status.json").write_text(json.dumps({**status, "state": "complete"}))
    assert incomplete_note(tmp_path) is None
    (tmp_path / "status.json").write_text("{")
    assert "not valid JSON" in str(incomplete_note(tmp_path))
    (tmp_path / "status.json").unlink()
    assert incomplete_note(tmp_path) == (
        f"{tmp_path}: no status.json, so whether every run finished is unknown"
    )


def test_summarize_rebuilds_summary_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(RUN, tmp_path / "raw" / "p0-r0")
    (tmp_path / "spec.yaml").write_text("name: fixture\n")
    assert main(["summarize", str(tmp_path)]) == 0
    # no status.json here: the command says that it cannot tell whether every run ended
    assert "no status.json, so whether every run finished is unknown" in capsys.readouterr().out
    lines = (tmp_path / "summary.csv").read_text().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("point,repetition,total_clients,")


def test_run_rejects_bad_only_and_resume_before_starting_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(EXPERIMENTS / "quickstart.yaml")
    results = ["--results", str(tmp_path / "r")]
    assert main(["run", spec, "--only", "threads=2", *results]) == 2
    assert "--only threads=...: not a swept field" in capsys.readouterr().out
    assert main(["run", spec, "--only", "99", *results]) == 2
    assert "points are numbered 0..7" in capsys.readouterr().out
    assert main(["run", spec, "--resume", str(tmp_path), *results]) == 2
    assert "not a results folder" in capsys.readouterr().out
    assert not (tmp_path / "r").exists()


def test_dry_run_lists_the_chosen_points_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(EXPERIMENTS / "quickstart.yaml")
    only = ["--only", "workers=8", "--only", "clients_per_thread=1,4"]
    code = main(["run", spec, *only, "--dry-run", "--results", str(tmp_path / "r")])
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("dry run: 2 of 8 points, 6 runs of 10 s")
    assert out[1:] == [
        "  p0 (clients_per_thread=1, workers=8)",
        "  p2 (clients_per_thread=4, workers=8)",
    ]
    assert not (tmp_path / "r").exists()


def test_the_resume_command_repeats_the_original_options() -> None:
    from cachelab.options import RunOptions

    options = RunOptions(
        Path("s.yaml"), target="k8s", report=True, bandwidth="asl2017", only=("workers=8,32",)
    )
    assert options.resume_command(Path("results/x y")) == (
        "cachelab run s.yaml --resume 'results/x y' --target k8s --report --bandwidth asl2017 "
        "--only workers=8,32"
    )


def test_metadata_records_every_command(tmp_path: Path) -> None:
    from cachelab.results.metadata import finish_metadata, record_command

    path = tmp_path / "metadata.json"
    path.write_text(json.dumps({"command_line": ["cachelab", "run", "s.yaml"]}))
    finish_metadata(path)
    record_command(path, ["cachelab", "report", str(tmp_path)])
    data = json.loads(path.read_text())
    assert data["command_line"] == ["cachelab", "run", "s.yaml"]  # the first stays
    assert [c["command_line"][1] for c in data["commands"]][-1] == "report"
    assert len(data["commands"]) == 2 and "host_after" in data
