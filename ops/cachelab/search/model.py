"""The search's answer beside the queueing model: the calibrated MVA's saturation throughput and
the bottleneck at the answer.

The model is calibrated with the closed-loop capacity probe's run when the search made one (a
closed network at its clients, the setting the calibrated MVA is built for; its per-request
CPU is measured near saturation), else with the answer's own run: each run is read back (its
summary row, cpu.csv and the middleware's stamps) and analysed as a report point is
(cachelab.analysis.operational). The closed network (cachelab.analysis.models.closed_model)
gives the saturation throughput: the ceiling min_k m_k / D_k its throughput approaches as the
load grows (the host CPU's counting the CPU held inside a worker's holding), and the station
that sets it. The answer's run gives the bottleneck at the answer (the station with the highest
utilisation there). `beside_model` returns None when there is no answer or nothing to calibrate
(no middleware stamps and no CPU samples). Pure over a results folder; any thread.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from cachelab.analysis.models import closed_model
from cachelab.analysis.operational import OperationalAnalysis, PointMeasurement, analyse
from cachelab.analysis.perpoint import measurement, server_threads_of
from cachelab.results import ResultsError
from cachelab.results.layout import RunDir
from cachelab.results.run import read_run
from cachelab.search.steps import PASS, PROBE, Step
from cachelab.summary import row_of

MODEL_FILE = "search_model.json"


@dataclass(frozen=True)
class ModelBeside:
    """The answer's step analysed: the MVA's saturation and the bottlenecks."""

    run: str  # raw/<run> the model is calibrated with
    probe: bool  # that run is the closed-loop capacity probe
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
        where = f"the closed-loop probe {self.run}" if self.probe else self.run
        return (
            f"calibrated MVA (at {where}): saturation {self.saturation_ops_per_s:,.0f} ops/s "
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


def _analysed(
    folder: Path, step: Step, host_cores: int
) -> tuple[PointMeasurement, OperationalAnalysis] | None:
    run = RunDir(step.step, step.attempt, folder / "raw" / step.measurement.run)
    try:
        data = read_run(run)
    except (ResultsError, KeyError, ValueError, OSError):
        return None
    row = pd.Series(row_of(data))
    m = measurement(row, [data], host_cores, server_threads_of(data.record.spec))
    return m, analyse(m)


def beside_model(
    folder: Path, steps: list[Step], answer: float | None, host_cores: int
) -> ModelBeside | None:
    """The answer beside the calibrated model (None: no answer, or nothing to calibrate)."""
    step = _answer_step(steps, answer)
    if step is None:
        return None
    at_answer = _analysed(folder, step, host_cores)
    if at_answer is None:
        return None
    m, analysis = at_answer
    bottleneck = analysis.bottleneck
    if bottleneck is None:
        return None
    probes = [s for s in steps if s.verdict == PROBE]
    calibration = _analysed(folder, probes[-1], host_cores) if probes else None
    calibrated_at = probes[-1] if calibration is not None else step
    calibration = calibration or at_answer
    closed = closed_model(*calibration)
    if closed is None:
        return None
    ceilings = closed.ceilings_ops_per_s()
    k = min(range(len(ceilings)), key=ceilings.__getitem__)
    stage = analysis.stage(bottleneck)
    return ModelBeside(
        run=calibrated_at.measurement.run,
        probe=calibrated_at.verdict == PROBE,
        load=step.load,
        throughput_ops_per_s=m.throughput_ops_per_s,
        saturation_ops_per_s=ceilings[k],
        model_bottleneck=closed.names[k],
        bottleneck=bottleneck,
        bottleneck_utilisation=stage.utilisation if stage is not None else math.nan,
    )
