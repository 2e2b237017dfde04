"""`cachelab validate SPEC...`: check specs and print their points."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from cachelab.cli.arguments import Subparsers, add_json, print_json
from cachelab.cli.common import spec_hint
from cachelab.spec import SpecError, load_spec


def add_parser(sub: Subparsers) -> None:
    validate = sub.add_parser("validate", help="check specs and print their points")
    validate.set_defaults(handler=cmd_validate)
    validate.add_argument("specs", type=Path, nargs="+", metavar="SPEC")
    add_json(validate, "each spec's verdict, points and runs")


@dataclass(frozen=True)
class Verdict:
    """One spec checked; `as_json()` is the `--json` shape (docs/interfaces.md §6)."""

    path: Path
    name: str | None = None
    points: int | None = None
    repetitions: int | None = None
    max_repetitions: int | None = None  # more than `repetitions` under run.repetitions.max
    until_ci_pct: float | None = None
    duration_s: float | None = None
    problems: tuple[str, ...] = ()
    message: str = ""  # the error as the text output shows it

    @property
    def valid(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        runs = None if self.points is None else self.points * (self.repetitions or 0)
        most = None if self.points is None else self.points * (self.max_repetitions or 0)
        return {
            "path": str(self.path),
            "valid": self.valid,
            "name": self.name,
            "points": self.points,
            "repetitions": self.repetitions,
            "max_repetitions": self.max_repetitions,
            "until_ci_pct": self.until_ci_pct,
            "runs": runs,
            "max_runs": most,
            "duration_s": self.duration_s,
            "problems": list(self.problems),
        }


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    verdicts = [_verdict(path) for path in args.specs]
    if args.json:
        print_json({"specs": [v.as_json() for v in verdicts]})
    else:
        for verdict in verdicts:
            _print(verdict, console)
    return 0 if all(v.valid for v in verdicts) else 1


def _verdict(path: Path) -> Verdict:
    try:
        spec = load_spec(path)
    except SpecError as problem:
        return Verdict(
            path, problems=tuple(problem.problems), message=f"{problem}{spec_hint(path)}"
        )
    until = spec.run.until_certain
    return Verdict(
        path,
        name=spec.name,
        points=len(spec.points()),
        repetitions=spec.run.repetitions,
        max_repetitions=until.max if until is not None else spec.run.repetitions,
        until_ci_pct=until.ci_pct if until is not None else None,
        duration_s=spec.run.duration_s,
    )


def _print(verdict: Verdict, console: Console) -> None:
    if not verdict.valid:
        console.print(f"[red]✗[/] {escape(verdict.message)}", highlight=False, soft_wrap=True)
        return
    fields = verdict.as_json()
    runs = f"{fields['runs']}"
    repetitions = f"{verdict.repetitions}"
    if verdict.until_ci_pct is not None:
        runs += f"-{fields['max_runs']}"
        repetitions += f"-{verdict.max_repetitions} (until ±{verdict.until_ci_pct:g} %)"
    console.print(
        f"[green]✓[/] {verdict.path}: {verdict.name}, {verdict.points} points x "
        f"{repetitions} repetitions = {runs} runs of {verdict.duration_s} s",
        highlight=False,
        soft_wrap=True,
    )
