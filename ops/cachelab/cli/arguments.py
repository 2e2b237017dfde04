"""Options that several commands share, spelt and explained once."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

# The object `add_subparsers` returns, which each command's `add_parser` adds itself to.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_results(parser: argparse.ArgumentParser) -> None:
    """`--results DIR`: the base folder under which the command makes its new results folder
    (<experiment>/<timestamp>); the folder it reads or resumes is a positional RESULTS_DIR or
    `--resume RESULTS_DIR`."""
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        metavar="DIR",
        help="base folder of the new results folder, which goes in DIR/<experiment>/<timestamp> "
        "(default: <repo>/results)",
    )


def add_out(parser: argparse.ArgumentParser, default: Path | None, default_text: str) -> None:
    """`--out DIR`: the folder the command writes its files into, as it is named (made if
    missing; files of the same name replaced)."""
    parser.add_argument(
        "--out",
        type=Path,
        default=default,
        metavar="DIR",
        help=f"folder the files are written into (default: {default_text})",
    )
