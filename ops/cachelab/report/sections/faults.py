"""The report's faults section: each run with faults, its timeline second by second and every
fault's time to detect and time to recover (cachelab.faults.recovery); figures.faults draws
each run."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from cachelab.faults.recovery import Recovery, Second, loadgen_logs, read_timeline, recoveries_of
from cachelab.report.sections.extras import ExtraSection
from cachelab.results import ResultsDir
from cachelab.results.records import PointRecord

NOTE = (
    "Each fault's span is shaded. Time to detect: from the fault's start to the end of the first "
    "second with an error, p99 above twice the p99 before, or throughput below half of it (red "
    "dashes). Time to recover: from the fault's end (a kill: its start) to the end of the first "
    "second from which throughput holds at or above 90 % of the throughput before (green dots) "
    "for two seconds (green dashes); empty when it never did within the run."
)


@dataclass(frozen=True)
class FaultRun:
    name: str  # the run's folder
    timeline: list[Second]
    recoveries: list[Recovery]

    @property
    def figure(self) -> str:
        return f"faults-{self.name}.png"


@dataclass(frozen=True)
class FaultsSection(ExtraSection):
    runs: list[FaultRun] = field(default_factory=list)


def fault_runs(results_dir: Path) -> list[FaultRun]:
    """Every run with faults."""
    found = []
    for run in ResultsDir(results_dir).runs():
        if not run.point_file.is_file():
            continue
        record = PointRecord.load(run.point_file)
        recoveries = recoveries_of(run.path, record.spec, record.loadgens)
        if not recoveries:
            continue
        duration_s = float(record.spec.get("run", {}).get("duration_s", math.inf))
        timeline = read_timeline(loadgen_logs(run.path, record.loadgens), duration_s)
        found.append(FaultRun(run.path.name, list(timeline), list(recoveries)))
    return found


def faults_section(results_dir: Path) -> FaultsSection | None:
    """The runs with faults and a row per fault, or None when no run had any."""
    runs = fault_runs(results_dir)
    rows = [
        {
            "run": run.name,
            "fault": f"{r.action} {r.target}",
            "began_s": r.began_s,
            "ended_s": r.ended_s,
            "before_ops_per_s": r.before_ops_per_s,
            "detect_s": r.detect_s,
            "recover_s": r.recover_s,
        }
        for run in runs
        for r in run.recoveries
    ]
    if not rows:
        return None
    return FaultsSection("faults", "Faults", NOTE, rows, [run.figure for run in runs], runs)
