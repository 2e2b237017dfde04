"""A seed's effects (cachelab.seeds.effects_for) against a run that sweeps the same field: for
each group of the run's other swept fields (workers, say), our curve at the seed's `base` value
beside our curve at its `variant` value, with the saturation ratio (variant / base) and the knee
shift (variant's knee - base's, in clients; knee as in cachelab.fidelity), and whether each goes
the way the seed says. Pure functions over summary.csv and the spec; any thread.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachelab.fidelity import LOAD_AXES, Curve, number, our_curve, point_configs
from cachelab.results import ResultsDir
from cachelab.results.experiment import read_spec
from cachelab.seeds import SeedEffect, effects_for


@dataclass(frozen=True)
class EffectRow:
    """One group of our series: the base and variant curves against what the seed says."""

    experiment: str
    effect: SeedEffect
    group: dict[str, Any]  # the other swept fields' values shared by both curves
    base: Curve
    variant: Curve

    @property
    def saturation_ratio(self) -> float:
        b, v = self.base.saturation, self.variant.saturation
        return v / b if b and math.isfinite(b) and math.isfinite(v) else math.nan

    @property
    def knee_shift_clients(self) -> float:
        return self.variant.knee - self.base.knee

    @property
    def saturation_agrees(self) -> bool | None:
        ratio = self.saturation_ratio
        if not math.isfinite(ratio):
            return None
        return ratio < 1 if self.effect.saturation == "lower" else ratio > 1

    @property
    def knee_agrees(self) -> bool | None:
        shift = self.knee_shift_clients
        if not math.isfinite(shift):
            return None
        return abs(shift - self.effect.knee_shift_clients) <= self.effect.knee_tolerance_clients


def effect_rows(results_dir: Path) -> list[EffectRow]:
    """Each effect of the spec's seeds against the run's like groups ([] when the spec does not
    sweep the effect's field over both of its values)."""
    results = ResultsDir(results_dir)
    spec = read_spec(results)
    if not results.summary_file.is_file():
        return []
    with results.summary_file.open(newline="") as handle:
        summary = list(csv.DictReader(handle))
    rows = []
    for seed in spec.seeds:
        for effect in effects_for(seed):
            swept = list(spec.sweep)
            if effect.field not in swept:
                continue
            others = [f for f in swept if f != effect.field and f not in (effect.x, *LOAD_AXES)]
            values = point_configs(spec, [effect.field, *others])
            groups: dict[tuple[Any, ...], dict[str, list[dict[str, str]]]] = {}
            for row in summary:
                point = values.get(int(row["point"])) if row.get("point", "").isdigit() else None
                if point is None:
                    continue
                key = tuple(str(point[f]) for f in others)
                groups.setdefault(key, {}).setdefault(str(point[effect.field]), []).append(row)
            for key, by_value in sorted(groups.items()):
                if effect.base in by_value and effect.variant in by_value:
                    rows.append(
                        EffectRow(
                            spec.name,
                            effect,
                            dict(zip(others, key, strict=True)),
                            our_curve(by_value[effect.base], effect.x),
                            our_curve(by_value[effect.variant], effect.x),
                        )
                    )
    return rows


def _verdict(agrees: bool | None) -> str:
    return {True: "as the seed", False: "not as the seed", None: "not known"}[agrees]


HEADER = [
    "experiment",
    "seed",
    "change",
    "group",
    "saturation ops/s (base -> variant = ratio; seed: direction)",
    "knee, clients (base -> variant = shift; seed's shift)",
    "seed's source",
]


def table_rows(rows: list[EffectRow]) -> list[list[str]]:
    cells = []
    for row in rows:
        e = row.effect
        cells.append(
            [
                row.experiment,
                e.seed,
                f"{e.field} {e.base} -> {e.variant}",
                ", ".join(f"{k.split('.')[-1]} {v}" for k, v in row.group.items()) or "all",
                f"{number(row.base.saturation)} -> {number(row.variant.saturation)} = "
                f"{number(row.saturation_ratio, 2)}; seed: {e.saturation} "
                f"({_verdict(row.saturation_agrees)})",
                f"{number(row.base.knee)} -> {number(row.variant.knee)} = "
                f"{number(row.knee_shift_clients):s}; seed: {e.knee_shift_clients:+g} "
                f"± {e.knee_tolerance_clients:g} ({_verdict(row.knee_agrees)})",
                e.source,
            ]
        )
    return cells


def line(row: EffectRow) -> str:
    """One row as a sentence, for a terminal."""
    experiment, seed, change, group, saturation, knee, source = table_rows([row])[0]
    return (
        f"{experiment} against {seed} ({source}): {change}, {group}: saturation {saturation}; "
        f"knee {knee}"
    )


def markdown(rows: list[EffectRow]) -> str:
    if not rows:
        return ""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines) + "\n"


def markdown_with_provenance(folders: list[Path]) -> str:
    """cachelab.fidelity's table of the folders (with how each was measured) and below it the
    effects of their seeds, as docs/experiments.md shows them."""
    from cachelab import fidelity

    rows = [row for folder in folders for row in effect_rows(folder)]
    table = fidelity.markdown_with_provenance(folders)
    return table + ("\n" + markdown(rows) if rows else "")
