"""`cachelab list`: the experiment specs, their points, runs and estimated wall time."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cachelab.cli.arguments import Subparsers
from cachelab.cli.common import EXPERIMENTS_DIR, error
from cachelab.spec import SpecError, load_spec

RUN_OVERHEAD_TEXT = "JVM start/stop"


def add_parser(sub: Subparsers) -> None:
    listing = sub.add_parser("list", help="list the experiment specs")
    listing.set_defaults(handler=cmd_list)
    listing.add_argument("--dir", type=Path, default=EXPERIMENTS_DIR, help="folder of specs")


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    from cachelab.experiment import estimate_wall_s
    from cachelab.terminal import format_seconds

    if not args.dir.is_dir():
        return error(console, f"--dir {args.dir}: no such folder")
    if not any(args.dir.glob("*.yaml")):
        return error(console, f"--dir {args.dir}: no *.yaml spec in it")

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("spec", no_wrap=True)
    for name in ("points", "runs", "wall"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("seeds", no_wrap=True)
    total_s = 0.0
    for path in sorted(args.dir.glob("*.yaml")):
        try:
            spec = load_spec(path)
        except SpecError as problem:
            table.add_row(path.stem, "-", "-", "-", escape(f"invalid: {problem.problems[0]}"))
            continue
        points = len(spec.points())
        wall_s = estimate_wall_s(spec)
        total_s += wall_s
        table.add_row(
            path.stem,
            str(points),
            str(points * spec.run.repetitions),
            "~" + format_seconds(wall_s),
            "\n".join(spec.seeds),
        )
    console.print(table)
    console.print(
        f"wall: estimated local time (runs x (duration + {RUN_OVERHEAD_TEXT}) + preloads);\n"
        f"all specs ~{format_seconds(total_s)}",
        highlight=False,
    )
    return 0
