"""The experiment loop, one for every target: which runs to do, in which order, and what is left.

A target's executor (the local runner, the Kubernetes runner, a fake in the tests) is an
`Executor`: it runs one point and repetition into its run folder and returns that run's
`RunRecord`. `ExperimentLoop` owns everything around it: the selection of points (`--only`),
resuming a results folder (`--resume`: only runs that are missing, partial or failed run again),
status.json after every run, the summary.csv rows, the run lines of the terminal, and Ctrl-C /
SIGTERM (the current run is marked partial, the experiment interrupted). The results folder
around the loop is the target's (cachelab.target). Called from the CLI's main thread only.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from cachelab.repetitions import RepetitionPolicy, extra_repetitions_done
from cachelab.results import ResultsDir, RunRecord, Status
from cachelab.spec import Point, Spec, SpecError, load_spec
from cachelab.summary import add_summary_row

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class Executor(Protocol):
    """One target's way to run a single point and repetition into `results.run_dir(...)`.

    `run_one` returns the run's record (ok, partial or failed) and writes its point.json; it may
    raise KeyboardInterrupt after stopping what it started. `close` stops whatever the executor
    kept across runs (servers, releases). Both are called from the loop's thread."""

    target_name: str

    def run_one(self, point: Point, repetition: int) -> RunRecord: ...

    def close(self) -> None: ...


class Reporter(Protocol):
    """What the loop tells the terminal (cachelab.terminal.RunLines)."""

    def start_run(self, number: int, total: int, point: Point, repetition: int) -> None: ...

    def finish_run(self, record: RunRecord, point: Point, row: dict[str, Any] | None) -> None: ...

    def note(self, text: str) -> None: ...


class ExperimentStatus(Status):
    """status.json as the loop keeps it: `runs_done` counts the runs that finished ok (a partial
    or failed run is not done: --resume runs it again); `runs_partial` and `runs_failed` count the
    others."""

    @property
    def runs_done(self) -> int:
        return sum(r.status == "ok" for r in self.runs)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["runs_done"] = self.runs_done
        data["runs_partial"] = sum(r.status == "partial" for r in self.runs)
        data["runs_failed"] = sum(r.status == "failed" for r in self.runs)
        return data

    @classmethod
    def read(cls, path: Path) -> ExperimentStatus:
        data = json.loads(path.read_text())
        for derived in ("runs_done", "runs_partial", "runs_failed", "subset"):
            data.pop(derived, None)
        data["runs"] = [RunRecord(**r) for r in data.get("runs", [])]
        return cls(**data)


class ResumeError(ValueError):
    """A results folder that --resume cannot continue (says why)."""


class SelectionError(ValueError):
    """An `--only` term that selects nothing or names no swept field."""


@dataclass(frozen=True)
class Selection:
    """Points chosen by `--only` terms; several terms must all match. A term is either point
    indices (`3`, `0-2`, `0,4-5`) or values of swept fields: `topology.workers=8,32` (or by the
    field's last name, `workers=8,32`) takes the values 8 and 32 of that field, and a later
    `FIELD=VALUE` in the same term starts another field (`workers=8,clients_per_thread=4`
    matches either). A bare number after `FIELD=` is a value of that field, never an index."""

    terms: tuple[str, ...] = ()

    def choose(self, points: Sequence[Point]) -> list[Point]:
        chosen = list(points)
        for term in self.terms:
            keep = _term_matcher(term, points)
            chosen = [p for p in chosen if keep(p)]
        if not chosen:
            raise SelectionError(f"--only {' --only '.join(self.terms)}: no point matches all")
        return chosen

    def describe(self) -> str:
        """The terms as typed on the command line (`--only a --only b`)."""
        return " ".join(f"--only {t}" for t in self.terms)


def _term_matcher(term: str, points: Sequence[Point]) -> Any:
    alternatives = [a.strip() for a in term.split(",")]
    if any(not a for a in alternatives):
        raise SelectionError(f"--only {term!r}: empty alternative")
    if "=" not in alternatives[0]:
        return _index_matcher(term, alternatives, len(points))
    axes = list(points[0].values) if points else []
    wanted: dict[str, set[str]] = {}
    axis = ""
    for alternative in alternatives:
        name, sep, value = alternative.partition("=")
        if sep:
            axis, value = _axis_named(name.strip(), axes), value.strip()
        else:
            value = alternative
        known = {_text(p.values[axis]) for p in points}
        if value not in known:
            raise SelectionError(
                f"--only {term}: {axis} takes the values {', '.join(_sorted(known))}, not {value}"
            )
        wanted.setdefault(axis, set()).add(value)

    def keep(point: Point) -> bool:
        return any(_text(point.values[a]) in values for a, values in wanted.items())

    return keep


def _index_matcher(term: str, alternatives: list[str], count: int) -> Any:
    indices: set[int] = set()
    for alternative in alternatives:
        match = _RANGE.match(alternative)
        if match is None:
            raise SelectionError(
                f"--only {term!r}: use point indices (3, 0-2) or FIELD=VALUE[,VALUE...]"
            )
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if high < low or high >= count:
            raise SelectionError(f"--only {alternative}: points are numbered 0..{count - 1}")
        indices.update(range(low, high + 1))
    return lambda point: point.index in indices


def _sorted(values: set[str]) -> list[str]:
    def key(value: str) -> tuple[int, float, str]:
        try:
            return (0, float(value), value)
        except ValueError:
            return (1, 0.0, value)

    return sorted(values, key=key)


def _axis_named(name: str, axes: list[str]) -> str:
    if name in axes:
        return name
    matches = [a for a in axes if a.split(".")[-1] == name]
    if len(matches) == 1:
        return matches[0]
    swept = ", ".join(axes) or "nothing is swept"
    raise SelectionError(f"--only {name}=...: not a swept field (sweep: {swept})")


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


# Seconds a local run costs beyond run.duration_s (JVM starts, middleware stop, summary), and the
# preload rate of one loadgen (keys per second, fill and read back), both measured on a loaded
# 2-core machine; estimates for `cachelab list`, not promises.
RUN_OVERHEAD_S = 5.0
PRELOAD_KEYS_PER_S = 20_000.0
PRELOAD_START_S = 3.0


def estimate_wall_s(spec: Spec) -> float:
    """Rough local wall time of a whole spec: every run's duration and overhead, plus a preload
    (write and read back every key) for each fresh set of servers the runner will start."""
    points = spec.points()
    runs = len(points) * spec.run.repetitions
    seconds = runs * (spec.run.duration_s + RUN_OVERHEAD_S)
    preloads = 0
    previous: tuple[Any, ...] | None = None
    for point in points:
        p = point.spec
        key = (p.topology, p.workload.value_bytes, p.workload.key_maximum, p.server)
        if not p.preload.enabled:
            continue
        if p.run.restart_servers or p.workload.writes:
            preloads += spec.run.repetitions
        elif key != previous:
            preloads += 1
        previous = key
    per_preload = PRELOAD_START_S + 2 * spec.workload.key_maximum / PRELOAD_KEYS_PER_S
    return seconds + preloads * per_preload


@dataclass(frozen=True)
class Plan:
    """The runs of one invocation: all selected runs, and those still to do."""

    runs: list[tuple[Point, int]]
    todo: list[tuple[Point, int]]


def plan_runs(spec: Spec, selection: Selection, previous: Status | None) -> Plan:
    """Selected runs in order (all repetitions of a point, then the next point); with a previous
    status, a run already `ok` there is not done again."""
    points = selection.choose(spec.points())
    runs = [(p, r) for p in points for r in range(spec.run.repetitions)]
    done = set()
    if previous is not None:
        done = {(r.point, r.repetition) for r in previous.runs if r.status == "ok"}
        runs += extra_repetitions_done(spec.run, points, done)
    todo = [(p, r) for p, r in runs if (p.index, r) not in done]
    return Plan(runs, todo)


def open_for_resume(spec: Spec, folder: Path, target: str) -> tuple[ResultsDir, Status]:
    """The results folder of an earlier invocation of the same spec on the same target, and its
    status."""
    results = ResultsDir(folder)
    if not results.spec_file.is_file() or not results.status_file.is_file():
        raise ResumeError(f"--resume {folder}: not a results folder (no spec.yaml and status.json)")
    try:
        saved = load_spec(results.spec_file)
    except SpecError as error:
        raise ResumeError(f"--resume {folder}: {error}") from None
    if saved != spec:
        raise ResumeError(
            f"--resume {folder}: its spec.yaml is not this spec; resume with the spec it was "
            f"started with (e.g. {results.spec_file})"
        )
    status = ExperimentStatus.read(results.status_file)
    if status.target != target:
        raise ResumeError(
            f"--resume {folder}: its runs were made with --target {status.target}, not {target}"
        )
    return results, status


class ExperimentLoop:
    """Runs the planned runs of a spec with one executor. See the module docstring."""

    def __init__(
        self,
        spec: Spec,
        results: ResultsDir,
        executor: Executor,
        reporter: Reporter,
        selection: Selection | None = None,
        previous: Status | None = None,
        resume_hint: str | None = None,
    ) -> None:
        self.spec = spec
        self.results = results
        self.executor = executor
        self.reporter = reporter
        self.selection = selection or Selection()
        self.plan = plan_runs(spec, self.selection, previous)
        self.previous = previous
        self.resume_hint = resume_hint or f"--resume {results.path}"
        self.rows: list[dict[str, Any]] = []

    def _status(self) -> ExperimentStatus:
        total = len(self.plan.runs)
        status = ExperimentStatus(
            experiment=self.spec.name,
            target=self.executor.target_name,
            runs_total=total,
            only=list(self.selection.terms),
            points_selected=len({p.index for p, _ in self.plan.runs}),
            points_total=len(self.spec.points()),
        )
        selected = {(p.index, r) for p, r in self.plan.runs}
        if self.previous is not None:
            status.started = self.previous.started
            for record in self.previous.runs:
                if record.status == "ok" and (record.point, record.repetition) in selected:
                    status.record(record)
                    self._add_row(record.point, record.repetition)
        return status

    def _add_row(self, point: int, repetition: int) -> dict[str, Any] | None:
        run_dir = self.results.raw_dir / f"p{point}-r{repetition}"
        if not (run_dir / "point.json").is_file():
            return None
        error = add_summary_row(
            self.rows, run_dir, list(self.spec.sweep), self.results.summary_file
        )
        if error is not None:
            self.reporter.note(f"p{point}-r{repetition}: no summary row ({error})")
            return None
        return next(r for r in self.rows if (r["point"], r["repetition"]) == (point, repetition))

    def run(self) -> Status:
        status = self._status()
        status.save(self.results.status_file)
        todo = list(self.plan.todo)
        skipped = len(self.plan.runs) - len(todo)
        if skipped:
            self.reporter.note(f"resume: {skipped} runs already done, {len(todo)} to run")
        more = RepetitionPolicy(self.spec.run)
        for point, made in more.finished_points(self.plan.runs, todo):  # resumed, maybe unsure
            self._another(todo, len(todo), point, made, more, status)
        current: tuple[Point, int] | None = None
        try:
            with signals_as_interrupt():
                number = 0
                while number < len(todo):
                    point, repetition = todo[number]
                    number += 1
                    current = (point, repetition)
                    self._clear(point.index, repetition)
                    self.reporter.start_run(number, len(todo), point, repetition)
                    record = self.executor.run_one(point, repetition)
                    current = None
                    status.record(record)
                    status.save(self.results.status_file)
                    row = self._add_row(point.index, repetition)
                    self.reporter.finish_run(record, point, row)
                    if record.status == "failed":
                        status.finish("failed", f"{point.label()} r{repetition}: {record.message}")
                        break
                    if all(p.index != point.index for p, _ in todo[number:]):
                        self._another(todo, number, point, repetition + 1, more, status)
                else:
                    status.finish("complete")
        except KeyboardInterrupt:
            if current is not None:
                point, repetition = current
                status.record(RunRecord(point.index, repetition, "partial", "interrupted"))
                with shielded():
                    self._add_row(point.index, repetition)
            status.finish(
                "interrupted",
                "stopped by Ctrl-C, SIGTERM or SIGHUP; partial results kept (finish them with "
                f"{self.resume_hint})",
            )
        finally:
            with shielded():
                self.executor.close()
            if status.state == "running":
                status.finish("failed", "stopped by an unexpected error")
            status.save(self.results.status_file)
        return status

    def _another(
        self,
        todo: list[tuple[Point, int]],
        at: int,
        point: Point,
        made: int,
        policy: RepetitionPolicy,
        status: Status,
    ) -> None:
        """One more repetition of `point` at `todo[at]` when its interval is still too wide."""
        if policy.another(point.index, made, self.rows):
            todo.insert(at, (point, made))
            status.runs_total += 1

    def _clear(self, point: int, repetition: int) -> None:
        """A run done again starts from an empty folder (a partial run's files go)."""
        run_dir = self.results.raw_dir / f"p{point}-r{repetition}"
        if run_dir.exists():
            shutil.rmtree(run_dir)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def shielded() -> Iterator[None]:
    """Ignore Ctrl-C, SIGTERM and SIGHUP while children are being stopped (so none is left
    behind)."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP (the terminal closed) raise KeyboardInterrupt while the
    experiment runs (also when the parent shell started us with SIGINT ignored), so the children,
    each in its own session and so untouched by the terminal's signals, are stopped on the way
    out instead of outliving the runner."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
