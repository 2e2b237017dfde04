"""The seed experiments as data: their ids and where each is published (`catalogue.csv`), and
the numbers published for some of them (`curves.yaml`), for the overlay and the fidelity table.

`known_seed` checks a spec's `seeds:` entry; `curves_for` gives a seed's curves and
`matching` the curve of one of a run's series. Read once per process; any thread.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

DATA_DIR = Path(__file__).parent
CATALOGUE = DATA_DIR / "catalogue.csv"
CURVES = DATA_DIR / "curves.yaml"


@dataclass(frozen=True)
class SeedEntry:
    """One seed experiment: its id, the report it comes from and where in that report."""

    id: str
    report: str
    where: str


@dataclass(frozen=True)
class SeedCurve:
    """One published series: x values and metrics named as summary.csv columns."""

    seed: str
    source: str
    label: str
    match: dict[str, Any]
    x: str
    points: dict[str, list[float]]

    def has(self, metric: str) -> bool:
        return metric in self.points

    def series(self, metric: str) -> tuple[list[float], list[float]]:
        return list(self.points[self.x]), list(self.points[metric])


@cache
def catalogue() -> dict[str, SeedEntry]:
    with CATALOGUE.open(newline="", encoding="utf-8") as handle:
        return {row["id"]: SeedEntry(**row) for row in csv.DictReader(handle)}


@cache
def all_curves() -> tuple[SeedCurve, ...]:
    data = yaml.safe_load(CURVES.read_text(encoding="utf-8"))
    return tuple(SeedCurve(**entry) for entry in data)


def known_seed(seed: str) -> str | None:
    """Why `seed` is not a seed experiment id, or None."""
    if seed in catalogue():
        return None
    near = sorted(s for s in catalogue() if s.split("-")[0] == seed.split("-")[0])
    hint = f" (ids of that report: {', '.join(near[:8])}{', ...' if len(near) > 8 else ''})"
    return f"{seed!r} is no seed experiment{hint if near else ''}"


def curves_for(seed: str) -> list[SeedCurve]:
    return [c for c in all_curves() if c.seed == seed]


def _same(value: Any, wanted: Any) -> bool:
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return str(value) == str(wanted)


def matching(curves: list[SeedCurve], values: dict[str, Any]) -> SeedCurve | None:
    """The curve whose every `match` column has its value in `values` (a run's series: the
    summary.csv columns it shares); a column `values` lacks does not match."""
    for curve in curves:
        if all(k in values and _same(values[k], v) for k, v in curve.match.items()):
            return curve
    return None
