"""`cachelab fidelity RESULTS_DIR...`: ours / the seed's saturation, knee, low-load response time,
shape and bottleneck, for each series that matches a seed curve like for like; one line per
curve refused, naming the fields that differ; and, for a seed that states an effect in words
(a change lowered the maximum, moved the knee), our two series of that change against it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cachelab.cli.arguments import Subparsers, add_json, print_json
from cachelab.cli.common import error

if TYPE_CHECKING:
    from cachelab.effects import EffectRow
    from cachelab.fidelity import Curve, FidelityRow, Refusal


def add_parser(sub: Subparsers) -> None:
    fidelity = sub.add_parser(
        "fidelity", help="print ours / the seed's saturation, knee and low-load response time"
    )
    fidelity.set_defaults(handler=cmd_fidelity)
    fidelity.add_argument("results_dirs", type=Path, nargs="+", metavar="RESULTS_DIR")
    shape = fidelity.add_mutually_exclusive_group()
    shape.add_argument("--markdown", action="store_true", help="a Markdown table")
    add_json(shape, "each seed curve against ours")


def _row(row: FidelityRow) -> dict[str, Any]:
    """One row (the `--json` shape of docs/interfaces.md §6); an unknown number is null."""

    def numbers(curve: Curve) -> dict[str, float]:
        return {
            "saturation_ops_per_s": curve.saturation,
            "knee": curve.knee,
            "low_load_rt_ms": curve.low_load_rt_ms,
        }

    return {
        "experiment": row.experiment,
        "seed": row.seed,
        "series": row.series,
        "x": row.x,
        "config": row.config,
        "ours": numbers(row.ours),
        "seed_published": numbers(row.theirs),
        "ratios": row.ratios(),
        "shape_max_abs_difference": row.shape_difference,
        "bottleneck": {
            "ours": row.our_bottleneck,
            "seed": row.seed_bottleneck.kind if row.seed_bottleneck else "none_stated",
            "seed_where": row.seed_bottleneck.where if row.seed_bottleneck else "",
            "same": row.same_bottleneck,
        },
        "a_priori_model": {
            "saturation_ops_per_s": row.predicted_saturation,
            "bottleneck": row.predicted_bottleneck,
        },
        "seed_rt_from_law": row.rt_from_law,
        "source": row.source,
    }


def _effect(row: EffectRow) -> dict[str, Any]:
    """One effect row (`--json`); an unknown number is null."""
    effect = row.effect
    return {
        "experiment": row.experiment,
        "seed": effect.seed,
        "field": effect.field,
        "base": effect.base,
        "variant": effect.variant,
        "group": row.group,
        "saturation_ops_per_s": {"base": row.base.saturation, "variant": row.variant.saturation},
        "saturation_ratio": row.saturation_ratio,
        "knee": {"base": row.base.knee, "variant": row.variant.knee},
        "knee_shift_clients": row.knee_shift_clients,
        "seed_says": {
            "saturation": effect.saturation,
            "knee_shift_clients": effect.knee_shift_clients,
            "knee_tolerance_clients": effect.knee_tolerance_clients,
        },
        "saturation_agrees": row.saturation_agrees,
        "knee_agrees": row.knee_agrees,
        "source": effect.source,
    }


def _refusal(refusal: Refusal) -> dict[str, Any]:
    return {
        "experiment": refusal.experiment,
        "seed": refusal.seed,
        "series": refusal.curve,
        "differences": [
            {"field": name, "ours": ours, "seed": theirs}
            for name, ours, theirs in refusal.differences
        ],
        "reason": refusal.reason or None,
    }


def cmd_fidelity(args: argparse.Namespace, console: Console) -> int:
    from cachelab import effects as seed_effects
    from cachelab.fidelity import (
        HEADER,
        FidelityError,
        compare,
        markdown_with_provenance,
        nothing_matches,
        table_rows,
    )
    from cachelab.results import ResultsError

    rows, refused, effects = [], [], []
    for folder in args.results_dirs:
        try:
            comparison = compare(folder)
            effect_rows = seed_effects.effect_rows(folder)
        except (FidelityError, ResultsError) as problem:
            return error(console, str(problem))
        if not comparison.rows and not effect_rows:
            return error(console, nothing_matches(folder, comparison))
        rows += comparison.rows
        refused += comparison.refused
        effects += effect_rows
    if args.json:
        print_json(
            {
                "rows": [_row(row) for row in rows],
                "refused": [_refusal(r) for r in refused],
                "effects": [_effect(e) for e in effects],
            }
        )
        return 0
    if args.markdown:
        print(markdown_with_provenance(args.results_dirs), end="")
        print(("\n" + seed_effects.markdown(effects)) if effects else "", end="")
        return 0
    if rows:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for name in HEADER:
            table.add_column(name)
        for cells in table_rows(rows):
            table.add_row(*(escape(c) for c in cells))
        console.print(table)
    for effect in effects:
        console.print(escape(seed_effects.line(effect)), soft_wrap=True)
    for refusal in refused:
        console.print(escape(refusal.line()), soft_wrap=True)
    return 0
