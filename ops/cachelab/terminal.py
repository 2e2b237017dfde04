"""What `cachelab run` prints: run lines that name their parameters, a live line per second while a
run measures, and a closing table that fits 80 columns.

On a terminal the live line is rewritten in place (rich); when stdout is a file or a pipe (make, CI)
every line is plain text, as long as its content and no longer (no padding, no source locations),
and the live line is printed every `LOG_LIVE_EVERY_S` seconds instead. Called from the CLI's main
thread only.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cachelab.columns import (
    METRIC_COLUMNS,
    MISSES,
    MW_QUEUE_TIME_MS,
    MW_RESPONSE_TIME_MS,
    MW_SERVICE_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    P99_MS,
    RESPONSE_TIME_MS,
    TEXT_COLUMNS,
    THROUGHPUT_OPS_PER_S,
    ci95_column,
    mean_column,
)
from cachelab.results import RunRecord
from cachelab.spec import Point

TABLE_WIDTH = 80
LOG_LIVE_EVERY_S = 5
# Time a run costs beyond its duration before one has been measured (JVM starts, preload, stop).
FIRST_GUESS_OVERHEAD_S = 4.0

# The loadgen's progress line (loadgen/README.md, Output): this second's ops/s, latency and p99,
# and the error replies so far.
_PROGRESS = re.compile(
    r"\[RUN #\d+ +[\d%]*, +(?P<second>\d+) secs\].*? (?P<ops_s>[\d.]+) \(avg: +[\d.]+\) ops/sec, "
    r"(?P<mean_ms>[\d.]+) \(avg: [\d.]+\) msec latency, (?P<p99_ms>[\d.]+) p99 msec, "
    r"(?P<errors>\d+) errors"
)
# memtier_benchmark's progress line (memtier_benchmark.cpp, run_benchmark: printf format
# "[RUN #%u %.0f%%, %3u secs] %2u threads: %11lu ops, %7lu (avg: %7lu) ops/sec, %s/sec (avg:
# %s/sec), %5.2f (avg: %5.2f) msec latency", ended by a carriage return): this second's ops/s and
# mean latency, no p99. Versions after 2.1.2 put "%2u conns" after the threads, "%lu conn errors"
# after that once a connection failed (the count so far). Early versions had run averages
# only ("11857 ops/sec, 1.27MB/sec,  0.67msec latency"): it does not match and is not shown. The
# mean is "nan" (or "-nan") in a second without replies.
_MEMTIER_PROGRESS = re.compile(
    r"\[RUN #\d+ +[^,\]]*%, +(?P<second>\d+) secs\] +\d+ threads"
    r"(?P<conns> +\d+ conns(?: +(?P<conn_errors>\d+) conn errors)?)?: +\d+ ops, "
    r"+(?P<ops_s>\d+) \(avg: +\d+\) ops/sec, \S+/sec \(avg: \S+/sec\), "
    r"+(?P<mean_ms>-?nan|[\d.]+) \(avg: +(?:-?nan|[\d.]+)\) msec latency"
)
DASH = "\u2013"  # what the live line shows for a measure the loadgen does not print


def make_console() -> Console:
    """A rich console on a terminal; plain, unpadded, uncoloured lines otherwise."""
    if sys.stdout.isatty():
        return Console()
    return Console(width=TABLE_WIDTH, no_color=True, highlight=False, soft_wrap=True)


def format_seconds(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


@dataclass(frozen=True)
class LiveSample:
    """One second of a run, over all loadgen instances. None is a measure the loadgen's progress
    line does not carry (memtier: no p99, and errors only from versions that count connection
    errors; the mean of a second without replies); the live line shows it as "\u2013"."""

    second: int
    ops_per_s: float
    mean_ms: float | None
    p99_ms: float | None
    errors: int | None

    def text(self) -> str:
        return (
            f"{self.second:>3d}s {self.ops_per_s:>10,.0f} ops/s  mean {_ms(self.mean_ms)}  "
            f"p99 {_ms(self.p99_ms)}  {DASH if self.errors is None else self.errors} errors"
        )


def _ms(value: float | None) -> str:
    return DASH if value is None else f"{value:.3f} ms"


def parse_progress(line: str) -> LiveSample | None:
    """The progress line of the project's loadgen or of memtier_benchmark as a sample, or None
    for any other line (a line neither format matches is not progress)."""
    match = _PROGRESS.search(line)
    if match is not None:
        return LiveSample(
            second=int(match["second"]),
            ops_per_s=float(match["ops_s"]),
            mean_ms=float(match["mean_ms"]),
            p99_ms=float(match["p99_ms"]),
            errors=int(match["errors"]),
        )
    match = _MEMTIER_PROGRESS.search(line)
    if match is None:
        return None
    if match["conn_errors"] is not None:
        errors: int | None = int(match["conn_errors"])
    else:  # versions that print "conns" print the connection errors once there are any
        errors = 0 if match["conns"] is not None else None
    return LiveSample(
        second=int(match["second"]),
        ops_per_s=float(match["ops_s"]),
        mean_ms=None if "nan" in match["mean_ms"] else float(match["mean_ms"]),
        p99_ms=None,
        errors=errors,
    )


def last_progress(log: Path, tail_bytes: int = 2048) -> LiveSample | None:
    """The latest progress line of a loadgen log (reads only its end)."""
    try:
        with log.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - tail_bytes))
            text = handle.read().decode(errors="replace")
    except OSError:
        return None
    for line in reversed(text.splitlines()):
        sample = parse_progress(line)
        if sample is not None:
            return sample
    return None


def combine(samples: Sequence[LiveSample]) -> LiveSample | None:
    """All instances together: summed ops/s and errors, the mean weighted by ops/s, the highest
    p99 (an upper bound of the pooled p99). A measure that one instance lacks is lacking in the
    sum (p99, errors); the mean is over the instances that have one."""
    if not samples:
        return None
    ops = sum(s.ops_per_s for s in samples)
    timed = [(s.mean_ms, s.ops_per_s) for s in samples if s.mean_ms is not None]
    timed_ops = sum(weight for _, weight in timed)
    if timed_ops > 0:
        mean: float | None = sum(m * weight for m, weight in timed) / timed_ops
    else:
        mean = 0.0 if timed else None
    p99s = [s.p99_ms for s in samples if s.p99_ms is not None]
    errors = [s.errors for s in samples if s.errors is not None]
    return LiveSample(
        second=max(s.second for s in samples),
        ops_per_s=ops,
        mean_ms=mean,
        p99_ms=max(p99s) if len(p99s) == len(samples) else None,
        errors=sum(errors) if len(errors) == len(samples) else None,
    )


def point_text(point: Point, repetition: int) -> str:
    """`p3 r1 (workers=8, clients_per_thread=4)`: the run and the values it sweeps."""
    values = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in point.values.items())
    return f"p{point.index} r{repetition}" + (f" ({values})" if values else "")


class RunLines:
    """The loop's reporter on a console (cachelab.experiment.Reporter), and the sink of the
    executors' live samples."""

    def __init__(self, console: Console, run_s: float) -> None:
        self.console = console
        self.run_s = run_s
        self.live_enabled = console.is_terminal
        self.finished_s: list[float] = []
        self._started = time.monotonic()
        self._number = 0
        self._total = 0
        self._prefix = ""
        self._last_logged = -LOG_LIVE_EVERY_S
        self._status: Any = None

    def estimate_left_s(self) -> float:
        per_run = (
            sum(self.finished_s) / len(self.finished_s)
            if self.finished_s
            else self.run_s + FIRST_GUESS_OVERHEAD_S
        )
        return per_run * (self._total - self._number + 1)

    def start_run(self, number: int, total: int, point: Point, repetition: int) -> None:
        self._number, self._total = number, total
        self._started = time.monotonic()
        self._last_logged = -LOG_LIVE_EVERY_S
        self._prefix = f"[{number}/{total}] {point_text(point, repetition)}"
        left = format_seconds(self.estimate_left_s())
        if self.live_enabled:
            self._status = self.console.status(f"{self._prefix}: starting ({left} left)")
            self._status.start()
        else:
            self.console.print(f"{self._prefix}: starting, about {left} left", highlight=False)

    def live(self, sample: LiveSample) -> None:
        """One second of the current run (called by the executor while its loadgens run)."""
        text = f"{self._prefix} {sample.text()}"
        if self._status is not None:
            self._status.update(text)
        elif sample.second - self._last_logged >= LOG_LIVE_EVERY_S:
            self._last_logged = sample.second
            self.console.print(text, highlight=False)

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def finish_run(self, record: RunRecord, point: Point, row: dict[str, Any] | None) -> None:
        self._stop_status()
        self.finished_s.append(time.monotonic() - self._started)
        name = f"[{self._number}/{self._total}] {point_text(point, record.repetition)}"
        if record.status == "failed":
            self.console.print(f"{name} failed: {escape(record.message)}", highlight=False)
            return
        text = f"{name} {record.status}"
        if row is not None:
            text += (
                f": {row.get(THROUGHPUT_OPS_PER_S) or 0:,.0f} ops/s, "
                f"mean {row.get(RESPONSE_TIME_MS) or 0:.3f} ms"
            )
            if row.get(P99_MS) is not None:
                text += f", p99 {row[P99_MS]:.3f} ms"
            if row.get(MW_QUEUE_TIME_MS) is not None:
                text += f", queue {row[MW_QUEUE_TIME_MS]:.3f} ms"
            if row.get(MISSES):
                text += f", {row[MISSES]} misses"
        if record.message:
            text += f" ({record.message})"
        self.console.print(text, highlight=False)

    def note(self, text: str) -> None:
        self._stop_status()
        self.console.print(text, highlight=False)


# Columns of the closing table, most wanted first: (column of the point statistics, header,
# format); "±" is the half-width of the 95 % interval of the mean before it. Columns are dropped
# from the end of this list until the table fits TABLE_WIDTH.
TABLE_COLUMNS = [
    (mean_column(THROUGHPUT_OPS_PER_S), "ops/s", "{:,.0f}"),
    (ci95_column(THROUGHPUT_OPS_PER_S), "±", "{:,.0f}"),
    (mean_column(RESPONSE_TIME_MS), "RT ms", "{:.3f}"),
    (ci95_column(RESPONSE_TIME_MS), "±", "{:.3f}"),
    (P99_MS, "p99 ms", "{:.3f}"),
    (mean_column(MW_QUEUE_TIME_MS), "queue ms", "{:.3f}"),
    (mean_column(MW_SERVICE_TIME_MS), "svc ms", "{:.3f}"),
    (mean_column(MW_THROUGHPUT_OPS_PER_S), "MW ops/s", "{:,.0f}"),
    (mean_column(MW_RESPONSE_TIME_MS), "MW RT ms", "{:.3f}"),
]
TABLE_CAPTION = (
    "Means over the repetitions that finished, ± the 95 % interval (Student t); p99 from the "
    "merged histograms. Partial and failed runs are left out."
)


def summary_table(summary_csv: Path, axes: Sequence[str], width: int = TABLE_WIDTH) -> Table:
    """One row per point in at most `width` columns: the swept values first (by the last part
    of their names), the usable repetitions, then as many measures as fit. The numbers are the
    report's (`cachelab.analysis.pointstats`): the folder's raw runs give the percentiles when
    they can be read."""
    import pandas as pd

    from cachelab.analysis.pointstats import point_statistics, runs_by_point, select_rows

    frame = pd.read_csv(summary_csv)
    if "status" not in frame.columns:
        frame["status"] = "ok"
    usable, _ = select_rows(frame) if RESPONSE_TIME_MS in frame.columns else (frame, {})
    keys = ["point", *[a for a in axes if a in usable.columns]]
    metrics = [c for c in METRIC_COLUMNS if c in usable.columns and c not in TEXT_COLUMNS]
    points = point_statistics(usable, metrics, keys, runs_by_point(_runs(summary_csv), usable))
    present = [c for c in TABLE_COLUMNS if c[0] in points.columns and points[c[0]].notna().any()]
    rows = []
    for _, point in points.iterrows():
        cells = [_cell(point[k]) for k in keys] + [str(int(point["repetitions"]))]
        for column, _, fmt in present:
            value = point[column]
            cells.append("" if pd.isna(value) else fmt.format(value))
        rows.append(cells)
    headers = ["p", *[_short(a) for a in keys[1:]], "reps", *[h for _, h, _ in present]]
    while True:
        table = _table(headers, rows)
        if _width(table) <= width or len(headers) <= len(keys) + 2:
            table.caption = TABLE_CAPTION
            return table
        headers = headers[:-1]
        rows = [r[:-1] for r in rows]


def _cell(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _runs(summary_csv: Path) -> list[Any]:
    """The folder's readable runs (none when it has no spec or raw files to read)."""
    from cachelab.results import ResultsError
    from cachelab.results.experiment import read_experiment

    try:
        return list(read_experiment(summary_csv.parent).runs)
    except (ResultsError, OSError, ValueError):
        return []


def _short(axis: str) -> str:
    name = axis.split(".")[-1]
    return {"clients_per_thread": "clients/thr", "client_machines": "machines"}.get(name, name)


def _table(headers: list[str], rows: list[list[str]]) -> Table:
    from rich import box

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    for i, header in enumerate(headers):
        table.add_column(header, justify="right" if i else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def _width(table: Table) -> int:
    console = Console(width=1000, no_color=True)
    with console.capture() as capture:
        console.print(table)
    return max((len(line) for line in capture.get().splitlines()), default=0)
