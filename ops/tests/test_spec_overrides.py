"""`cachelab run --set FIELD=VALUE` and $CACHELAB_SET: one field of a spec changed for a run,
validated like the spec itself, and the spec the run used saved beside its results."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cachelab.cli import main
from cachelab.spec import SpecError, load_spec, save_spec

QUICKSTART = Path(__file__).resolve().parents[1] / "experiments" / "quickstart.yaml"


def test_fields_and_sweep_axes_are_set_from_yaml_values() -> None:
    spec = load_spec(
        QUICKSTART,
        [
            "run.duration_s=6",
            "run.repetitions=1",
            "sweep.topology.workers=[8]",
            "workload.ratio=1:10",
            "server.memcached.threads=2",
        ],
    )
    assert (spec.run.duration_s, spec.run.repetitions) == (6, 1)
    assert spec.sweep["topology.workers"] == [8]
    assert spec.workload.ratio == "1:10"  # digits joined by colons stay text, as in a file
    assert spec.server.memcached.threads == 2
    assert len(spec.points()) == 4


def test_a_term_without_a_value_and_a_misspelt_field_are_named() -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(QUICKSTART, ["run.duration_s"])
    assert "--set 'run.duration_s': expected FIELD=VALUE" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        load_spec(QUICKSTART, ["run.duration=6"])
    assert "run.duration" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        load_spec(QUICKSTART, ["run.duration_s=1"])  # shorter than warm-up plus cool-down
    assert "run" in str(caught.value)


def test_the_saved_spec_is_the_file_or_what_the_run_used(tmp_path: Path) -> None:
    same = tmp_path / "same.yaml"
    save_spec(load_spec(QUICKSTART), QUICKSTART, same)
    assert same.read_text() == QUICKSTART.read_text()  # comments kept
    changed = tmp_path / "changed.yaml"
    spec = load_spec(QUICKSTART, ["run.duration_s=6"])
    save_spec(spec, QUICKSTART, changed)
    assert yaml.safe_load(changed.read_text())["run"]["duration_s"] == 6
    assert load_spec(changed) == spec  # so --resume with the same overrides finds it


def test_run_with_a_bad_override_fails_at_once_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "results"
    assert main(["run", str(QUICKSTART), "--results", str(results), "--set", "run.x=1"]) == 2
    assert "run.x" in capsys.readouterr().out
    monkeypatch.setenv("CACHELAB_SET", "run.repetitions=0")  # applied after --set: it wins
    assert (
        main(["run", str(QUICKSTART), "--results", str(results), "--set", "run.repetitions=2"]) == 2
    )
    assert "run.repetitions" in capsys.readouterr().out
    assert not results.exists()
