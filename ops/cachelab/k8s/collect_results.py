"""`cachelab collect`: placeholder."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console


def add_parser(sub: Any) -> None:
    sub.add_parser("collect")


def cmd_collect(args: argparse.Namespace, console: Console) -> int:
    return 2
