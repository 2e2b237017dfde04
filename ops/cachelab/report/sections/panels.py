"""The report's cluster metrics section: the Grafana dashboards' panels that each run recorded
from the cluster's Prometheus (cachelab.panels, `<run>/panels/`), one figure per run and
dashboard with a plot per panel that has data (figures.panels), and a row per run and dashboard
that names the panels without data."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from cachelab.panels import Panel, read_recording
from cachelab.report.sections.extras import ExtraSection
from cachelab.results import ResultsDir

NOTE = (
    "Each plot is a panel of the Grafana dashboards in charts/testbed/dashboards: its own PromQL "
    "run over the run's seconds against the cluster's Prometheus, with the dashboard's variables "
    "set to the run's namespace, release and pools, and $__rate_interval at {rate}. The series "
    "are kept in each run's panels/series.csv (panels/panels.json lists every panel and query), "
    "so the report rebuilds without Prometheus. Panels without data are named in the table."
)


@dataclass(frozen=True)
class DashboardRun:
    """One run's panels of one dashboard."""

    run: str  # the run's folder
    dashboard: str
    panels: list[Panel]
    origin_epoch_s: float  # time 0 of the plots: the run's benchmark start

    @property
    def with_data(self) -> list[Panel]:
        return [p for p in self.panels if p.has_data]

    def figure_file(self) -> str:
        """The figure's file in the report folder: ``panels-<run>-<dashboard>.png``."""
        return f"panels-{self.run}-{self.dashboard}.png"


@dataclass(frozen=True)
class PanelsSection(ExtraSection):
    dashboards: list[DashboardRun] = field(default_factory=list)


def dashboard_runs(results_dir: Path) -> tuple[list[DashboardRun], str]:
    """Every run's recorded dashboards, and the rate interval their queries used."""
    found: list[DashboardRun] = []
    rate = ""
    for run in ResultsDir(results_dir).runs():
        recording = read_recording(run.path)
        if recording is None:
            continue
        rate = str(recording.settings.get("rate_interval", rate))
        origin = float(recording.settings.get("start_epoch_s", math.nan))
        dashboards = dict.fromkeys(p.dashboard for p in recording.panels)
        for dashboard in dashboards:
            panels = [p for p in recording.panels if p.dashboard == dashboard]
            found.append(DashboardRun(run.path.name, dashboard, panels, origin))
    return found, rate


def panels_section(results_dir: Path) -> PanelsSection | None:
    """The recorded panels, or None when no run recorded any."""
    runs, rate = dashboard_runs(results_dir)
    if not runs:
        return None
    rows = [
        {
            "run": r.run,
            "dashboard": r.dashboard,
            "panels": len(r.panels),
            "with data": len(r.with_data),
            "without data": "; ".join(p.title for p in r.panels if not p.has_data) or "none",
        }
        for r in runs
    ]
    figures = [r.figure_file() for r in runs if r.with_data]
    title = "Cluster metrics: the dashboards' panels"
    return PanelsSection("panels", title, NOTE.format(rate=rate), rows, figures, runs)
