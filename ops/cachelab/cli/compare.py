"""`cachelab compare RESULTS_DIR...`: several results folders overlaid on the same axes, as one
report."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from cachelab.cli.arguments import Subparsers, add_out
from cachelab.cli.common import (
    cannot_write,
    error,
    first_missing,
    incomplete_note,
    not_results,
    note,
    remove_made,
)


def add_parser(sub: Subparsers) -> None:
    compare = sub.add_parser(
        "compare", help="overlay several results folders on the same axes, as one report"
    )
    compare.set_defaults(handler=cmd_compare)
    compare.add_argument("results_dirs", type=Path, nargs="+", metavar="RESULTS_DIR")
    compare.add_argument(
        "--label",
        action="append",
        default=[],
        help="legend label of the next folder, in order (default: <experiment>/<timestamp>)",
    )
    add_out(compare, Path("cachelab-compare"), "./cachelab-compare")
    compare.add_argument(
        "--x", default=None, help="summary.csv column on the x axis (default: the specs' report.x)"
    )


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from cachelab.report import ReportError
    from cachelab.report.compare import build_comparison

    for folder in args.results_dirs:
        problem = not_results(folder)
        if problem:
            return error(console, problem)
    made = first_missing(args.out)
    unwritable = cannot_write(args.out)
    if unwritable:
        remove_made(args.out, made)
        return error(console, f"--out {args.out}: {unwritable}")
    try:
        index = build_comparison(args.results_dirs, args.out, args.label, args.x)
    except ReportError as failure:
        remove_made(args.out, made)
        return error(console, str(failure))
    console.print(f"comparison: [bold]{index}[/]", highlight=False)
    for folder in args.results_dirs:
        incomplete = incomplete_note(folder)
        if incomplete:
            note(console, incomplete)
    return 0
