"""`cachelab report RESULTS_DIR`: build report/index.html for a results folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from cachelab.cli.arguments import Subparsers
from cachelab.cli.common import error, incomplete_note, not_results, note


def add_parser(sub: Subparsers) -> None:
    report = sub.add_parser("report", help="build report/index.html for a results folder")
    report.set_defaults(handler=cmd_report)
    report.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    from cachelab.report import build_report
    from cachelab.report.search_report import is_search

    searched = Path(args.results_dir).is_dir() and is_search(Path(args.results_dir))
    problem = None if searched else not_results(args.results_dir)
    if problem:
        return error(console, problem)

    try:
        index = build_report(args.results_dir)
    except Exception as failure:  # the report's own errors name what is wrong
        return error(console, f"report failed: {type(failure).__name__}: {failure}")
    from cachelab.results.metadata import record_command

    record_command(Path(args.results_dir) / "metadata.json")
    console.print(f"report: [bold]{index}[/]", highlight=False)
    incomplete = None if searched else incomplete_note(args.results_dir)
    if incomplete:
        note(console, incomplete)
    return 0
