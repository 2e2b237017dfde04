"""Where an experiment runs, as one object: a `Target` checks a spec, opens or resumes its results
folder (spec.yaml and metadata.json, the load warning, status.json through the loop), gives the
experiment loop its executor and closes the folder (metadata's finish time). The local target is
cachelab.local.target's, the Kubernetes ones cachelab.k8s.target's; `run_experiment` drives a
target through cachelab.experiment's loop. Called from the CLI's main thread only.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.console import Console

from cachelab.experiment import Executor, ExperimentLoop, Selection, open_for_resume
from cachelab.results import ResultsDir, Status, finish_metadata
from cachelab.results.noise import load_warning
from cachelab.spec import Spec
from cachelab.terminal import LiveSample, RunLines

Live = Callable[[LiveSample], None]


class Target(ABC):
    """One target's session around an experiment's runs."""

    name: ClassVar[str]
    # where the machine's load is judged, for the warning at the start
    load_where: ClassVar[str] = "at the start"

    def __init__(self, console: Console) -> None:
        self.console = console

    @abstractmethod
    def check(self, spec: Spec) -> None:
        """Raises, naming the problem, when a point of `spec` cannot run here; starts nothing
        that outlives the check."""

    @abstractmethod
    def create(self, spec: Spec) -> ResultsDir:
        """A new results folder for `spec`, with its spec.yaml and metadata.json."""

    @abstractmethod
    def executor(self, spec: Spec, results: ResultsDir, live: Live | None) -> Executor:
        """What runs each point of `spec` into `results`; `live` gets each second of a run."""

    def resume_hint(self, results: ResultsDir) -> str | None:
        """The command that finishes an interrupted experiment in `results` (None: the loop's)."""
        return None

    def open(self, spec: Spec, resume: Path | None = None) -> tuple[ResultsDir, Status | None]:
        """A new results folder, or `resume`'s and its status; announced."""
        previous: Status | None = None
        if resume is not None:
            results, previous = open_for_resume(spec, resume, self.name)
        else:
            results = self.create(spec)
        self.announce(results)
        return results, previous

    def announce(self, results: ResultsDir) -> None:
        """The results folder, and a warning when this machine is busy already."""
        self.console.print(f"results: {results.path}", highlight=False)
        warning = load_warning(os.getloadavg()[0], os.cpu_count(), self.load_where)
        if warning:
            self.console.print(f"[yellow]warning:[/] {warning}", highlight=False)

    def close(self, results: ResultsDir) -> None:
        """The folder's metadata finished; whatever the target started for the experiment
        stopped."""
        finish_metadata(results.metadata_file)


def run_experiment(
    target: Target,
    spec: Spec,
    selection: Selection | None = None,
    resume: Path | None = None,
) -> tuple[ResultsDir, Status]:
    """The selected runs of `spec` on `target` (a new results folder, or `resume`'s), checked
    first; the folder and its final status."""
    target.check(spec)
    results, previous = target.open(spec, resume)
    reporter = RunLines(target.console, spec.run.duration_s)
    try:
        executor = target.executor(spec, results, reporter.live)
        loop = ExperimentLoop(
            spec,
            results,
            executor,
            reporter,
            selection,
            previous,
            resume_hint=target.resume_hint(results),
        )
        return results, loop.run()
    finally:
        target.close(results)
