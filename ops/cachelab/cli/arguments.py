"""Options that several commands share, spelt and explained once."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

# The object `add_subparsers` returns, which each command's `add_parser` adds itself to.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_results(parser: argparse.ArgumentParser) -> None:
    """`--results DIR`: the base folder a command writes its new results folder under."""
    parser.add_argument(
        "--results", type=Path, default=None, help="results base folder (default: <repo>/results)"
    )
