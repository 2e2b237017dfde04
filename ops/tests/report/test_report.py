"""build_report on the recorded results fixture and on synthesised variants."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from cachelab.analysis.aggregate import window_series, window_std
from cachelab.report import ReportError, build_report
from cachelab.results import MeasuredInterval, ResultsDir, ResultsError
from cachelab.results.experiment import read_experiment
from cachelab.results.memtier import read_loadgen_json
from cachelab.summary import summary_columns

from .sample import SAMPLE_DIR, copy_sample, generator, sample_spec

EXPECTED_FIGURES = {
    "throughput.png",
    "both_sides.png",
    "mw_breakdown.png",
    "queue_length.png",
    "latency_distribution.png",
    "windows.png",
    "rt_per_op.png",
    "interactive_law.png",
    "mva_model.png",
    "utilisation.png",
    # no seeds.png: the sample names asl17-3.1-one-mw, but it is read-only against 3 servers and
    # the seed published write-only numbers against 1 (tests/test_fidelity.py draws like pairs)
}


def _images(html: str) -> set[str]:
    return set(re.findall(r'<img src="([^"]+)"', html))


def test_fixture_matches_the_results_contract() -> None:
    summary = pd.read_csv(SAMPLE_DIR / "summary.csv")
    axes = ["topology.clients_per_thread", "topology.workers"]
    assert list(summary.columns) == summary_columns(axes)
    runs = ResultsDir(SAMPLE_DIR).runs()
    assert len(runs) == len(summary) == 12
    for run in runs:
        assert run.point_file.is_file()
        assert run.loadgen_files() and run.middleware_dirs()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture copied once per module and its report built (the tests only read it)."""
    results = copy_sample(tmp_path_factory.mktemp("built"))
    build_report(results)
    return results


def test_report_builds_index_with_every_figure(built: Path) -> None:
    results = built
    index = results / "report" / "index.html"
    html = index.read_text()
    assert _images(html) == EXPECTED_FIGURES
    for name in EXPECTED_FIGURES:
        png = results / "report" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert "Interactive law" in html and "Queueing models" in html
    assert "2<sup>k</sup>" not in html  # 3 x 2 sweep: not a 2-level design
    points = pd.read_csv(results / "report" / "points.csv")
    assert len(points) == 6
    assert points["law_deviation_worst_pct"].abs().max() < 10  # the law holds per repetition
    assert (points["throughput_window_std_ops_per_s"] > 0).all()


def test_report_interactive_law_table_has_one_row_per_point(built: Path) -> None:
    html = (built / "report" / "index.html").read_text()
    section = html.split('id="interactive-law"')[1].split("</table>")[0]
    assert section.count("<tr>") == 1 + 6


def test_report_shows_the_run_facts(built: Path) -> None:
    html = (built / "report" / "index.html").read_text()
    assert "0" * 40 in html  # git sha from metadata.json
    assert "12 / 12 runs" in html  # runs_done / runs_total from status.json
    assert "synthetic data" in html


def test_report_is_repeatable(built: Path) -> None:
    first = (built / "report" / "index.html").read_text()
    assert build_report(built).read_text() == first


def test_factorial_sweep_gets_the_2k_section(tmp_path: Path) -> None:
    spec = sample_spec(
        name="factorial-sample",
        sweep={
            "topology.middlewares": [1, 2],
            "topology.workers": [2, 8],
            "topology.servers": [2, 3],
        },
        run={"repetitions": 3, "duration_s": 8, "warmup_s": 2, "cooldown_s": 2},
        report={"x": "workers"},
    )
    spec["topology"]["clients_per_thread"] = 8
    results = generator().write_results(tmp_path / "factorial", spec, seed=6)
    html = build_report(results).read_text()
    assert "2<sup>k</sup> r factorial analysis" in html
    assert {"factorial_tp.png", "factorial_rt.png", "factorial_inv_rt.png"} <= _images(html)
    assert "Response: throughput" in html and "Response: 1 / response time" in html
    assert "Response: response time" in html
    assert "workers·servers" in html


def test_no_middleware_results_skip_the_breakdown(tmp_path: Path) -> None:
    spec = sample_spec(name="baseline-sample", sweep={"topology.clients_per_thread": [1, 4, 8]})
    spec["topology"]["middlewares"] = 0
    spec["report"] = {"x": "total_clients"}
    results = generator().write_results(tmp_path / "baseline", spec)
    html = build_report(results).read_text()
    images = _images(html)
    assert "mw_breakdown.png" not in images and "mva_model.png" not in images
    assert {"throughput.png", "interactive_law.png"} <= images
    assert "Queueing models" not in html


def test_failed_rows_are_left_out_and_counted(tmp_path: Path) -> None:
    results = copy_sample(tmp_path)
    summary = pd.read_csv(results / "summary.csv")
    summary.loc[0, "status"] = "failed"
    summary.loc[1, "status"] = "partial"
    summary.to_csv(results / "summary.csv", index=False)
    html = build_report(results).read_text()
    assert "1 failed (left out)" in html and "1 partial" in html


def test_an_incomplete_experiment_says_so_at_the_top(tmp_path: Path) -> None:
    results = copy_sample(tmp_path)
    assert "Incomplete experiment" not in build_report(results).read_text()
    status = json.loads((results / "status.json").read_text())
    status.update(state="interrupted", runs_done=5, message="stopped by Ctrl-C, SIGTERM or SIGHUP")
    (results / "status.json").write_text(json.dumps(status))
    html = build_report(results).read_text()
    banner = html[: html.index("<nav>")]  # before the contents, not only in the Run table
    assert "<b>Incomplete experiment:</b> interrupted, 5 / 12 runs (stopped by Ctrl-C" in banner
    (results / "status.json").unlink()
    html = build_report(results).read_text()
    assert "<b>No status.json:</b> whether every run" in html[: html.index("<nav>")]


def test_missing_files_and_columns_are_named(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="not a directory"):
        build_report(tmp_path / "nope")
    results = copy_sample(tmp_path)
    (results / "spec.yaml").rename(results / "spec.bak")
    with pytest.raises(ReportError, match=r"spec.yaml: missing"):
        build_report(results)
    (results / "spec.bak").rename(results / "spec.yaml")
    summary = pd.read_csv(results / "summary.csv")
    summary.drop(columns=["think_time_ms"]).to_csv(results / "summary.csv", index=False)
    with pytest.raises(ReportError, match=r"missing columns \['think_time_ms'\]"):
        build_report(results)
    summary.assign(status="failed").to_csv(results / "summary.csv", index=False)
    with pytest.raises(ReportError, match="no row with status ok and a measured throughput"):
        build_report(results)
    summary.to_csv(results / "summary.csv", index=False)
    spec_text = (results / "spec.yaml").read_text().replace("x: total_clients", "x: nope")
    (results / "spec.yaml").write_text(spec_text)
    # the spec check names it before the report's own check can
    with pytest.raises(ReportError, match=r"report\.x: 'nope' is not a summary.csv column"):
        build_report(results)


def test_window_std_is_the_root_of_mean_window_variance() -> None:
    frame = window_std(read_experiment(SAMPLE_DIR).runs)
    assert list(frame["point"]) == list(range(6))
    assert (frame["repetitions"] == 2).all()
    # recompute point 0 by hand from the two loadgen files
    variances = []
    for rep in (0, 1):
        run = read_loadgen_json(SAMPLE_DIR / "raw" / f"p0-r{rep}" / "loadgen-0.json")
        counts = [run.totals.time_series[s].count for s in range(2, 8)]
        mean = sum(counts) / len(counts)
        variances.append(sum((c - mean) ** 2 for c in counts) / len(counts))
    assert frame.loc[0, "throughput_window_std_ops_per_s"] == pytest.approx(
        (sum(variances) / 2) ** 0.5
    )


def test_loadgen_reader_accepts_memtier_quirks_and_rejects_garbage(tmp_path: Path) -> None:
    source = json.loads((SAMPLE_DIR / "raw" / "p0-r0" / "loadgen-0.json").read_text())
    stats = source.pop("ALL STATS")
    source["AGGREGATED AVERAGE RESULTS (3 runs)"] = stats
    text = json.dumps(source).replace('"Min Latency": 0.0', '"Min Latency": -nan', 1)
    path = tmp_path / "loadgen-0.json"
    path.write_text(text)
    run = read_loadgen_json(path)
    assert run.totals.count > 0 and 99.0 in run.totals.percentiles_ms
    path.write_text("{not json")
    with pytest.raises(ResultsError, match="not valid JSON"):
        read_loadgen_json(path)
    path.write_text('{"configuration": {}}')
    with pytest.raises(ResultsError, match="no 'ALL STATS' section"):
        read_loadgen_json(path)


def test_histogram_falls_back_to_hgrm_without_json_arrays(tmp_path: Path) -> None:
    # the local runner passes --hide-histogram, so only the .hgrm files carry the distribution
    results = copy_sample(tmp_path)
    for path in (results / "raw").glob("*/loadgen-*.json"):
        document = json.loads(path.read_text())
        document["ALL STATS"]["GET"] = []
        document["ALL STATS"]["Totals"]["Percentile Latencies"] = {}  # only the .hgrm is left
        path.write_text(json.dumps(document))
    html = build_report(results).read_text()
    assert "latency_distribution.png" in _images(html)


RECORDED = SAMPLE_DIR.parent / "results-recorded-2k"


def test_window_aggregation_reproduces_the_runners_summary_on_a_recorded_run() -> None:
    # The runner's summary.csv and this package's window reader must agree on what a run
    # measured: TP summed over instances, RT averaged weighted by counts, [warmup, end - cooldown)
    summary = pd.read_csv(RECORDED / "summary.csv")
    for run_dir in ResultsDir(RECORDED).runs():
        runs = [read_loadgen_json(f) for f in run_dir.loadgen_files()]
        windows = window_series(runs, MeasuredInterval.of_run(1, 1, 6))
        row = summary[
            (summary["point"] == run_dir.point) & (summary["repetition"] == run_dir.repetition)
        ]
        tp = windows["throughput_ops_per_s"]
        assert tp.mean() == pytest.approx(float(row["throughput_ops_per_s"].iloc[0]), rel=1e-4)
        rt = (tp * windows["response_time_ms"]).sum() / tp.sum()
        assert rt == pytest.approx(float(row["response_time_ms"].iloc[0]), rel=1e-4)


def test_report_on_a_recorded_2k_run(tmp_path: Path) -> None:
    results = tmp_path / "recorded"
    shutil.copytree(RECORDED, results)
    html = build_report(results).read_text()
    images = _images(html)
    assert {"throughput.png", "both_sides.png", "mw_breakdown.png"} <= images
    assert {"factorial_tp.png", "factorial_inv_rt.png", "latency_distribution.png"} <= images
    assert "workers·servers" in html
    points = pd.read_csv(results / "report" / "points.csv")
    assert len(points) == 4 and (points["repetitions"] == 2).all()
    section = html.split('id="interactive-law"')[1].split("</table>")[0]
    assert section.count("<tr>") == 1 + 4


def test_text_axis_report(tmp_path: Path) -> None:
    spec = sample_spec(
        name="ratio-sample",
        sweep={"workload.ratio": ["1:99", "1:9", "1:1"], "workload.replication": [1, 3]},
        report={"x": "workload.ratio", "series": "workload.replication"},
    )
    results = generator().write_results(tmp_path / "ratio", spec)
    html = build_report(results).read_text()
    assert {"throughput.png", "mw_breakdown.png"} <= _images(html)
    assert "mva_model.png" not in _images(html)  # the MVA curve needs clients on x
