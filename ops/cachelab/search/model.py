"""The search's answer beside the queueing model: the calibrated MVA's saturation throughput and
the bottleneck, from the run of the answer's step.

The step that met the SLO at the highest load is read back (its summary row, cpu.csv and the
middleware's stamps) and analysed as a report point is (cachelab.analysis.operational): each
stage's demand and utilisation, and the bottleneck (the station with the highest utilisation).
Its closed network (cachelab.analysis.models.closed_model, calibrated with that run's own
demands) gives the saturation throughput: the ceiling min_k m_k / D_k the throughput approaches
as the load grows (the host CPU's counting the CPU held inside a worker's holding), and the
station that sets it. `beside_model` returns None when the step has nothing to calibrate (no
middleware stamps and no CPU samples). Pure over a results folder; any thread.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from cachelab.analysis.models import closed_model
from cachelab.analysis.operational import analyse
from cachelab.analysis.perpoint import measurement, server_threads_of
from cachelab.results import ResultsError
from cachelab.results.layout import RunDir
from cachelab.results.run import read_run
from cachelab.search.steps import PASS, Step
from cachelab.summary import row_of

MODEL_FILE = "search_model.json"


@dataclass(frozen=True)
class ModelBeside:
    """The answer's step analysed: the MVA's saturation and the bottlenecks."""

    run: str  # raw/<run> the model is calibrated with
    load: float  # the answer's load
    throughput_ops_per_s: float  # measured there
    saturation_ops_per_s: float  # the calibrated MVA's ceiling
    model_bottleneck: str  # the station setting that ceiling
    bottleneck: str  # the operational analysis' bottleneck at the answer's step
    bottleneck_utilisation: float

    @property
    def answer_frac(self) -> float:
        """The throughput measured at the answer over the model's saturation."""
        if not self.saturation_ops_per_s > 0:
            return math.nan
        return self.throughput_ops_per_s / self.saturation_ops_per_s

    def text(self) -> str:
        return (
            f"calibrated MVA (at {self.run}): saturation {self.saturation_ops_per_s:,.0f} ops/s "
            f"set by the {self.model_bottleneck}; the answer carries {self.answer_frac:.0%} of "
            f"it; bottleneck at the answer: {self.bottleneck} "
            f"(utilisation {self.bottleneck_utilisation:.0%})"
        )

    def save(self, folder: Path) -> None:
        (folder / MODEL_FILE).write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def read(cls, folder: Path) -> ModelBeside | None:
        path = folder / MODEL_FILE
        if not path.is_file():
            return None
        return cls(**json.loads(path.read_text()))


def _answer_step(steps: list[Step], answer: float | None) -> Step | None:
    passing = [s for s in steps if s.verdict == PASS and s.load == answer]
    return passing[-1] if passing else None


def beside_model(
    folder: Path, steps: list[Step], answer: float | None, host_cores: int
) -> ModelBeside | None:
    """The answer's step analysed and modelled (None: no answer, or nothing to calibrate)."""
    step = _answer_step(steps, answer)
    if step is None:
        return None
    run = RunDir(step.step, step.attempt, folder / "raw" / step.measurement.run)
    try:
        data = read_run(run)
    except (ResultsError, KeyError, ValueError, OSError):
        return None
    row = pd.Series(row_of(data))
    m = measurement(row, [data], host_cores, server_threads_of(data.record.spec))
    analysis = analyse(m)
    closed = closed_model(m, analysis)
    if closed is None or analysis.bottleneck is None:
        return None
    pairs = zip(closed.demands_ms, closed.servers, strict=True)
    ceilings = [servers / d if d > 0 else math.inf for d, servers in pairs]
    shared = closed.station("host CPU")
    if shared is not None and closed.cpu_held_ms > 0 and math.isfinite(closed.cpu_available_cores):
        held = closed.demands_ms[shared] + closed.cpu_held_ms
        ceilings[shared] = closed.cpu_available_cores / held
    k = min(range(len(ceilings)), key=ceilings.__getitem__)
    stage = analysis.stage(analysis.bottleneck)
    return ModelBeside(
        run=step.measurement.run,
        load=step.load,
        throughput_ops_per_s=m.throughput_ops_per_s,
        saturation_ops_per_s=1000.0 * ceilings[k],
        model_bottleneck=closed.names[k],
        bottleneck=analysis.bottleneck,
        bottleneck_utilisation=stage.utilisation if stage is not None else math.nan,
    )
