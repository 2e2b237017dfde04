"""The report's sections, each a function of the folder read and analysed that returns typed
data: the run, the points, the latency and window data, the models, the factorial analysis, and
the sections that apply to some folders only (tail, seeds, repetitions, faults, network, the
dashboards' panels)."""

from __future__ import annotations

from dataclasses import dataclass

from cachelab.report.analyse import AnalysedResults
from cachelab.report.sections.extras import ExtraSection
from cachelab.report.sections.factorial import FactorialResponse, factorial_section
from cachelab.report.sections.faults import FaultsSection, faults_section
from cachelab.report.sections.latency import (
    LatencyDistributions,
    Windows,
    latency_section,
    windows_section,
)
from cachelab.report.sections.models import ModelsSection, models_section
from cachelab.report.sections.network import network_section
from cachelab.report.sections.panels import PanelsSection, panels_section
from cachelab.report.sections.points import PointsSection, points_section
from cachelab.report.sections.repetitions import repetitions_section
from cachelab.report.sections.run import RowsAccount, RunInfo, rows_account, run_info
from cachelab.report.sections.seeds import SeedsSection, seeds_section
from cachelab.report.sections.tail import TailSection, tail_section


@dataclass(frozen=True)
class ReportSections:
    info: RunInfo
    rows: RowsAccount
    points: PointsSection
    latency: LatencyDistributions
    windows: Windows
    models: ModelsSection
    factorial: list[FactorialResponse]
    tail: TailSection | None
    seeds: SeedsSection | None
    repetitions: ExtraSection | None
    faults: FaultsSection | None
    network: ExtraSection | None
    panels: PanelsSection | None

    @property
    def extras(self) -> list[ExtraSection]:
        """The sections beyond the per-point analysis that apply, in report order."""
        found = [self.tail, self.seeds, self.repetitions, self.faults, self.network, self.panels]
        return [s for s in found if s is not None]


def report_sections(analysed: AnalysedResults) -> ReportSections:
    experiment, read = analysed.experiment, analysed.read
    return ReportSections(
        info=run_info(experiment.metadata, experiment.status),
        rows=rows_account(analysed),
        points=points_section(analysed),
        latency=latency_section(analysed),
        windows=windows_section(analysed),
        models=models_section(analysed),
        factorial=factorial_section(analysed),
        tail=tail_section(read.summary_rows, analysed.axes),
        seeds=seeds_section(read),
        repetitions=repetitions_section(read.spec, read.summary_rows),
        faults=faults_section(read.results_dir),
        network=network_section(read.results_dir),
        panels=panels_section(read.results_dir),
    )
