"""A search run on a target: its results folder opened (a new one, or `--resume`'s, which must be
of the same search and spec), its steps measured by the target's executor, and its answer written
beside them (answer.txt, with the model of cachelab.search.model when there is one)."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console

from cachelab.experiment import Executor, signals_as_interrupt
from cachelab.results import ResultsDir
from cachelab.results.metadata import read_metadata
from cachelab.search import choose_point, load_label, steps_estimate
from cachelab.search.driver import Answer, SearchDriver, SearchError, SearchSettings
from cachelab.search.measure import RunnerSteps
from cachelab.search.model import beside_model
from cachelab.search.steps import PROBE, Step
from cachelab.slo import Slo, parse_slo
from cachelab.spec import Spec, load_spec
from cachelab.target import Target
from cachelab.terminal import RunLines

ANSWER_FILE = "answer.txt"


def open_search(
    target: Target,
    spec_path: Path,
    settings: SearchSettings,
    point: int | None,
    resume: Path | None,
) -> tuple[Spec, ResultsDir]:
    """The configuration searched, checked on `target`, and its results folder (new, or
    `resume`'s), announced."""
    full = load_spec(spec_path)
    spec = choose_point(full, point)
    target.check(spec)
    if resume is not None:
        saved = SearchSettings.load(resume)
        if saved != settings:
            raise SearchError(
                f"--resume {resume}: it searched {saved.slo} on {saved.axis} with tolerance "
                f"{saved.tolerance_pct:g} %, not this search"
            )
        results = ResultsDir(resume)
        if load_spec(results.spec_file) != full:
            raise SearchError(f"--resume {resume}: its spec.yaml is not this spec")
    else:
        results = target.create(full)
        settings.save(results.path)
    target.announce(results)
    return spec, results


class SearchRun:
    """The steps of one search, each a run of `executor` into `results`. Main thread only."""

    def __init__(
        self,
        spec: Spec,
        settings: SearchSettings,
        results: ResultsDir,
        executor: Executor,
        reporter: RunLines,
        console: Console,
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.results = results
        self.console = console
        self.slo: Slo = parse_slo(settings.slo)
        self.label = load_label(settings, spec)
        steps = RunnerSteps(
            spec, settings.axis, self.slo, results, executor, reporter, steps_estimate(settings)
        )
        self.driver = SearchDriver(settings, results.path, steps, on_step=self._show)

    def _show(self, step: Step) -> None:
        load = "closed loop" if step.verdict == PROBE else f"{step.load:g}"
        self.console.print(
            f"  step {step.step} attempt {step.attempt}: {load} -> {step.verdict} ({step.note})",
            highlight=False,
        )

    @property
    def steps(self) -> list[Step]:
        return self.driver.steps

    def best_load(self) -> float | None:
        """The highest load that met the SLO so far."""
        return self.driver.answer().load

    def run(self) -> Answer:
        """The search's steps until its answer; Ctrl-C, SIGTERM and SIGHUP interrupt it."""
        with signals_as_interrupt():
            return self.driver.run()

    def write_answer(self, answer: Answer) -> str:
        """answer.txt: the answer and the model beside it; returns its text."""
        unit = "requests/s" if self.settings.open_loop else "clients per thread"
        text = answer.text(self.slo, unit)
        host = read_metadata(self.results.metadata_file).get("host") or {}
        cores = int(host.get("cpu_count") or os.cpu_count() or 0) if isinstance(host, dict) else 0
        model = beside_model(self.results.path, self.steps, answer.load, cores)
        if model is not None:
            model.save(self.results.path)
            text += "\n" + model.text()
        (self.results.path / ANSWER_FILE).write_text(text + "\n")
        return text
