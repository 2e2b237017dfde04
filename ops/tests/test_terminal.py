"""What `cachelab run` prints (cachelab.terminal): the 80-column closing table, run lines that
name their parameters, plain logs when stdout is not a terminal, and the live line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from cachelab.paths import repo_root
from cachelab.results import RunRecord
from cachelab.spec import parse_spec
from cachelab.terminal import (
    TABLE_WIDTH,
    LiveSample,
    RunLines,
    combine,
    last_progress,
    parse_progress,
    summary_table,
)

SAMPLE = Path(__file__).parent / "data" / "results-sample"
SUMMARY_HEADER = (
    "point,repetition,topology.clients_per_thread,topology.workers,workload.ratio,total_clients,"
    "throughput_ops_per_s,response_time_ms,p99_ms,mw_throughput_ops_per_s,mw_response_time_ms,"
    "mw_queue_time_ms,mw_service_time_ms,misses"
)
AXES = ["topology.clients_per_thread", "topology.workers", "workload.ratio"]


def _render(table: object, width: int) -> list[str]:
    console = Console(width=width, no_color=True, file=io.StringIO())
    with console.capture() as capture:
        console.print(table)
    return capture.get().splitlines()


@pytest.fixture
def wide_summary(tmp_path: Path) -> Path:
    """Three swept axes and every measure column: wider than 80 columns if nothing gave way."""
    lines = [SUMMARY_HEADER]
    for point, (c, w, r) in enumerate([(1, 8, "0:1"), (16, 64, "1:9"), (128, 128, "1:0")]):
        for rep in range(2):
            lines.append(
                f"{point},{rep},{c},{w},{r},{c * 6},123456.7,12.345,123.456,123450.1,"
                f"11.111,9.999,1.234,0"
            )
    path = tmp_path / "summary.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_closing_table_fits_80_columns_without_cutting_cells(wide_summary: Path) -> None:
    lines = _render(summary_table(wide_summary, AXES), width=200)
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    text = "\n".join(lines)
    assert "…" not in text
    header = lines[0] + lines[1] if not lines[0].strip() else lines[0]
    # clients per thread, not the total the report's x axis counts
    for name in ("clients/thr", "workers", "ratio", "reps", "ops/s", "RT ms", "p99 ms"):
        assert name in header, name
    assert "123,457" in text and "12.345" in text and "123.456" in text
    # every point has its row with its swept values
    assert any(line.split()[:4] == ["2", "128", "128", "1:0"] for line in lines)


def test_the_shipped_sample_table_fits_too() -> None:
    lines = _render(summary_table(SAMPLE / "summary.csv", ["topology.clients_per_thread"]), 200)
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    assert "…" not in "\n".join(lines)


def _plain() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=TABLE_WIDTH, no_color=True, highlight=False, soft_wrap=True)
    return console, out


def test_run_lines_name_the_point_values_and_logs_stay_plain() -> None:
    spec = parse_spec(
        {
            "name": "t",
            "sweep": {"topology.clients_per_thread": [1, 8], "topology.workers": [8, 32]},
        }
    )
    point = spec.points()[3]
    console, out = _plain()
    lines = RunLines(console, run_s=10)
    lines.start_run(4, 4, point, 1)
    for second in range(12):
        lines.live(LiveSample(second, 11319.4, 1.2345, 3.5, 0))
    row = {"throughput_ops_per_s": 11319.4, "response_time_ms": 1.2345, "p99_ms": 3.5}
    lines.finish_run(RunRecord(3, 1, "ok"), point, row)
    text = out.getvalue().splitlines()
    assert text[0].startswith("[4/4] p3 r1 (clients_per_thread=8, workers=32): starting")
    assert text[-1] == (
        "[4/4] p3 r1 (clients_per_thread=8, workers=32) ok: 11,319 ops/s, mean 1.234 ms, "
        "p99 3.500 ms"
    )
    live = [line for line in text if "errors" in line]
    assert len(live) == 3  # seconds 0, 5 and 10: a log gets a live line every 5 s
    assert "11,319 ops/s  mean 1.234 ms  p99 3.500 ms  0 errors" in live[0]
    # no padding to the console width, no source locations
    assert all(line == line.rstrip() for line in text)
    assert not any(".py:" in line for line in text)


PROGRESS = (
    "[RUN #1  45%,   9 secs]  2 threads:      612345 ops,    68012 (avg:    68038) ops/sec, "
    "0.471 (avg: 0.470) msec latency, 1.203 p99 msec, 3 errors"
)


def test_the_loadgen_progress_line_is_parsed_and_instances_combined(tmp_path: Path) -> None:
    sample = parse_progress(PROGRESS)
    assert sample == LiveSample(9, 68012.0, 0.471, 1.203, 3)
    assert parse_progress("error: connection refused") is None
    other = LiveSample(9, 32000.0, 1.0, 2.5, 1)
    both = combine([sample, other])
    assert both is not None
    assert both.ops_per_s == 100012.0 and both.errors == 4 and both.p99_ms == 2.5
    assert both.mean_ms == pytest.approx((68012 * 0.471 + 32000 * 1.0) / 100012)
    log = tmp_path / "loadgen-0.log"
    log.write_text("starting\n" + PROGRESS.replace("9 secs", "8 secs") + "\n" + PROGRESS + "\n")
    assert last_progress(log) == sample
    assert last_progress(tmp_path / "missing.log") is None


# memtier_benchmark's progress line in each format its source prints (tests/data/README.md).
MEMTIER_FORMATS = dict(
    line.split("\t", 1)
    for line in (Path(__file__).parent / "data" / "memtier-progress-formats.tsv")
    .read_text()
    .splitlines()
)


def test_memtier_progress_lines_of_each_version_are_parsed_without_p99() -> None:
    # 2.1 (the k8s default image's version): this second's ops/s and mean, no p99, no errors
    assert parse_progress(MEMTIER_FORMATS["2.1"]) == LiveSample(2, 12410.0, 0.64, None, None)
    # later versions name the connections, and the connection errors once there are any
    assert parse_progress(MEMTIER_FORMATS["conns"]) == LiveSample(2, 44110.0, 0.91, None, 0)
    assert parse_progress(MEMTIER_FORMATS["conn-errors"]) == LiveSample(3, 32280.0, 1.24, None, 3)
    # a second without replies has no mean
    assert parse_progress(MEMTIER_FORMATS["nan"]) == LiveSample(3, 0.0, None, None, None)
    # lines that cannot be parsed are not progress (no error): run averages only (early memtier
    # versions), a line cut short
    assert parse_progress(MEMTIER_FORMATS["averages-only"]) is None
    assert parse_progress(MEMTIER_FORMATS["cut"]) is None
    assert parse_progress("[RUN #1] Launching threads now...") is None


def test_the_live_line_of_memtier_shows_a_dash_for_what_it_does_not_print() -> None:
    sample = parse_progress(MEMTIER_FORMATS["2.1"])
    assert sample is not None
    assert sample.text() == "  2s     12,410 ops/s  mean 0.640 ms  p99 \u2013  \u2013 errors"
    counted = parse_progress(MEMTIER_FORMATS["conn-errors"])
    assert counted is not None and counted.text().endswith("p99 \u2013  3 errors")
    idle = parse_progress(MEMTIER_FORMATS["nan"])
    assert idle is not None and "0 ops/s  mean \u2013  p99 \u2013" in idle.text()
    console, out = _plain()
    lines = RunLines(console, run_s=4)
    lines.live(sample)  # the same sink as the cachelab loadgen's samples
    assert out.getvalue().rstrip().endswith("mean 0.640 ms  p99 \u2013  \u2013 errors")


def test_memtier_instances_combine_and_a_measure_one_lacks_stays_unknown() -> None:
    a = parse_progress(MEMTIER_FORMATS["conns"])
    b = parse_progress(MEMTIER_FORMATS["conn-errors"])
    idle = parse_progress(MEMTIER_FORMATS["nan"])
    old = parse_progress(MEMTIER_FORMATS["2.1"])
    assert a is not None and b is not None and idle is not None and old is not None
    both = combine([a, b])
    assert both == LiveSample(3, 44110.0 + 32280.0, pytest.approx(
        (0.91 * 44110 + 1.24 * 32280) / (44110 + 32280)), None, 3)  # fmt: skip
    # an instance without a mean (no replies this second) weighs nothing in it
    with_idle = combine([a, idle])
    assert with_idle is not None and with_idle.mean_ms == pytest.approx(0.91)
    assert with_idle.errors is None  # one instance does not count errors: the sum is unknown
    only_idle = combine([idle])
    assert only_idle is not None and only_idle.mean_ms is None
    # a p99 that one instance lacks is not made up from the others
    cachelab = parse_progress(PROGRESS)
    assert cachelab is not None
    mixed = combine([cachelab, old])
    assert mixed is not None and mixed.p99_ms is None and mixed.errors is None
    assert mixed.ops_per_s == 68012.0 + 12410.0


README = repo_root() / "README.md"
RECORDED_QUICKSTART = Path(__file__).parent / "data" / "results-recorded-quickstart"


def _readme_blocks() -> list[list[str]]:
    blocks, inside, current = [], False, []
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if inside:
                blocks.append(current)
            inside, current = not inside, []
        elif inside:
            current.append(line)
    return blocks


def test_the_readmes_sample_table_is_what_the_current_code_prints() -> None:
    """The README's `make run` table has the header, rule and row shape of summary_table's output
    for a recorded quickstart run (same columns in the same order, a row per point)."""
    (sample,) = [b for b in _readme_blocks() if b and b[0].lstrip().startswith("p  clients/thr")]
    spec = parse_spec(yaml.safe_load((RECORDED_QUICKSTART / "spec.yaml").read_text()))
    ours = _render(summary_table(RECORDED_QUICKSTART / "summary.csv", list(spec.sweep)), 200)
    assert sample[0].split() == ours[0].split()
    assert set(sample[1]) == set(ours[1]) and len(sample[1]) == len(ours[1])
    assert [len(row.split()) for row in sample[2:]] == [len(row.split()) for row in ours[2:10]]


def test_the_readmes_results_tree_names_what_a_run_writes() -> None:
    (tree,) = [b for b in _readme_blocks() if b and b[0].startswith("results/quickstart/")]
    named = [word for line in tree[1:] for word in line.split() if "/" in word or "." in word]
    assert named[:4] == ["spec.yaml", "metadata.json", "status.json", "summary.csv"]
    for name in named[:4]:
        assert (RECORDED_QUICKSTART / name).is_file(), name
    assert any(p.is_dir() for p in (RECORDED_QUICKSTART / "raw").glob("p*-r*"))
