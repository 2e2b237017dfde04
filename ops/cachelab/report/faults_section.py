"""The report's faults section: each run with faults drawn second by second (throughput, p99,
errors) with every fault's span, the time to detect and the time to recover; the plot takes
its three ``axes``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cachelab.faults.recovery import Recovery, Second, loadgen_logs, read_timeline, recoveries_of
from cachelab.results import ResultsDir
from cachelab.results.records import PointRecord

FAULT_COLOUR = "#c0392b"


def plot_fault_run(
    axes: Sequence[Axes], timeline: Sequence[Second], recoveries: Sequence[Recovery], title: str
) -> None:
    """Throughput, p99 and errors per second on three axes sharing x, each fault shaded."""
    seconds = [s.second for s in timeline]
    top, middle, bottom = axes
    top.plot(seconds, [s.good_ops_per_s for s in timeline], marker="o", markersize=3)
    top.set_ylabel("ops/s without error")
    top.set_title(title)
    middle.plot(seconds, [s.p99_ms for s in timeline], marker="o", markersize=3, color="#dd8452")
    middle.set_ylabel("p99 (ms)")
    middle.set_yscale("log")
    bottom.bar(seconds, [s.errors for s in timeline], width=-0.8, align="edge", color="#888888")
    bottom.set_ylabel("errors")
    bottom.set_xlabel("seconds since the loadgens started (each point ends its second)")
    for r in recoveries:
        if not math.isfinite(r.began_s):
            continue
        end = r.ended_s if math.isfinite(r.ended_s) and r.ended_s > r.began_s else r.began_s + 0.2
        for ax in axes:
            ax.axvspan(r.began_s, end, color=FAULT_COLOUR, alpha=0.15)
            ax.grid(True, alpha=0.3)
        top.annotate(
            f"{r.action} {r.target}",
            (r.began_s, 0),
            xycoords=("data", "axes fraction"),
            xytext=(2, 4),
            textcoords="offset points",
            fontsize=8,
            color=FAULT_COLOUR,
        )
        if math.isfinite(r.before_ops_per_s):
            top.axhline(0.9 * r.before_ops_per_s, color="#2a9d50", linestyle=":", linewidth=1)
        if math.isfinite(r.detect_s):
            top.axvline(r.began_s + r.detect_s, color=FAULT_COLOUR, linestyle="--", linewidth=1)
        healed = r.ended_s if math.isfinite(r.ended_s) else r.began_s
        if math.isfinite(r.recover_s):
            top.axvline(healed + r.recover_s, color="#2a9d50", linestyle="--", linewidth=1)


def faults_section(results_dir: Path, out: Path) -> dict[str, Any] | None:
    """Figures (faults-p<point>-r<rep>.png in `out`) and table rows of every run with faults,
    or None when no run had any."""
    figures: list[str] = []
    rows: list[dict[str, Any]] = []
    for run in ResultsDir(results_dir).runs():
        if not run.point_file.is_file():
            continue
        record = PointRecord.load(run.point_file)
        recoveries = recoveries_of(run.path, record.spec, record.loadgens)
        if not recoveries:
            continue
        duration_s = float(record.spec.get("run", {}).get("duration_s", math.inf))
        timeline = read_timeline(loadgen_logs(run.path, record.loadgens), duration_s)
        name = run.path.name
        figure = Figure(figsize=(10.0, 6.4))
        axes = figure.subplots(3, 1, sharex=True)
        plot_fault_run(axes, timeline, recoveries, f"{name}: each second around the faults")
        figure.tight_layout()
        figure.savefig(out / f"faults-{name}.png", dpi=110)
        figures.append(f"faults-{name}.png")
        for r in recoveries:
            rows.append(
                {
                    "run": name,
                    "fault": f"{r.action} {r.target}",
                    "began_s": r.began_s,
                    "ended_s": r.ended_s,
                    "before_ops_per_s": r.before_ops_per_s,
                    "detect_s": r.detect_s,
                    "recover_s": r.recover_s,
                }
            )
    if not rows:
        return None
    return {"id": "faults", "title": "Faults", "figures": figures, "rows": rows, "note": NOTE}


NOTE = (
    "Each fault's span is shaded. Time to detect: from the fault's start to the end of the first "
    "second with an error, p99 above twice the p99 before, or throughput below half of it (red "
    "dashes). Time to recover: from the fault's end (a kill: its start) to the end of the first "
    "second from which throughput holds at or above 90 % of the throughput before (green dots) "
    "for two seconds (green dashes); empty when it never did within the run."
)
