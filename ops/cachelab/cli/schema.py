"""`cachelab schema`: the JSON schema of the spec format, on stdout."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

from cachelab.cli.arguments import Subparsers
from cachelab.spec import json_schema


def add_parser(sub: Subparsers) -> None:
    schema = sub.add_parser("schema", help="print the JSON schema of the spec format")
    schema.set_defaults(handler=cmd_schema)


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
    return 0
