"""Fidelity: a run's curves against its seed's published ones, as ours / seed's.

For each seed the spec names (`seeds:`) and each of the seed's published curves
(cachelab.seeds) that matches one of the run's series, three numbers on each side:

- saturation throughput: the highest mean throughput over the curve's points;
- knee: the first x (clients, or offered rate) whose mean throughput reaches `KNEE_FRAC` of
  that maximum;
- response time at low load: the mean response time at the smallest x. For a seed that published
  only throughput it is N / X (the interactive law with Z = 0: clients over throughput), said so in
  the row.

A curve over something other than the load (a value size at the seed's highest client count) has
no knee and no low load: it compares its saturation (the highest throughput over its x) and is
drawn over its own x.

Absolute numbers depended on the seeds' 2016-2019 cloud VMs, so the ratios are a comparison of
shapes and scale, not a pass or fail. Pure functions over summary.csv; any thread.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachelab.results import ResultsDir
from cachelab.results.experiment import read_spec
from cachelab.seeds import SeedCurve, curves_for

KNEE_FRAC = 0.95
THROUGHPUT = "throughput_ops_per_s"
RESPONSE_TIME = "response_time_ms"
LOAD_AXES = ("total_clients", "topology.clients_per_thread", "workload.rate_ops")


class FidelityError(ValueError):
    """A results folder with nothing to compare (one line saying why)."""


@dataclass(frozen=True)
class Curve:
    """x values with the mean throughput and response time at each (NaN where not known)."""

    x: list[float]
    throughput: list[float]
    response_time_ms: list[float]
    load_axis: bool = True  # x is the load (clients, rate); else no knee and no low load

    @property
    def saturation(self) -> float:
        return max(self.throughput) if self.throughput else math.nan

    @property
    def knee(self) -> float:
        if not self.load_axis:
            return math.nan
        top = self.saturation
        for x, tp in zip(self.x, self.throughput, strict=True):
            if tp >= KNEE_FRAC * top:
                return x
        return math.nan

    @property
    def low_load_rt_ms(self) -> float:
        if not self.load_axis:
            return math.nan
        return self.response_time_ms[0] if self.response_time_ms else math.nan


@dataclass(frozen=True)
class FidelityRow:
    """One of our series against one seed curve."""

    experiment: str
    seed: str
    series: str
    source: str
    ours: Curve
    theirs: Curve
    rt_from_law: bool  # the seed's low-load response time is N / X
    x: str = "total_clients"  # the summary.csv column both curves are drawn over

    def ratios(self) -> dict[str, float]:
        def ratio(a: float, b: float) -> float:
            return a / b if b and math.isfinite(a) and math.isfinite(b) else math.nan

        return {
            "saturation": ratio(self.ours.saturation, self.theirs.saturation),
            "knee": ratio(self.ours.knee, self.theirs.knee),
            "low_load_rt": ratio(self.ours.low_load_rt_ms, self.theirs.low_load_rt_ms),
        }


def seed_curve(curve: SeedCurve) -> tuple[Curve, bool]:
    """The seed's points as a Curve, and whether its response time comes from N / X."""
    xs, tps = curve.series(THROUGHPUT)
    load = curve.x in LOAD_AXES
    if curve.has(RESPONSE_TIME):
        return Curve(xs, tps, curve.series(RESPONSE_TIME)[1], load), False
    if not load:
        return Curve(xs, tps, [math.nan] * len(xs), load), False
    law = [1000.0 * x / tp if tp else math.nan for x, tp in zip(xs, tps, strict=True)]
    return Curve(xs, tps, law), True


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def our_curve(rows: Sequence[dict[str, str]], x: str) -> Curve:
    """Means over repetitions at each x of the ok rows."""
    by_x: dict[float, list[dict[str, str]]] = {}
    for row in rows:
        if row.get("status") == "ok" and math.isfinite(_float(row.get(x))):
            by_x.setdefault(_float(row[x]), []).append(row)
    xs = sorted(by_x)
    return Curve(
        xs,
        [statistics.fmean(_float(r[THROUGHPUT]) for r in by_x[v]) for v in xs],
        [statistics.fmean(_float(r.get(RESPONSE_TIME)) for r in by_x[v]) for v in xs],
        x in LOAD_AXES,
    )


def _label(match: dict[str, Any]) -> str:
    return ", ".join(f"{k.split('.')[-1]}={v}" for k, v in match.items())


def fidelity_rows(results_dir: Path) -> list[FidelityRow]:
    """Every (seed curve, our matching series) of one results folder; FidelityError when none."""
    results = ResultsDir(results_dir)
    spec = read_spec(results)
    if not results.summary_file.is_file():
        raise FidelityError(f"{results_dir}: no summary.csv (is it a results folder?)")
    with results.summary_file.open(newline="") as handle:
        summary = list(csv.DictReader(handle))
    if not spec.seeds:
        raise FidelityError(f"{results_dir}: its spec names no seed experiment (seeds:)")
    found = []
    for seed in spec.seeds:
        for curve in curves_for(seed):
            mine = [r for r in summary if _matches(r, curve.match)]
            if not mine or curve.x not in mine[0]:
                continue
            theirs, from_law = seed_curve(curve)
            found.append(
                FidelityRow(
                    spec.name,
                    seed,
                    _label(curve.match),
                    curve.source,
                    our_curve(mine, curve.x),
                    theirs,
                    from_law,
                    curve.x,
                )
            )
    if not found:
        raise FidelityError(
            f"{results_dir}: no published numbers of {', '.join(spec.seeds)} match its series "
            "(cachelab/seeds/curves.yaml holds the seeds' numbers)"
        )
    return found


def _matches(row: dict[str, str], match: dict[str, Any]) -> bool:
    for column, wanted in match.items():
        if column not in row:
            return False
        value = _float(row[column])
        if math.isfinite(value) and isinstance(wanted, int | float):
            if value != float(wanted):
                return False
        elif str(row[column]) != str(wanted):
            return False
    return True


def _n(value: float, digits: int = 0) -> str:
    if not math.isfinite(value):
        return "\u2013"
    return f"{value:,.{digits}f}"


def table_rows(rows: Sequence[FidelityRow]) -> list[list[str]]:
    """Text cells: experiment, seed, series, saturation, knee, low-load RT (ours / seed's =
    ratio), source."""
    cells = []
    for row in rows:
        r = row.ratios()
        law = " (seed: N/X)" if row.rt_from_law else ""
        cells.append(
            [
                row.experiment,
                row.seed,
                row.series,
                f"{_n(row.ours.saturation)} / {_n(row.theirs.saturation)} = "
                f"{_n(r['saturation'], 2)}",
                f"{_n(row.ours.knee)} / {_n(row.theirs.knee)} = {_n(r['knee'], 2)}",
                f"{_n(row.ours.low_load_rt_ms, 2)} / {_n(row.theirs.low_load_rt_ms, 2)} ms = "
                f"{_n(r['low_load_rt'], 2)}{law}",
                row.source,
            ]
        )
    return cells


HEADER = [
    "experiment",
    "seed",
    "series",
    "saturation ops/s (ours / seed = ratio)",
    "knee, clients (ours / seed = ratio)",
    "low-load response time (ours / seed = ratio)",
    "seed's source",
]


def markdown(rows: Sequence[FidelityRow]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines) + "\n"


def provenance(results_dir: Path) -> str:
    """When, where and by which command a results folder was measured (its metadata.json)."""
    from cachelab.results.metadata import read_metadata

    results = ResultsDir(results_dir)
    meta = read_metadata(results.metadata_file)
    host = meta.get("host") or {}
    before = _load((host.get("load_avg") or [None])[0])
    after = _load(((meta.get("host_after") or {}).get("load_avg") or [None])[0])
    command = " ".join(meta.get("command_line") or []) or "?"
    command = command.replace(str(Path(command.split(" ")[0]).parent) + "/", "", 1)
    return (
        f"{read_spec(results).name}: measured {meta.get('created', '?')} on "
        f"{host.get('hostname', '?')} ({host.get('cpu_count', '?')} cores, load average "
        f"{before} before, {after} after), `{command}`"
    )


def _load(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, int | float) else "?"


def markdown_with_provenance(folders: Sequence[Path]) -> str:
    """The table and, above it, one line per results folder saying how it was measured."""
    rows = [row for folder in folders for row in fidelity_rows(folder)]
    lines = [f"- {provenance(folder)}" for folder in folders]
    return "\n".join(lines) + "\n\n" + markdown(rows)
