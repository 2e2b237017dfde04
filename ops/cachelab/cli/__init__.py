"""The `cachelab` command line: one module per command (run, search, fidelity, validate, report,
compare, summarize, list, schema, render, collect), each with its `add_parser(sub)` and its
`cmd_<name>(args, console)`; `main` builds the parser from them and dispatches."""

from __future__ import annotations

from cachelab.cli.common import first_missing as _first_missing
from cachelab.cli.common import incomplete_note
from cachelab.cli.common import remove_made as _remove_made
from cachelab.cli.main import build_parser, main

__all__ = ["_first_missing", "_remove_made", "build_parser", "incomplete_note", "main"]
