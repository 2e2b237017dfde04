"""The progress display of a local run: runs done, the current point, time left."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cachelab.results import RunRecord
from cachelab.spec import Point

# Time a run costs beyond its duration before one has been measured (JVM starts, preload, stop).
FIRST_GUESS_OVERHEAD_S = 4.0


def format_seconds(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, secs = divmod(seconds, 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class RunProgress:
    """A rich progress bar over the runs; the time left uses the mean time of finished runs."""

    def __init__(self, console: Console, runs_total: int, run_s: float) -> None:
        self.console = console
        self.runs_total = runs_total
        self.run_s = run_s
        self.finished: list[float] = []
        self._run_started = time.monotonic()
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("runs"),
            TimeElapsedColumn(),
            TextColumn("· {task.fields[left]} left"),
            console=console,
            transient=False,
        )
        self._task = self._progress.add_task(
            "starting", total=runs_total, left=format_seconds(self.estimate_left())
        )

    def estimate_left(self) -> float:
        per_run = (
            sum(self.finished) / len(self.finished)
            if self.finished
            else self.run_s + FIRST_GUESS_OVERHEAD_S
        )
        return per_run * (self.runs_total - len(self.finished))

    def start_run(self, point: Point, repetition: int, repetitions: int) -> None:
        self._run_started = time.monotonic()
        self._progress.update(
            self._task,
            description=f"{point.label()} rep {repetition + 1}/{repetitions}",
            left=format_seconds(self.estimate_left()),
        )

    def finish_run(self, record: RunRecord, row: dict[str, Any] | None) -> None:
        self.finished.append(time.monotonic() - self._run_started)
        self._progress.update(self._task, advance=1, left=format_seconds(self.estimate_left()))
        name = f"p{record.point}-r{record.repetition}"
        if record.status == "failed":
            self.console.log(f"[red]{name} failed[/]: {record.message}")
            return
        if row is None:
            self.console.log(f"{name} {record.status}")
            return
        text = (
            f"{name} {record.status}: {row.get('throughput_ops_per_s') or 0:,.0f} ops/s, "
            f"{row.get('response_time_ms') or 0:.3f} ms"
        )
        if row.get("mw_queue_time_ms") is not None:
            text += (
                f" (middleware {row.get('mw_response_time_ms') or 0:.3f} ms, "
                f"queue {row['mw_queue_time_ms']:.3f} ms)"
            )
        if row.get("misses"):
            text += f", [yellow]{row['misses']} misses[/]"
        self.console.log(text)

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()
