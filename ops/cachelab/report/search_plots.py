"""The figure of a search: the SLO statistic against the load of every step, the SLO line and the
answer. Draws on the ``ax`` it is given; `write_search_figure` saves it beside search.csv."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from cachelab.search.steps import FAIL, PASS, REPEAT, Step
from cachelab.slo import Slo

SEARCH_FIGURE = "search.png"
_STYLE = {PASS: ("o", "#2a9d50", "met"), FAIL: ("s", "#c0392b", "missed")}


def plot_search(
    ax: Axes, steps: Sequence[Step], slo: Slo, answer: float | None, load_label: str
) -> None:
    """Each decided step at (load, statistic) with its 95 % interval, repeated attempts as grey
    crosses, the SLO as a horizontal line and the answer as a vertical one."""
    for verdict, (marker, colour, text) in _STYLE.items():
        chosen = [s for s in steps if s.verdict == verdict]
        if not chosen:
            continue
        xs = [s.load for s in chosen]
        ys = [s.measurement.statistic_ms(slo) for s in chosen]
        low = [
            _gap(y, s.measurement.slo_low_ms, below=True) for y, s in zip(ys, chosen, strict=True)
        ]
        high = [
            _gap(y, s.measurement.slo_high_ms, below=False) for y, s in zip(ys, chosen, strict=True)
        ]
        ax.errorbar(
            xs, ys, yerr=[low, high], fmt=marker, color=colour, capsize=3, label=f"SLO {text}"
        )
    repeated = [s for s in steps if s.verdict == REPEAT]
    if repeated:
        ax.plot(
            [s.load for s in repeated],
            [s.measurement.statistic_ms(slo) for s in repeated],
            "x",
            color="#999999",
            label="repeated (not trusted)",
        )
    ax.axhline(slo.limit_ms, color="#333333", linestyle="--", linewidth=1, label=slo.text)
    if answer is not None:
        ax.axvline(answer, color="#2a9d50", linestyle=":", linewidth=1.5)
        ax.annotate(
            f"answer {answer:,.6g}",
            (answer, slo.limit_ms),
            textcoords="offset points",
            xytext=(4, 6),
            fontsize=8,
        )
    ax.set_xlabel(load_label)
    ax.set_ylabel(f"{slo.statistic} response time (ms)")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def _gap(value: float, bound: float, below: bool) -> float:
    if not (math.isfinite(value) and math.isfinite(bound)):
        return 0.0
    return max(0.0, value - bound if below else bound - value)


def write_search_figure(
    folder: Path, steps: Sequence[Step], slo: Slo, answer: float | None, load_label: str
) -> Path:
    figure = Figure(figsize=(6.4, 4.0))
    plot_search(figure.add_subplot(), steps, slo, answer, load_label)
    figure.tight_layout()
    path = folder / SEARCH_FIGURE
    figure.savefig(path, dpi=110)
    return path
