"""`cachelab summarize RESULTS_DIR`: rebuild summary.csv from a results folder's raw/."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from cachelab.cli.arguments import Subparsers
from cachelab.cli.common import error, incomplete_note, note


def add_parser(sub: Subparsers) -> None:
    summarize = sub.add_parser("summarize", help="rebuild summary.csv from a results folder")
    summarize.set_defaults(handler=cmd_summarize)
    summarize.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")


def cmd_summarize(args: argparse.Namespace, console: Console) -> int:
    from cachelab.results import ResultsError
    from cachelab.summary import build_summary

    if not (args.results_dir / "spec.yaml").is_file():
        return error(console, f"{args.results_dir}: no spec.yaml (is it a results folder?)")
    try:
        path = build_summary(args.results_dir)
    except ResultsError as problem:
        return error(console, str(problem))
    console.print(f"summary: [bold]{escape(str(path))}[/]")
    incomplete = incomplete_note(args.results_dir, shown_by="the summary has")
    if incomplete:
        note(console, incomplete)
    return 0
