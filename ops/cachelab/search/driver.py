"""`cachelab search`: the highest load that meets a latency SLO, step by step into one folder.

`SearchDriver` asks the `Bisection` for a load, has a `StepExecutor` measure it (the local
runner in practice, a fake system in the tests), judges the attempt (cachelab.search.steps),
repeats an untrustworthy one up to `max_attempts`, and appends every attempt to `search.csv`
before the next one starts, so an interrupted search loses nothing and `--resume` replays the
decided steps and goes on. Called from the CLI's main thread.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from cachelab.columns import TOTAL_CLIENTS
from cachelab.search.bisection import Bisection, Bracket
from cachelab.search.steps import (
    CSV_COLUMNS,
    FAIL,
    MEASUREMENT_FIELDS,
    PASS,
    PROBE,
    REPEAT,
    Measurement,
    Step,
    judge,
    judge_probe,
)
from cachelab.slo import Slo, parse_slo

SEARCH_CSV = "search.csv"
SEARCH_JSON = "search.json"
DEFAULT_TOLERANCE_PCT = 5.0
DEFAULT_MAX_ATTEMPTS = 3


class SearchError(ValueError):
    """A search that cannot start or resume (one line saying why)."""


@dataclass(frozen=True)
class SearchSettings:
    """What is searched: the SLO, the load axis and its range, the stopping rule."""

    slo: str
    axis: str  # workload.rate_ops (open loop) or topology.clients_per_thread (closed loop)
    start: float
    lowest: float
    highest: float
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    probe: bool = False  # open loop: one closed-loop run first measures the capacity

    @property
    def open_loop(self) -> bool:
        return self.axis == "workload.rate_ops"

    @property
    def whole(self) -> bool:
        return not self.open_loop

    def save(self, folder: Path) -> None:
        (folder / SEARCH_JSON).write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, folder: Path) -> SearchSettings:
        path = folder / SEARCH_JSON
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError) as error:
            raise SearchError(f"--resume {folder}: no readable {SEARCH_JSON} ({error})") from None


class StepExecutor(Protocol):
    """Measures one attempt of one step (a run into raw/p<step>-r<attempt>)."""

    def measure(self, step: int, attempt: int, load: float) -> Measurement: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Answer:
    """The search's result: the highest passing load, the bracket and its width."""

    load: float | None
    bracket: Bracket
    steps: int
    runs: int
    throughput_ops_per_s: float  # measured at the answer's step (NaN if none passed)
    statistic_ms: float  # the SLO statistic there
    statistic_high_ms: float  # the upper end of its 95 % interval
    at_limit: bool  # the answer is the highest load tried: the knee is beyond it

    def text(self, slo: Slo, unit: str) -> str:
        if self.load is None:
            lowest = f"{self.bracket.failed:g} {unit}"
            return f"no load met {slo.text}: even the lowest ({lowest}) failed"
        width = self.bracket.width_frac
        if self.at_limit:
            where = f"the highest load tried; {slo.text} may hold beyond it"
        else:
            where = f"the bracket [{self.bracket.passed:g}, {self.bracket.failed:g}) is "
            where += f"{width:.1%} wide"
        sure = (
            "its 95 % interval within the SLO"
            if math.isfinite(self.statistic_high_ms) and self.statistic_high_ms <= slo.limit_ms
            else "its 95 % interval reaching past the SLO"
        )
        return (
            f"{self.load:g} {unit} meets {slo.text} ({slo.statistic} {self.statistic_ms:.3g} ms, "
            f"{sure}; {self.throughput_ops_per_s:,.0f} ops/s achieved); {where}; "
            f"{self.steps} steps, {self.runs} runs"
        )


def read_steps(folder: Path) -> list[dict[str, str]]:
    path = folder / SEARCH_CSV
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _measurement_of(row: dict[str, str]) -> Measurement:
    values: dict[str, Any] = {}
    for name in MEASUREMENT_FIELDS:
        text = row.get(name, "")
        if name in ("run", "status", "rate_verdict"):
            values[name] = text
        elif name in (TOTAL_CLIENTS, "requests"):
            values[name] = int(float(text)) if text else 0
        else:
            values[name] = float(text) if text not in ("", "nan") else math.nan
    return Measurement(**values)


def _format(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return str(value)


class SearchDriver:
    """Runs a search into `folder` with one executor; see the module docstring."""

    def __init__(
        self,
        settings: SearchSettings,
        folder: Path,
        executor: StepExecutor,
        on_step: Callable[[Step], None] | None = None,
    ) -> None:
        self.settings = settings
        self.slo = parse_slo(settings.slo)
        self.folder = folder
        self.executor = executor
        self.on_step = on_step
        self.bisection = Bisection(
            settings.start,
            settings.tolerance_pct / 100.0,
            settings.lowest,
            settings.highest,
            whole=settings.whole,
        )
        if settings.open_loop:
            self.bisection.guide(self.slo.limit_ms)
        self.steps: list[Step] = []
        self._replay()

    def _replay(self) -> None:
        """Take back the attempts search.csv already holds (a resumed search)."""
        for row in read_steps(self.folder):
            step = Step(
                int(row["step"]),
                int(row["attempt"]),
                float(row["load"]),
                row["verdict"],
                row["note"],
                _measurement_of(row),
            )
            self.steps.append(step)
            self._learn(step)

    def _learn(self, step: Step) -> None:
        if step.verdict == PROBE:
            m = step.measurement
            self.bisection.guide(
                self.slo.limit_ms, m.throughput_ops_per_s, m.statistic_ms(self.slo)
            )
        elif step.verdict in (PASS, FAIL):
            statistic = step.measurement.statistic_ms(self.slo)
            self.bisection.record(step.load, step.verdict == PASS, statistic)

    @property
    def decided(self) -> int:
        return sum(s.verdict in (PASS, FAIL) for s in self.steps)

    @property
    def probed(self) -> bool:
        return any(s.verdict == PROBE for s in self.steps)

    def _append(self, step: Step) -> None:
        self.steps.append(step)
        path = self.folder / SEARCH_CSV
        new = not path.is_file()
        with path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(CSV_COLUMNS)
            row = step.row(self.slo)
            writer.writerow([_format(row[c]) for c in CSV_COLUMNS])

    def run(self) -> Answer:
        """Measure until the bracket is narrow enough; KeyboardInterrupt passes through after
        the attempts measured so far are in search.csv."""
        try:
            if self.settings.probe and not self.probed:
                self._probe()
            while (load := self.bisection.next_value()) is not None:
                self._decide(load)
        finally:
            self.executor.close()
        return self.answer()

    def _index(self) -> int:
        return self.decided + int(self.probed)

    def _probe(self) -> None:
        """One closed-loop run of the configuration (load 0: no offered rate): the throughput
        it carries bounds the open-loop knee and places the first step."""
        index = self._index()
        for attempt in range(self.settings.max_attempts):
            measurement = self.executor.measure(index, attempt, 0.0)
            verdict, note = judge_probe(measurement)
            step = Step(index, attempt, 0.0, verdict, note, measurement)
            self._append(step)
            if self.on_step is not None:
                self.on_step(step)
            if verdict == PROBE:
                self._learn(step)
                return

    def _decide(self, load: float) -> None:
        index = self._index()
        attempt = sum(1 for s in self.steps if s.step == index)
        while True:
            measurement = self.executor.measure(index, attempt, load)
            verdict, note = judge(measurement, self.slo, self.settings.open_loop)
            last = attempt + 1 >= self.settings.max_attempts
            if verdict == REPEAT and last:
                verdict, note = FAIL, f"{note}; still so after {attempt + 1} attempts"
            step = Step(index, attempt, load, verdict, note, measurement)
            self._append(step)
            if self.on_step is not None:
                self.on_step(step)
            if verdict != REPEAT:
                self._learn(step)
                return
            attempt += 1

    def answer(self) -> Answer:
        load = self.bisection.answer()
        passing = [s for s in self.steps if s.verdict == PASS and s.load == load]
        m = passing[-1].measurement if passing else None
        return Answer(
            load=load,
            bracket=self.bisection.bracket,
            steps=self.decided,
            runs=len(self.steps),  # the probe's included
            throughput_ops_per_s=m.throughput_ops_per_s if m else math.nan,
            statistic_ms=m.statistic_ms(self.slo) if m else math.nan,
            statistic_high_ms=m.slo_high_ms if m else math.nan,
            at_limit=load is not None and self.bisection.failed is None,
        )
