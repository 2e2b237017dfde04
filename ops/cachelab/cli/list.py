"""`cachelab list`: the experiment specs, their points, runs and estimated wall time."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cachelab.cli.arguments import Subparsers, add_json, print_json
from cachelab.cli.common import EXPERIMENTS_DIR, error
from cachelab.spec import Spec, SpecError, load_spec

RUN_OVERHEAD_TEXT = "JVM start/stop"


def add_parser(sub: Subparsers) -> None:
    listing = sub.add_parser("list", help="list the experiment specs")
    listing.set_defaults(handler=cmd_list)
    listing.add_argument(
        "--dir", type=Path, default=EXPERIMENTS_DIR, help="folder of specs (*.yaml)"
    )
    add_json(listing, "the specs, their points, runs and estimated wall time")


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    from cachelab.experiment import estimate_wall_s
    from cachelab.terminal import format_seconds

    if not args.dir.is_dir():
        return error(console, f"--dir {args.dir}: no such folder")
    if not any(args.dir.glob("*.yaml")):
        return error(console, f"--dir {args.dir}: no *.yaml spec in it")

    entries = [_entry(path, estimate_wall_s) for path in sorted(args.dir.glob("*.yaml"))]
    total_s = sum(e["wall_s"] or 0.0 for e in entries)
    if args.json:
        print_json({"dir": args.dir, "specs": entries, "wall_s": total_s})
        return 0
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("spec", no_wrap=True)
    for name in ("points", "runs", "wall"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("seeds", no_wrap=True)
    for entry in entries:
        if not entry["valid"]:
            invalid = escape(f"invalid: {entry['problems'][0]}")
            table.add_row(entry["name"], "-", "-", "-", invalid)
            continue
        table.add_row(
            entry["name"],
            str(entry["points"]),
            str(entry["runs"]),
            "~" + format_seconds(entry["wall_s"]),
            "\n".join(entry["seeds"]),
        )
    console.print(table)
    console.print(
        f"wall: estimated local time (runs x (duration + {RUN_OVERHEAD_TEXT}) + preloads);\n"
        f"all specs ~{format_seconds(total_s)}",
        highlight=False,
    )
    return 0


def _entry(path: Path, estimate_wall_s: Callable[[Spec], float]) -> dict[str, Any]:
    """One spec of the listing (the `--json` shape of docs/interfaces.md §6)."""
    entry: dict[str, Any] = {"name": path.stem, "path": path}
    try:
        spec = load_spec(path)
    except SpecError as problem:
        none: dict[str, Any] = {"points": None, "runs": None, "wall_s": None, "seeds": []}
        return {**entry, "valid": False, **none, "problems": problem.problems}
    points = len(spec.points())
    return {
        **entry,
        "valid": True,
        "points": points,
        "runs": points * spec.run.repetitions,
        "wall_s": estimate_wall_s(spec),
        "seeds": list(spec.seeds),
        "problems": [],
    }
