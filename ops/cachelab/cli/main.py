"""The `cachelab` command line: run, search, reproduce, fidelity, validate, report, compare,
summarize, list, schema, render, collect."""

# PYTHON_ARGCOMPLETE_OK

from __future__ import annotations

import argparse
import sys

import argcomplete

from cachelab import __version__
from cachelab.cli import (
    collect,
    compare,
    fidelity,
    render,
    report,
    reproduce,
    run,
    schema,
    search,
    summarize,
    validate,
)
from cachelab.cli import list as list_specs
from cachelab.cli.arguments import CommandParser
from cachelab.cli.common import error, stderr_console
from cachelab.terminal import make_console

# The commands in the order `cachelab --help` lists them.
COMMANDS = (
    run,
    search,
    reproduce,
    fidelity,
    validate,
    report,
    compare,
    summarize,
    list_specs,
    schema,
    render,
    collect,
)


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="cachelab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"cachelab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argcomplete.autocomplete(parser)  # a shell asking for completions: answer, exit
    args = parser.parse_args(argv)
    console = stderr_console() if getattr(args, "json", False) else make_console()
    if args.command is None:
        parser.print_help()
        return 2
    try:
        result: int = args.handler(args, console)
    except KeyboardInterrupt:  # Ctrl-C in a report or a comparison: a line, not a traceback
        error(console, "interrupted")
        return 130
    return result


if __name__ == "__main__":
    sys.exit(main())
