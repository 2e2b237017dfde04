"""The seeds as data (catalogue and published curves), the fidelity table, its CLI, the report's
seed section and the generated table in docs/experiments.md."""

from __future__ import annotations

import csv
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from cachelab.spec import SpecError, load_spec, parse_spec

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
    (folder / "spec.yaml").write_text("name: plain\nseeds: [mvr-3.1-mc-default]\n")
    (folder / "summary.csv").write_text("point,repetition,total_clients\n")
    with pytest.raises(FidelityError, match=r"no published numbers of mvr-3\.1-mc-default"):
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


# --- the overlay on the quickstart and on seed specs ---------------------------------------------

QUICKSTART = DATA / "fidelity" / "quickstart"
EXPERIMENTS = ROOT / "ops" / "experiments"


def test_the_quickstart_report_draws_its_seed_curve(tmp_path: Path) -> None:
    assert "asl17-3.1-one-mw" in (ROOT / "ops" / "experiments" / "quickstart.yaml").read_text()
    section = seeds_section(QUICKSTART, tmp_path)
    assert section is not None
    (row,) = section["rows"]
    assert (row["seed"], row["series"]) == ("asl17-3.1-one-mw", "workers=8")
    assert (tmp_path / SEEDS_FIGURE).stat().st_size > 20_000


def shaped_run(
    tmp_path: Path, spec_name: str, throughput: Callable[[dict[str, Any]], float]
) -> Path:
    """A results folder of `spec_name` whose summary.csv has one row per point: the columns the
    fidelity table reads, the throughput from `throughput(row)` and N / X as response time."""
    folder = tmp_path / spec_name
    folder.mkdir()
    spec_file = EXPERIMENTS / f"{spec_name}.yaml"
    shutil.copy(spec_file, folder / "spec.yaml")
    rows = []
    for point in load_spec(spec_file).points():
        t = point.spec.topology
        row: dict[str, Any] = {
            "point": point.index,
            "repetition": 0,
            **point.values,
            "total_clients": t.total_clients,
            "workers": t.workers,
            "middlewares": t.middlewares,
            "status": "ok",
        }
        row["throughput_ops_per_s"] = throughput(row)
        row["response_time_ms"] = 1000.0 * t.total_clients / row["throughput_ops_per_s"]
        rows.append(row)
    with (folder / "summary.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder


def test_an_asl17_spec_gets_each_worker_count_beside_the_seeds_table(tmp_path: Path) -> None:
    # a worker pool of WT workers holding a request 2 ms each: min(N / 2 ms, WT / 2 ms)
    folder = shaped_run(
        tmp_path,
        "asl17-heavy-load-1mw",
        lambda r: 500.0 * min(r["total_clients"], r["workers"]),
    )
    rows = fidelity_rows(folder)
    assert sorted(r.series for r in rows) == [
        f"workers={w}, middlewares=1" for w in (16, 32, 64, 8)
    ]
    by_workers = {r.series: r for r in rows}
    eight = by_workers["workers=8, middlewares=1"]
    assert eight.theirs.saturation == 3520  # Table 3's 8 WT, 1 MW row at 210 clients
    assert eight.ours.saturation == 4000
    assert eight.ratios()["saturation"] == pytest.approx(4000 / 3520)
    assert eight.ours.knee == 30  # the spec's first point past 8 clients
    section = seeds_section(folder, tmp_path)
    assert section is not None and len(section["rows"]) == 4
    assert (tmp_path / SEEDS_FIGURE).stat().st_size > 20_000


def test_a_value_size_curve_compares_saturation_only(tmp_path: Path) -> None:
    # 1,000,000 bytes/s of values over the seed's value sizes at 288 clients
    folder = shaped_run(
        tmp_path,
        "asl19-b21",
        lambda r: 1e7 / r["workload.value_bytes"] * min(1.0, r["total_clients"] / 288),
    )
    (row,) = fidelity_rows(folder)
    assert (row.seed, row.x) == ("asl19-2.1-b21", "workload.value_bytes")
    assert row.ours.x == [64, 128, 256, 384, 512, 768, 1024]
    assert row.theirs.saturation == 36311
    assert row.ours.saturation == pytest.approx(1e7 / 64)
    assert math.isnan(row.ratios()["knee"]) and math.isnan(row.ratios()["low_load_rt"])
    assert not row.rt_from_law
    assert seeds_section(folder, tmp_path) is not None


def test_the_asl16_baseline_curve() -> None:
    (curve,) = [c for c in all_curves() if c.seed == "asl16-003-2-baseline"]
    from cachelab.fidelity import seed_curve

    theirs, from_law = seed_curve(curve)
    assert not from_law  # the figure's mean response times, not N / X
    assert theirs.saturation == 34101
    assert theirs.knee == 112  # the first at >= 95 % of 34,101 (32,396)
    assert theirs.low_load_rt_ms == 0.64
