"""`cachelab validate SPEC...`: check specs and print their points."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from cachelab.cli.arguments import Subparsers
from cachelab.cli.common import spec_hint
from cachelab.spec import SpecError, load_spec


def add_parser(sub: Subparsers) -> None:
    validate = sub.add_parser("validate", help="check specs and print their points")
    validate.set_defaults(handler=cmd_validate)
    validate.add_argument("specs", type=Path, nargs="+", metavar="SPEC")


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    failed = 0
    for path in args.specs:
        try:
            spec = load_spec(path)
        except SpecError as problem:
            message = escape(f"{problem}{spec_hint(path)}")
            console.print(f"[red]✗[/] {message}", highlight=False, soft_wrap=True)
            failed += 1
            continue
        points = spec.points()
        runs = f"{len(points) * spec.run.repetitions}"
        repetitions = f"{spec.run.repetitions}"
        if spec.run.until_certain is not None:
            until = spec.run.until_certain
            runs += f"-{len(points) * until.max}"
            repetitions += f"-{until.max} (until ±{until.ci_pct:g} %)"
        console.print(
            f"[green]✓[/] {path}: {spec.name}, {len(points)} points x "
            f"{repetitions} repetitions = {runs} runs of {spec.run.duration_s} s",
            highlight=False,
            soft_wrap=True,
        )
    return 1 if failed else 0
