"""The seeds as data (catalogue and published curves), the fidelity table, its CLI, the report's
seed section and the generated table in docs/experiments.md."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cachelab.cli import main
from cachelab.fidelity import (
    Curve,
    FidelityError,
    fidelity_rows,
    markdown_with_provenance,
)
from cachelab.paths import repo_root
from cachelab.report.seeds_section import SEEDS_FIGURE, seeds_section
from cachelab.seeds import all_curves, catalogue, known_seed
from cachelab.spec import SpecError, parse_spec

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "results-sample"
ROOT = repo_root()


def test_every_curve_names_a_catalogued_seed_and_is_well_formed() -> None:
    assert "asl17-3.1-one-mw" in catalogue()
    for curve in all_curves():
        assert curve.seed in catalogue(), curve.seed
        xs = curve.points[curve.x]
        assert xs == sorted(xs)
        for values in curve.points.values():
            assert len(values) == len(xs), (curve.seed, curve.label)
        assert curve.source.startswith(("ASL", "Memcached"))


def test_a_seed_id_with_no_data_is_one_clear_line() -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec({"name": "x", "seeds": ["asl17-3.1-one-mv"]})
    (problem,) = caught.value.problems
    assert problem.startswith("seeds.0: 'asl17-3.1-one-mv' is no seed experiment")
    assert "asl17-3.1-one-mw" in problem  # the ids of that report are named
    assert known_seed("asl17-3.3-heavy-load") is None


def test_knee_saturation_and_low_load() -> None:
    curve = Curve([2, 8, 16, 24, 32], [458, 1854, 3666, 3908, 3915], [4.4, 4.3, 4.4, 6.1, 8.2])
    assert curve.saturation == 3915
    assert curve.knee == 24  # the first x at >= 95 % of 3915 (3719)
    assert curve.low_load_rt_ms == 4.4


def test_the_sample_against_its_seed() -> None:
    (row,) = fidelity_rows(SAMPLE)
    assert (row.seed, row.series) == ("asl17-3.1-one-mw", "workers=8")
    assert row.theirs.saturation == 3955
    assert row.theirs.knee == 24
    assert row.rt_from_law  # the seed table has the middleware's times only
    assert row.theirs.low_load_rt_ms == pytest.approx(1000 * 2 / 458)
    assert row.ours.x == [2, 8, 32]
    ratios = row.ratios()
    assert ratios["saturation"] == pytest.approx(row.ours.saturation / 3955)
    assert math.isfinite(ratios["knee"])


def test_no_seed_numbers_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "spec.yaml").write_text("name: plain\nseeds: [asl19-2.1-b21]\n")
    (folder / "summary.csv").write_text("point,repetition,total_clients\n")
    with pytest.raises(FidelityError, match=r"no published numbers of asl19-2\.1-b21"):
        fidelity_rows(folder)
    assert main(["fidelity", str(folder)]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith("error:") and len(out.splitlines()) == 1


def test_the_cli_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fidelity", "--markdown", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "| results-sample | asl17-3.1-one-mw | workers=8 |" in out


def test_the_report_section_overlays_the_seed(tmp_path: Path) -> None:
    section = seeds_section(SAMPLE, tmp_path)
    assert section is not None
    assert (tmp_path / SEEDS_FIGURE).stat().st_size > 20_000
    assert section["rows"][0]["seed"] == "asl17-3.1-one-mw"


BEGIN = "<!-- fidelity table: begin"
END = "<!-- fidelity table: end -->"


def test_the_docs_table_is_generated_from_the_measured_runs() -> None:
    doc = (ROOT / "docs" / "experiments.md").read_text()
    _, _, rest = doc.partition(BEGIN)
    _, _, rest = rest.partition("-->\n")
    block, _, _ = rest.partition(END)
    folders = sorted((DATA / "fidelity").iterdir())
    assert folders
    assert block.strip() == markdown_with_provenance(folders).strip(), (
        "regenerate with: cachelab fidelity --markdown ops/tests/data/fidelity/*"
    )
