"""The report's sections, each a function of the analysed results that returns typed data:
the run, the points, the latency and window data, the models, the factorial analysis."""

from __future__ import annotations

from dataclasses import dataclass

from cachelab.report.analyse import AnalysedResults
from cachelab.report.sections.factorial import FactorialResponse, factorial_section
from cachelab.report.sections.latency import (
    LatencyDistributions,
    Windows,
    latency_section,
    windows_section,
)
from cachelab.report.sections.models import ModelsSection, models_section
from cachelab.report.sections.points import PointsSection, points_section
from cachelab.report.sections.run import RowsAccount, RunInfo, rows_account, run_info


@dataclass(frozen=True)
class ReportSections:
    info: RunInfo
    rows: RowsAccount
    points: PointsSection
    latency: LatencyDistributions
    windows: Windows
    models: ModelsSection
    factorial: list[FactorialResponse]


def report_sections(analysed: AnalysedResults) -> ReportSections:
    experiment = analysed.experiment
    return ReportSections(
        info=run_info(experiment.metadata, experiment.status),
        rows=rows_account(analysed),
        points=points_section(analysed),
        latency=latency_section(analysed),
        windows=windows_section(analysed),
        models=models_section(analysed),
        factorial=factorial_section(analysed),
    )
