"""Tail breakdown: p50/p90/p99 of the middleware's queue and service times and of the rest, from
its HDR interval logs over the measured seconds, in the summary row and the report section."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from cachelab.report.figures.plan import draw, tail_plan
from cachelab.report.read import read_summary_rows
from cachelab.report.sections.tail import TAIL_FIGURE, tail_section
from cachelab.summary import summarize_run, write_summary_csv
from cachelab.tail import measured_histogram, tail_columns_names

RUN = Path(__file__).parent / "data" / "results-sample" / "raw" / "p0-r0"


def write_log(path: Path, start_s: float, seconds: list[list[int]]) -> None:
    """One interval per second, each holding the given values (µs)."""
    lines = [
        "#cachelab middleware test, us",
        "#[Histogram log format version 1.3]",
        f"#[StartTime: {start_s:.3f} (seconds since epoch), test]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    for k, values in enumerate(seconds):
        histogram = HdrHistogram(1, 60_000_000, 3)
        for value in values:
            histogram.record_value(value)
        payload = histogram.encode().decode()
        lines.append(f"{start_s + k:.3f},1.000,{max(values) / 1000:.3f},{payload}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def test_only_the_measured_seconds_count(tmp_path: Path) -> None:
    log = tmp_path / "queue_time_all.hlog"
    write_log(log, 1000.0, [[50_000] * 10, [100] * 10, [200] * 10, [90_000] * 10])
    histogram = measured_histogram(log, 1001.0, 1003.0)  # seconds 1 and 2 only
    assert histogram is not None
    assert histogram.get_total_count() == 20
    assert histogram.get_max_value() < 1000


def test_a_run_gets_tail_columns_and_the_report_a_figure(tmp_path: Path) -> None:
    run = tmp_path / "results" / "raw" / "p0-r0"
    shutil.copytree(RUN, run)
    origin_s = _origin_s(run)
    mw = run / "middleware-0" / "histograms"
    seconds = 12
    write_log(mw / "queue_time_all.hlog", origin_s, [[100, 200, 5_000]] * seconds)
    write_log(mw / "service_time_all.hlog", origin_s, [[400, 500, 9_000]] * seconds)
    write_log(mw / "response_time_all.hlog", origin_s, [[500, 700, 14_000]] * seconds)
    row = summarize_run(run)
    for column in tail_columns_names():
        assert column in row, column
    assert row["tail_queue_p50_ms"] == pytest.approx(0.2, rel=0.01)
    assert row["tail_service_p99_ms"] == pytest.approx(9.0, rel=0.01)
    assert row["tail_rest_p50_ms"] >= 0
    results = tmp_path / "results"
    write_summary_csv([row], [], results / "summary.csv")
    section = tail_section(read_summary_rows(results), [])
    assert section is not None
    draw([tail_plan(section)], tmp_path)
    assert (tmp_path / TAIL_FIGURE).stat().st_size > 10_000
    assert section.rows[0]["queue p99 ms"] == pytest.approx(5.0, rel=0.01)


def _origin_s(run: Path) -> float:
    from cachelab.results.layout import RunDir
    from cachelab.results.run import read_run

    data = read_run(RunDir(0, 0, run))
    assert data.origin_epoch_ms is not None
    return data.origin_epoch_ms / 1000.0
