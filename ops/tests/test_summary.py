"""Summary aggregation on recorded raw files (tests/data/, written by make_fixtures.py)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from cachelab.paths import repo_root
from cachelab.results import MeasuredInterval
from cachelab.summary import (
    METRIC_COLUMNS,
    SummaryError,
    build_summary,
    client_stats,
    load_memtier_json,
    read_hdr_interval_log,
    summarize_run,
    summary_columns,
)

DATA = Path(__file__).parent / "data"
RUN = DATA / "run-two-instances"


def test_client_numbers_are_trimmed_to_the_measured_seconds() -> None:
    # seconds 1..4 of 0..5: instance 0 did 200/s at 1 ms, instance 1 100/s at 2 ms
    stats = client_stats(RUN / "loadgen-0.json", MeasuredInterval.of_run(1, 1, 6))
    assert stats.totals.count == 800
    assert stats.totals.seconds == 4
    assert stats.throughput == 200.0
    assert stats.totals.mean_latency_ms == 1.0
    untrimmed = client_stats(RUN / "loadgen-0.json", MeasuredInterval.of_run(0, 0, 6))
    assert untrimmed.totals.count == 950
    assert untrimmed.totals.mean_latency_ms == pytest.approx((100 * 2 + 800 + 150) / 950)


def test_run_row_sums_throughput_and_weights_response_time() -> None:
    row = summarize_run(RUN)
    assert row["throughput_ops_per_s"] == 300.0
    assert row["get_ops_per_s"] == 300.0
    assert row["set_ops_per_s"] == 0.0
    assert row["response_time_ms"] == pytest.approx((800 * 1.0 + 400 * 2.0) / 1200)
    assert row["total_clients"] == 4
    assert row["topology.clients_per_thread"] == 2
    assert (row["hits"], row["misses"]) == (950 + 450, 3)
    assert row["miss_ratio"] == pytest.approx(3 / 1403)
    assert row["errors"] == 0
    assert row["status"] == "ok"


def test_percentiles_come_from_the_merged_trimmed_histograms() -> None:
    # measured: 800 requests at 1 ms and 400 at 2 ms (the 3 ms tail is in the cool-down)
    row = summarize_run(RUN)
    assert row["p50_ms"] == pytest.approx(1.0, rel=1e-3)
    assert row["p90_ms"] == pytest.approx(2.0, rel=1e-3)
    assert row["p99_ms"] == pytest.approx(2.0, rel=1e-3)


def test_absolute_and_relative_interval_logs_select_the_same_seconds() -> None:
    absolute = read_hdr_interval_log(RUN / "loadgen-0-hdr_FULL_RUN_1.txt", MeasuredInterval(1, 5))
    relative = read_hdr_interval_log(RUN / "loadgen-1-hdr_FULL_RUN_1.txt", MeasuredInterval(1, 5))
    assert absolute is not None and relative is not None
    assert absolute.get_total_count() == 800
    assert relative.get_total_count() == 400


def test_without_interval_logs_the_json_histograms_are_merged(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    for log in run.glob("*FULL_RUN*"):
        log.unlink()
    row = summarize_run(run)
    # whole-run histograms include the 3 ms tail of instance 0 (50 of 1350 requests)
    assert row["p99_ms"] == pytest.approx(3.0, rel=1e-3)


def test_middleware_windows_are_aligned_with_the_client_interval() -> None:
    row = summarize_run(RUN)
    assert row["mw_throughput_ops_per_s"] == 300.0
    assert row["mw_response_time_ms"] == pytest.approx(0.5)
    assert row["mw_queue_time_ms"] == pytest.approx(0.1)
    assert row["mw_service_time_ms"] == pytest.approx(0.3)
    assert row["mw_queue_length"] == pytest.approx(0.5)


def test_middleware_summary_json_is_the_fallback(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "middleware-0" / "windows.csv").unlink()
    row = summarize_run(run)
    assert row["mw_throughput_ops_per_s"] == 299.0
    assert row["mw_response_time_ms"] == pytest.approx(0.51)
    assert row["mw_queue_length"] == pytest.approx(0.6)


def test_missing_loadgen_output_marks_the_row_partial(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "loadgen-1.json").unlink()
    row = summarize_run(run)
    assert row["status"] == "partial"
    # half the clients measured: no number of the run stands for the point, so none is written
    for column in ("throughput_ops_per_s", "response_time_ms", "mw_throughput_ops_per_s"):
        assert row.get(column) is None, column
    assert row["total_clients"] > 0  # what the run was is kept


def test_memtier_multi_run_section_and_nan_values() -> None:
    data = load_memtier_json(DATA / "memtier-aggregated.json")
    assert "AGGREGATED AVERAGE RESULTS (3 runs)" in data
    stats = client_stats(DATA / "memtier-aggregated.json", MeasuredInterval.of_run(0, 0, 6))
    assert stats.totals.count == 20
    assert stats.throughput == pytest.approx(20 / 6)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "top level is not an object"),
        ('{"configuration": {}}', "no 'ALL STATS' section"),
        ('{"ALL STATS": {"Gets": {}}}', "'ALL STATS' has no 'Totals'"),
    ],
)
def test_bad_loadgen_json_is_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "loadgen-0.json"
    path.write_text(content)
    with pytest.raises(SummaryError, match=message) as caught:
        client_stats(path, MeasuredInterval.of_run(0, 0, 5))
    assert str(path) in str(caught.value)


def test_build_summary_writes_the_documented_columns(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(RUN, results / "raw" / "p0-r0")
    (results / "spec.yaml").write_text(
        "name: fixture\nsweep:\n  topology.clients_per_thread: [2]\n"
    )
    path = build_summary(results)
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == summary_columns(["topology.clients_per_thread"])
    assert list(rows[0])[-len(METRIC_COLUMNS) :] == METRIC_COLUMNS
    assert rows[0]["throughput_ops_per_s"] == "300"
    assert rows[0]["status"] == "ok"
    assert json.loads((RUN / "point.json").read_text())["point"] == int(rows[0]["point"])


def test_columns_match_the_interfaces_doc() -> None:
    doc = (repo_root() / "docs" / "interfaces.md").read_text()
    section = doc.split("`summary.csv`", 1)[1]
    for column in summary_columns([]):
        assert f"`{column}`" in section, column


def test_error_replies_of_our_loadgen_count_as_errors(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    doc = json.loads((run / "loadgen-1.json").read_text())
    doc["ALL STATS"]["Totals"]["Error Replies"] = 7
    (run / "loadgen-1.json").write_text(json.dumps(doc))
    assert summarize_run(run)["errors"] == 7


def test_middleware_summary_without_counts_still_gives_times(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "middleware-0" / "windows.csv").unlink()
    summary = json.loads((run / "middleware-0" / "summary.json").read_text())
    del summary["ops"]["all"]["count"]
    (run / "middleware-0" / "summary.json").write_text(json.dumps(summary))
    row = summarize_run(run)
    assert row["mw_response_time_ms"] == pytest.approx(0.51)
    assert row["mw_queue_time_ms"] == pytest.approx(0.11)


def test_the_busiest_server_and_the_hot_keys_have_columns(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    start = json.loads((run / "loadgen-0.json").read_text())["ALL STATS"]["Runtime"]["Start time"]
    lines = ["epoch_ms,role,name,pid,cpu_s"]
    for epoch, a, b in ((start + 1100, 1.0, 2.0), (start + 4900, 1.38, 3.9)):
        lines += [f"{epoch},server,server-0,11,{a}", f"{epoch},server,server-1,12,{b}"]
    (run / "cpu.csv").write_text("\n".join(lines) + "\n")
    for i, top in ((0, {"memtier-1": 300, "memtier-2": 100}), (1, {"memtier-1": 150})):
        doc = json.loads((run / f"loadgen-{i}.json").read_text())
        doc["ALL STATS"]["Key Counts"] = {
            "Keys Requested": 1000,
            "Top Keys": [{"Key": k, "Count": c, "Overcount": 0} for k, c in top.items()],
            "Other Keys At Most": 90,
            "Key Octaves": [],
        }
        (run / f"loadgen-{i}.json").write_text(json.dumps(doc))
    summary = json.loads((run / "middleware-0" / "summary.json").read_text())
    summary["servers"] = [
        {"address": "127.0.0.1:1", "requests": 300, "errors": 0},
        {"address": "127.0.0.1:2", "requests": 100, "errors": 0},
        {"address": "127.0.0.1:3", "requests": 200, "errors": 0},
    ]
    (run / "middleware-0" / "summary.json").write_text(json.dumps(summary))
    row = summarize_run(run)
    assert row["server_requests_max_over_mean"] == pytest.approx(300 / 200)
    assert row["cpu_server_cores"] == pytest.approx(0.1 + 0.5)
    assert row["cpu_server_max_cores"] == pytest.approx(0.5)
    assert row["hot_key_share"] == pytest.approx(450 / 2000)
    # memtier's JSON has no key counts: no share rather than a wrong one
    assert "hot_key_share" not in summarize_run(RUN)
