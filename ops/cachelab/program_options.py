"""The Java programs' command-line options, as they describe themselves.

`schemas/middleware-options.json` and `schemas/loadgen-options.json` are exported from the
programs' picocli models (their flags, defaults, help and ranges; `make options` rewrites them, and
a Java unit test of each program fails when its copy is stale).
The spec takes its bounds from here, and the tests of the chart and the docs compare their copies
with it, so a range is written once, in Java.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SCHEMAS = Path(__file__).parent / "schemas"

Number = int | float


@dataclass(frozen=True)
class Option:
    """One flag: its names, parameter label, default, range and help text."""

    names: tuple[str, ...]
    param: str | None
    type: str
    required: bool
    default: str | None
    description: str
    min: Number | None = None
    max: Number | None = None
    max_is: str | None = None
    or_zero: bool = False
    count: bool = False
    exclusive: bool = False

    @property
    def name(self) -> str:
        """The longest name (`--event-loops`; `-t` for a short flag alone)."""
        return max(self.names, key=len)

    @property
    def range_text(self) -> str | None:
        """The range as the help states it (`0..64`, `1..servers`, `0 or >= 1048576`)."""
        if self.min is None:
            return None
        if self.or_zero:
            return f"0 or >= {self.min}"
        if self.exclusive:
            return f"({self.min}, {self.max})"
        return f"{self.min}..{self.max_is or self.max}"


@dataclass(frozen=True)
class Options:
    """A program's options in `--help`'s order."""

    program: str
    options: tuple[Option, ...]

    def __getitem__(self, name: str) -> Option:
        for option in self.options:
            if name in option.names:
                return option
        raise KeyError(f"{self.program} has no option {name}")

    def bounds(self, name: str) -> tuple[Number, Number]:
        """`(min, max)` of a bounded option, for a pydantic `Field(ge=..., le=...)` (or `gt`,
        `lt` when the option excludes them)."""
        option = self[name]
        if option.min is None or option.max is None:
            raise KeyError(f"{self.program} {name} has no closed range")
        return option.min, option.max


def _number(value: Number | None) -> Number | None:
    """A whole number as an int (the loadgen writes 5.0), so that schemas and messages say 5."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


@cache
def load(program: str) -> Options:
    """The checked-in description of `program` (`middleware`, `loadgen`)."""
    data = json.loads((SCHEMAS / f"{program}-options.json").read_text())
    options = tuple(
        Option(
            **{
                **raw,
                "names": tuple(raw["names"]),
                "min": _number(raw.get("min")),
                "max": _number(raw.get("max")),
            }
        )
        for raw in data["options"]
    )
    return Options(program=data["program"], options=options)


def middleware() -> Options:
    return load("middleware")


def loadgen() -> Options:
    return load("loadgen")


def _flag(option: Option) -> str:
    names = "`, `".join(option.names)
    return f"`{names}{' ' + option.param if option.param else ''}`".replace("|", "\\|")


def _default(option: Option) -> str:
    if option.required:
        return "required"
    return "" if option.default is None else f"`{option.default}`"


def flag_table(opts: Options) -> str:
    """Every flag with its help text and default, as `--help` gives them (middleware/README.md)."""
    rows = ["| flag | meaning | default |", "|---|---|---|"]
    for o in opts.options:
        meaning = o.description.replace("|", "\\|")
        rows.append(f"| {_flag(o)} | {meaning} | {_default(o)} |")
    return "\n".join(rows) + "\n"


def range_table(opts: Options) -> str:
    """Every flag with its range and default: the contract the other parts rely on."""
    rows = ["| flag | range | default |", "|---|---|---|"]
    for o in opts.options:
        if o.names[0] not in ("-h", "-V"):
            counted = " values" if o.count else ""
            stated = f"{o.range_text}{counted}" if o.range_text else ""
            rows.append(f"| {_flag(o)} | {stated} | {_default(o)} |")
    return "\n".join(rows) + "\n"


# The generated tables: (file from the repository root, marker name, program, renderer).
TABLES = [
    ("middleware/README.md", "flags", "middleware", flag_table),
    ("docs/interfaces.md", "middleware-flags", "middleware", range_table),
]


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin (make options) -->\n", f"<!-- {name}:end -->"


def rendered(text: str, name: str, table: str) -> str:
    """`text` with the table between the `name` markers replaced by `table`."""
    begin, end = _markers(name)
    start, stop = text.index(begin) + len(begin), text.index(end)
    return text[:start] + table + text[stop:]


def stale_tables(root: Path) -> list[str]:
    """The generated tables that differ from the description (files from `root`)."""
    stale = []
    for path, name, program, render in TABLES:
        text = (root / path).read_text()
        if rendered(text, name, render(load(program))) != text:
            stale.append(f"{path} ({name})")
    return stale


def write_tables(root: Path) -> None:
    for path, name, program, render in TABLES:
        file = root / path
        file.write_text(rendered(file.read_text(), name, render(load(program))))


if __name__ == "__main__":
    import sys

    write_tables(Path(sys.argv[1]))
