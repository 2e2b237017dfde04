"""The results folder layout, status.json and metadata.json."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import pytest

from cachelab.paths import repo_root
from cachelab.results import ResultsDir, RunRecord, Status, collect_metadata, utc_stamp

ROOT = repo_root()


def test_layout_names_every_part(tmp_path: Path) -> None:
    results = ResultsDir.create(tmp_path, "quickstart", stamp="20261121T150600Z")
    assert results.path == tmp_path / "quickstart" / "20261121T150600Z"
    assert results.raw_dir.is_dir()
    assert results.run_dir(3, 1) == results.path / "raw" / "p3-r1"
    assert results.run_dir(3, 1).is_dir()
    assert results.spec_file.name == "spec.yaml"
    assert results.metadata_file.name == "metadata.json"
    assert results.summary_file.name == "summary.csv"
    assert results.status_file.name == "status.json"
    assert results.report_dir == results.path / "report"


def test_two_experiments_started_in_the_same_second_get_two_folders(tmp_path: Path) -> None:
    first = ResultsDir.create(tmp_path, "x", stamp="20261121T150600Z")
    second = ResultsDir.create(tmp_path, "x", stamp="20261121T150600Z")
    assert first.path != second.path


def test_run_dirs_are_listed_in_point_then_repetition_order(tmp_path: Path) -> None:
    results = ResultsDir.create(tmp_path, "x")
    for point, rep in [(10, 0), (2, 1), (2, 0)]:
        results.run_dir(point, rep)
    (results.raw_dir / "notes").mkdir()
    assert [p.name for p in results.run_dirs()] == ["p2-r0", "p2-r1", "p10-r0"]


def test_utc_stamp_format() -> None:
    assert utc_stamp(dt.datetime(2026, 11, 21, 15, 6, tzinfo=dt.UTC)) == "20261121T150600Z"


def test_status_round_trips_and_counts_runs(tmp_path: Path) -> None:
    status = Status(experiment="x", target="local", runs_total=4)
    status.record(RunRecord(0, 0, "ok"))
    status.record(RunRecord(0, 1, "partial", "interrupted"))
    status.record(RunRecord(0, 1, "ok"))  # a rerun replaces the record
    status.finish("interrupted", "Ctrl-C")
    path = tmp_path / "status.json"
    status.save(path)
    data = json.loads(path.read_text())
    assert data["runs_done"] == 2
    assert data["state"] == "interrupted"
    loaded = Status.load(path)
    assert loaded.runs == status.runs
    assert loaded.finished is not None


def test_metadata_has_git_sha_tools_and_host() -> None:
    meta = collect_metadata(ROOT, jars={"missing": ROOT / "no-such.jar"})
    assert meta["git"]["sha"] and len(meta["git"]["sha"]) == 40
    assert meta["tools"]["memcached"].startswith("memcached")
    assert "v=" in meta["tools"]["redis-server"]
    assert meta["host"]["cpu_count"] >= 1
    assert meta["jars"]["missing"]["sha256"] is None


def test_middleware_windows_split_the_queue_time_at_publishing(tmp_path: Path) -> None:
    from cachelab.results.middleware import measured_windows, read_windows
    from cachelab.results.trim import MeasuredInterval

    header = (
        "window,start_epoch_ms,duration_ms,op,count,throughput_ops_per_s,response_time_mean_us,"
        "queue_time_mean_us,service_time_mean_us,response_time_p50_us,response_time_p99_us,"
        "queue_length_mean,queue_length_max,keys_requested,hits,errors"
    )
    rows = [
        "0,1000,1000,all,100,100,300,100,150,250,900,1.5,4,100,100,0",
        "1,2000,1000,all,300,300,500,200,250,450,990,2.5,6,300,300,0",
    ]
    old = tmp_path / "old.csv"
    old.write_text("\n".join([header, *rows]) + "\n")
    stats = measured_windows(read_windows(old), 0.0, MeasuredInterval(0, 4))
    assert stats is not None and math.isnan(stats.staging_time_ms)  # written before the split
    new = tmp_path / "new.csv"
    new.write_text(
        "\n".join([header + ",staging_time_mean_us", rows[0] + ",40", rows[1] + ",80"]) + "\n"
    )
    stats = measured_windows(read_windows(new), 0.0, MeasuredInterval(0, 4))
    assert stats is not None
    # weighted by the windows' counts: (100 x 40 + 300 x 80) / 400 us, and the queue time's rest
    assert stats.staging_time_ms == pytest.approx(0.070)
    assert stats.queue_time_ms == pytest.approx(0.175)
    assert stats.publish_wait_ms == pytest.approx(0.105)
