"""The report's faults figure: a run with faults second by second (throughput, p99, errors) with
every fault's span, the time to detect and the time to recover, on three ``axes`` sharing x."""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.axes import Axes

from cachelab.faults.recovery import Recovery, Second
from cachelab.report.sections.faults import FaultRun

FAULT_COLOUR = "#c0392b"
SIZE = (10.0, 6.4)


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


def fault_run(axes: Sequence[Axes], run: FaultRun) -> None:
    plot_fault_run(axes, run.timeline, run.recoveries, f"{run.name}: each second around the faults")
