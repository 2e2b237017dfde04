"""The report's bottleneck and models section: the stages' utilisations, the processes' CPU, the
response time per op type, the calibrated models beside the measurement and, per line, the model
calibrated at its lowest load predicting the others (`cachelab.report.analysis`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cachelab.analysis.models import OUT_OF_SAMPLE, ModelRow
from cachelab.report.analyse import AnalysedResults
from cachelab.report.analysis import out_of_sample_table


@dataclass(frozen=True)
class ModelsSection:
    rows: list[ModelRow]
    sentences: dict[str, str]  # per model, what it says about the run
    stages: list[str]
    processes: list[str]
    ops: list[str]
    oos_rows: list[dict[str, Any]]
    oos_name: str = OUT_OF_SAMPLE


def models_section(analysed: AnalysedResults) -> ModelsSection:
    section = analysed.section
    return ModelsSection(
        rows=section.model_rows,
        sentences=section.sentences,
        stages=section.stages,
        processes=section.processes,
        ops=section.ops,
        oos_rows=out_of_sample_table(section, analysed.points),
    )
