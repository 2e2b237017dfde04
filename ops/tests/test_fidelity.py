"""The seeds as data (catalogue and published curves), the fidelity table, its CLI, the report's
seed section and the generated table in docs/experiments.md."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from seed_runs import shaped_run, worker_bound

from cachelab import effects
from cachelab.cli import main
from cachelab.fidelity import (
    Curve,
    FidelityError,
    compare,
    fidelity_rows,
    shape_difference,
)
from cachelab.paths import repo_root
from cachelab.report.figures.plan import draw, seeds_plan
from cachelab.report.read import read_results
from cachelab.report.sections.seeds import SEEDS_FIGURE, seeds_section
from cachelab.seeds import (
    BOTTLENECKS,
    CONFIG_FIELDS,
    SeedCurve,
    all_curves,
    catalogue,
    differences,
    known_seed,
)
from cachelab.spec import SpecError, parse_spec

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "results-sample"
ROOT = repo_root()


def test_every_curve_names_a_catalogued_seed_and_is_well_formed() -> None:
    assert "asl17-3.1-one-mw" in catalogue()
    for curve in all_curves():
        assert curve.seed in catalogue(), curve.seed
        if curve.x is None:  # a maximum stated in the text: one throughput, no load
            assert list(curve.points) == ["throughput_ops_per_s"], curve.label
            assert len(curve.points["throughput_ops_per_s"]) == 1 and curve.excerpt is not None
            assert "stated in the text" in curve.source, curve.label
            continue
        xs = curve.points[curve.x]
        assert xs == sorted(xs)
        for values in curve.points.values():
            assert len(values) == len(xs), (curve.seed, curve.label)
        assert curve.source.startswith(("ASL", "Memcached"))
        assert set(curve.config) == set(CONFIG_FIELDS), (curve.seed, curve.label)
        assert curve.bottleneck.kind in BOTTLENECKS and curve.bottleneck.where
        # numbers either printed in the seed's text (an excerpt) or read from a figure
        assert curve.excerpt is not None or "from the figure" in curve.source, curve.label


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


def test_the_read_only_sample_is_refused_naming_the_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # read-only against 3 servers; the seed's published table is write-only against 1 server
    with pytest.raises(FidelityError) as caught:
        fidelity_rows(SAMPLE)
    line = str(caught.value)
    assert "asl17-3.1-one-mw '8 workers, write-only'" in line
    assert "workload.ratio 0:1 vs 1:0" in line and "topology.servers 3 vs 1" in line
    assert main(["fidelity", str(SAMPLE)]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith("error:") and len(out.splitlines()) == 1


def _one_mw_curve() -> SeedCurve:
    (curve,) = [
        c
        for c in all_curves()
        if c.seed == "asl17-3.1-one-mw" and c.label == "8 workers, write-only"
    ]
    return curve


def test_a_like_series_matches_and_an_unlike_one_names_its_fields() -> None:
    curve = _one_mw_curve()
    like = {k: v for k, v in curve.config.items()}
    like["topology.clients_per_thread"] = 16  # not fixed: the load is swept with it
    like["workload.ratio"] = "2:0"  # the same share of writes
    assert differences(curve, like) == []
    unlike = {**like, "workload.ratio": "0:1", "topology.servers": 3}
    assert differences(curve, unlike) == [
        ("workload.ratio", "0:1", "1:0"),
        ("topology.servers", 3, 1),
    ]
    assert ("workload.sharded", None, False) in differences(
        curve, {k: v for k, v in like.items() if k != "workload.sharded"}
    )


def test_the_shape_is_the_largest_gap_of_the_normalised_curves() -> None:
    ours = Curve([2, 8, 16], [100, 400, 500], [1, 1, 1])
    theirs = Curve([2, 8, 16, 24], [50, 100, 200, 200], [1, 1, 1, 1])
    # at 2: 0.2 vs 0.25, at 8: 0.8 vs 0.5, at 16: 1.0 vs 1.0
    assert shape_difference(ours, theirs) == pytest.approx(0.3)
    assert math.isnan(shape_difference(ours, Curve([3], [1], [1])))


def test_no_seed_numbers_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "spec.yaml").write_text("name: plain\nseeds: [mvr-3.8-mc-zipf]\n")
    (folder / "summary.csv").write_text("point,repetition,total_clients\n")
    with pytest.raises(FidelityError, match=r"no published numbers of mvr-3\.8-mc-zipf"):
        fidelity_rows(folder)
    assert compare(folder).without_numbers == ["mvr-3.8-mc-zipf"]
    assert main(["fidelity", str(folder)]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith("error:") and len(out.splitlines()) == 1


def test_the_cli_prints_the_table_and_the_refusals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = shaped_run(tmp_path, "asl17-heavy-load-2mw", worker_bound)
    assert main(["fidelity", "--markdown", str(folder)]) == 0
    row = "| asl17-heavy-load-2mw | asl17-3.3-heavy-load | 64 workers, 2 MW, write-only |"
    assert row in capsys.readouterr().out
    assert main(["fidelity", str(folder)]) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"not compared with asl17-3\.3-heavy-load '8 workers, 1 MW, write-only': fields differ "
        r"\(ours vs seed's\): topology\.middlewares 2 vs 1; topology\.instances_per_machine 2 "
        r"vs 1; topology\.threads 1 vs 2",
        " ".join(out.split()),
    )


def test_the_report_section_of_an_unlike_run_is_left_out(tmp_path: Path) -> None:
    assert seeds_section(read_results(SAMPLE)) is None


BEGIN = "<!-- fidelity table: begin"
END = "<!-- fidelity table: end -->"


def test_the_docs_table_is_generated_from_the_measured_runs() -> None:
    doc = (ROOT / "docs" / "experiments.md").read_text()
    _, _, rest = doc.partition(BEGIN)
    _, _, rest = rest.partition("-->\n")
    block, _, _ = rest.partition(END)
    folders = sorted((DATA / "fidelity").iterdir())
    assert folders
    assert block.strip() == effects.markdown_with_provenance(folders).strip(), (
        "regenerate with cachelab.effects.markdown_with_provenance over ops/tests/data/fidelity/*"
    )


# --- the overlay on the quickstart and on seed specs ---------------------------------------------

QUICKSTART = DATA / "fidelity" / "quickstart"


def test_the_quickstart_is_not_put_beside_the_write_only_table(tmp_path: Path) -> None:
    # the quickstart is read-only against 3 servers; ASL 2017 §3.1 published write-only numbers
    # against 1 server only, so there is nothing like for like to draw
    assert "asl17-3.1-one-mw" in (ROOT / "ops" / "experiments" / "quickstart.yaml").read_text()
    assert seeds_section(read_results(QUICKSTART)) is None
    refused = {r.curve: r for r in compare(QUICKSTART).refused}
    refusal = refused["8 workers, write-only"]
    assert [d[0] for d in refusal.differences] == ["workload.ratio", "topology.servers"]
    # a read-only maximum the seed states at 1 server is refused for the servers alone
    stated = refused["32 workers, read-only, stated maximum"]
    assert [d[0] for d in stated.differences] == ["topology.servers"]


def test_an_asl17_spec_gets_each_worker_count_beside_the_seeds_table(tmp_path: Path) -> None:
    folder = shaped_run(tmp_path, "asl17-heavy-load-1mw", worker_bound)
    rows = fidelity_rows(folder)
    # Table 3's four rows and Table 4's clients' maximum at 64 workers and 240 clients
    assert sorted(r.series for r in rows) == [
        *(f"{w} workers, 1 MW, write-only" for w in (16, 32, 64)),
        "64 workers, 1 MW, write-only, 240 clients",
        "8 workers, 1 MW, write-only",
    ]
    by_workers = {r.series: r for r in rows}
    eight = by_workers["8 workers, 1 MW, write-only"]
    assert eight.theirs.saturation == 3520  # Table 3's 8 WT, 1 MW row at 210 clients
    assert eight.ours.saturation == 4000
    assert eight.ratios()["saturation"] == pytest.approx(4000 / 3520)
    assert eight.ours.knee == 30  # the spec's first point past 8 clients
    section = seeds_section(read_results(folder))
    assert section is not None and len(section.rows) == 5
    draw([seeds_plan(section)], tmp_path)
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
    assert seeds_section(read_results(folder)) is not None


def test_the_asl16_baseline_curve() -> None:
    (curve,) = [c for c in all_curves() if c.seed == "asl16-003-2-baseline"]
    from cachelab.fidelity import seed_curve

    theirs, from_law = seed_curve(curve)
    assert not from_law  # the figure's mean response times, not N / X
    assert theirs.saturation == 34101
    assert theirs.knee == 112  # the first at >= 95 % of 34,101 (32,396)
    assert theirs.low_load_rt_ms == 0.64


def test_a_maximum_stated_in_the_text_is_compared_as_a_saturation_only() -> None:
    from cachelab import fidelity
    from cachelab.columns import RESPONSE_TIME_MS, THROUGHPUT_OPS_PER_S, TOTAL_CLIENTS
    from cachelab.spec import load_spec

    spec = load_spec(
        ROOT / "ops" / "experiments" / "asl17-one-mw.yaml",
        [
            "sweep.topology.workers=[16]",
            'sweep.workload.ratio=["1:0"]',
            "sweep.topology.clients_per_thread=[8, 16, 24]",
        ],
    )
    summary = [
        {
            "point": str(point.index),
            "status": "ok",
            TOTAL_CLIENTS: str(point.spec.topology.total_clients),
            THROUGHPUT_OPS_PER_S: str(throughput),
            RESPONSE_TIME_MS: "5.0",
        }
        for point, throughput in zip(spec.points(), [4000, 6000, 6100], strict=True)
    ]
    folder = Path("not-a-results-folder")
    comparison = fidelity.compare_read(folder, spec, summary, fidelity._Bottlenecks(folder))
    (row,) = comparison.rows
    assert row.series == "16 workers, write-only, stated maximum"
    assert (row.ours.saturation, row.theirs.saturation) == (6100, 7700)
    assert row.ratios()["saturation"] == pytest.approx(6100 / 7700)
    assert math.isnan(row.ratios()["knee"]) and math.isnan(row.shape_difference)
    cells = fidelity.table_rows([row])[0]
    assert cells[3] == "6,100 / 7,700 = 0.79" and cells[4].startswith("32 / \u2013")
    refused = {r.curve for r in comparison.refused}
    assert "16 workers, read-only, stated maximum" in refused  # read-only is not write-only


def test_a_factorial_table_gives_one_point_per_configuration(tmp_path: Path) -> None:
    folder = shaped_run(tmp_path, "asl17-2k-ro", worker_bound)
    rows = fidelity_rows(folder)
    assert len(rows) == 8  # Figure 24's rows, each beside the point of its M, W and S
    by_series = {r.series: r for r in rows}
    row = by_series["2 middlewares, 32 workers, 3 servers, read-only, 192 clients"]
    assert (row.theirs.x, row.theirs.saturation, row.theirs.low_load_rt_ms) == ([192], 33384, 5.79)
    assert row.ours.x == [192] and row.ours.saturation == 500.0 * 32  # one pool of 32 workers
    assert row.ours.low_load_rt_ms == pytest.approx(1000.0 * 192 / (500.0 * 32))
    assert not row.rt_from_law and row.ratios()["knee"] == 1.0
    assert compare(folder).without_numbers == ["x-asl17-2k"]


def test_a_multi_get_curve_adds_up_the_rates_the_table_prints(tmp_path: Path) -> None:
    folder = shaped_run(tmp_path, "asl17-sharded", worker_bound)
    (row,) = fidelity_rows(folder)
    assert row.series == "sharded, 12 clients, by multi-get size"
    assert row.x == "workload.multi_get" and row.theirs.x == [1, 3, 6, 9, 12]
    assert row.theirs.saturation == 2393 + 0 + 239  # Table 6's GET, MULTIGET and SET at 1 key
    assert math.isnan(row.ratios()["knee"])


def test_a_maximum_over_a_server_setting_is_one_point_over_it(tmp_path: Path) -> None:
    def peak_at_two(row: dict[str, object]) -> float:
        threads = row["server.memcached.threads"]
        assert isinstance(threads, int)
        return 200_000.0 - 10_000.0 * abs(threads - 2)

    folder = shaped_run(tmp_path, "mvr-mc-threads", peak_at_two)
    (row,) = fidelity_rows(folder)
    assert row.x == "server.memcached.threads" and row.theirs.x == [2]
    assert (row.ours.saturation, row.theirs.saturation) == (200_000, 270_000)
    assert row.shape_difference == 0  # both peak at 2 threads


def test_a_run_that_sets_a_links_rtt_is_a_series_of_its_own() -> None:
    """Two kept runs of one spec, one with `network.rtt_ms.client_server=2.0`: the table tells
    them apart by the time the spec set itself."""
    plain = compare(DATA / "fidelity" / "asl17-2.2")
    delayed = compare(DATA / "fidelity" / "asl17-2.2-rtt2")
    assert {row.experiment for row in plain.rows} == {"asl17-one-client"}
    assert {row.experiment for row in delayed.rows} == {"asl17-one-client (rtt_ms.client_server 2)"}


@pytest.mark.parametrize(
    ("folder", "series", "kind", "low", "high"),
    [
        # §3.1: 8 workers held for the 2 ms RTT and the server's service: 8 / 2.1 ms
        ("asl17-3.1-8wt-wo", "8 workers, write-only", "worker_pool_rtt", 0.85, 1.15),
        ("asl17-3.3-8wt", "8 workers, 1 MW, write-only", "worker_pool_rtt", 0.85, 1.15),
        # §2.1 / §3.1 read-only: the server's 100 Mbit/s over 1,124 B per GET
        ("asl17-2.1", "read-only, stated maximum", "server_link", 0.97, 1.03),
        ("asl17-3.1-ro-32-64wt", "64 workers, read-only, stated maximum", "server_link", 0.97, 1.1),
        # §2.2: one client machine's 200 Mbit/s over each SET's value
        ("asl17-2.2", "write-only", "client_link", 0.95, 1.10),
    ],
)
def test_the_a_priori_model_of_a_measured_run_predicts_the_seeds_ceiling(
    folder: str, series: str, kind: str, low: float, high: float
) -> None:
    """The model calibrated at a kept run's lowest load, on the seed's machines (this machine's
    shared CPU a delay) and links (the profile's RTTs, the shaped links' rates), against the
    seed's saturation: the bottleneck the seed names, and its number."""
    rows = {r.series: r for r in fidelity_rows(DATA / "fidelity" / folder)}
    row = rows[series]
    assert row.predicted_bottleneck == kind, row
    assert low <= row.ratios()["predicted_saturation"] <= high, (
        row.predicted_saturation,
        row.theirs.saturation,
    )
