"""What the Markdown pages of the repository claim, read from their code: the make targets, the
command-line flags and the chart values they name (test_doc_claims.py checks them)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cachelab.paths import repo_root

ROOT = repo_root()

_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"`([^`\n]+)`")
_MAKE = re.compile(
    r"(?:^|[\s;&|(])make\s+(?:-[a-zA-Z]+\s+)*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*([a-z][\w-]*)"
)
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
_JAR = re.compile(r"\b(middleware|loadgen)\.jar\b(.*)")


@dataclass(frozen=True)
class Snippet:
    """A piece of code in a page: an inline span or one command of a fenced block."""

    path: str
    line: int
    text: str


SKIPPED_DIRS = {"target", "results", "node_modules", "__pycache__"}


def markdown_pages() -> list[Path]:
    """Every Markdown page of the repository (not under build outputs, results or dot folders),
    relative to it."""
    pages = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        pages += [Path(folder, f).relative_to(ROOT) for f in files if f.endswith(".md")]
    return sorted(pages)


def snippets(page: Path) -> Iterator[Snippet]:
    """The inline code spans and fenced commands (continuation lines joined) of PAGE."""
    in_fence = False
    pending = ""
    start = 0
    for number, line in enumerate((ROOT / page).read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            if not pending:
                start = number
            pending += line.rstrip("\\").rstrip() + " "
            if not line.rstrip().endswith("\\"):
                yield Snippet(str(page), start, pending.strip())
                pending = ""
            continue
        for match in _SPAN.finditer(line):
            yield Snippet(str(page), number, match.group(1))


def _command_part(text: str) -> str:
    """TEXT without its shell comment and what follows another command."""
    text = re.split(r"\s#\s|\s#$", text, maxsplit=1)[0]
    return re.split(r"\s(?:&&|\|\||;|\|)\s|;\s", text, maxsplit=1)[0]


def make_targets_named() -> Iterator[tuple[Snippet, str]]:
    """(snippet, target) for every `make <target>` in the pages' code."""
    for page in markdown_pages():
        for snippet in snippets(page):
            for match in _MAKE.finditer(snippet.text):
                yield snippet, match.group(1)


_MAKE_VARS = re.compile(
    r"((?:[A-Z_][A-Z0-9_]*=\S*\s+)*)make\s+(?:-[a-zA-Z]+\s+)*((?:[\w-]+\s+|[A-Z_][A-Z0-9_]*=\S*\s*)*)"
)


def make_variables_named() -> Iterator[tuple[Snippet, str]]:
    """(snippet, VARIABLE) for each `VAR=value make ...` or `make target VAR=value` of the pages."""
    for page in markdown_pages():
        for snippet in snippets(page):
            for match in _MAKE_VARS.finditer(snippet.text + " "):
                for part in (match.group(1), match.group(2)):
                    yield from ((snippet, v) for v in re.findall(r"([A-Z_][A-Z0-9_]*)=", part))


def cachelab_flags_named(commands: Iterable[str]) -> Iterator[tuple[Snippet, str, str]]:
    """(snippet, command, flag) for the flags given to `cachelab <command>` in the pages, for
    each of the CLI's COMMANDS."""
    pattern = re.compile(rf"\bcachelab\s+({'|'.join(commands)})\b(.*)")
    for page in markdown_pages():
        for snippet in snippets(page):
            for match in pattern.finditer(snippet.text):
                for flag in _FLAG.findall(_command_part(match.group(2))):
                    yield snippet, match.group(1), flag


def jar_flags_named() -> Iterator[tuple[Snippet, str, str]]:
    """(snippet, jar, flag): flags given to `middleware.jar`/`loadgen.jar` in the pages' code, and
    the flags of the option tables of the sections that document the two command lines."""
    for page in markdown_pages():
        for snippet in snippets(page):
            for match in _JAR.finditer(snippet.text):
                for flag in _FLAG.findall(_command_part(match.group(2))):
                    yield snippet, match.group(1), flag
    tables = {
        "docs/interfaces.md": {
            "## 1. Middleware command line": "middleware",
            "## 2. Load generator command line": "loadgen",
        },
        "loadgen/README.md": {"## Options": "loadgen"},
    }
    for name, sections in tables.items():
        jar = None
        for number, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("## "):
                jar = next((j for title, j in sections.items() if line.startswith(title)), None)
            elif jar and line.startswith("| `-"):
                first_cell = line.split("|")[1]
                for flag in _FLAG.findall(first_cell):
                    yield Snippet(name, number, first_cell.strip()), jar, flag


_VALUE_PATH = re.compile(r"`([a-z][A-Za-z0-9]*(?:\.(?:[A-Za-z0-9]+|<[a-z]+>))+)(?:[=:][^`]*)?`")


def chart_values_named(top_keys: set[str]) -> Iterator[tuple[Snippet, str]]:
    """(snippet, dotted path) for every `a.b.c` in the pages whose first key is one of the chart's
    top-level values (API groups such as monitoring.coreos.com are not values)."""
    for page in markdown_pages():
        text = (ROOT / page).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            for match in _VALUE_PATH.finditer(line):
                path = match.group(1)
                if path.split(".")[0] in top_keys and not re.search(r"\.(com|io|org)$", path):
                    yield Snippet(str(page), number, match.group(0)), path


TUTORIAL = ROOT / "docs" / "tutorial.md"


def tutorial_parts() -> dict[str, list[str]]:
    """The tutorial's fenced shell blocks by the number of their `## N.` part."""
    parts: dict[str, list[str]] = {}
    part = ""
    block: list[str] | None = None
    for line in TUTORIAL.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## (\d+)\.", line)
        if heading:
            part = heading.group(1)
        elif line.startswith("```"):
            if block is None:
                block = [] if line.strip() == "```sh" else None
                if block is None:
                    raise ValueError(f"tutorial: a fence that is not ```sh: {line}")
            else:
                parts.setdefault(part, []).append("\n".join(block))
                block = None
        elif block is not None:
            block.append(line)
    return parts


def tutorial_script(part: str, results: Path, replace: dict[str, str] | None = None) -> str:
    """Part PART's commands as one bash script, writing under RESULTS instead of
    results/tutorial, with the commands of REPLACE swapped (a whole line each)."""
    lines = ["set -euo pipefail", "set -x"]
    for block in tutorial_parts()[part]:
        for line in block.replace("results/tutorial", str(results)).splitlines():
            lines.append((replace or {}).get(line.strip(), line))
    return "\n".join(lines) + "\n"


def run_tutorial_part(
    part: str, workdir: Path, short: str, replace: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run part PART of the tutorial in bash from the repository root, its results/tutorial under
    WORKDIR, with CACHELAB_SET=SHORT shortening its runs."""
    script = workdir / f"tutorial-part{part}.sh"
    script.write_text(tutorial_script(part, workdir / "tutorial", replace))
    return subprocess.run(
        ["bash", str(script)],
        cwd=ROOT,
        env={**os.environ, "CACHELAB_SET": short},
        capture_output=True,
        text=True,
        timeout=1800,
    )


# Folders a page may name a path from: the repository, the Python package and its tests.
PATH_BASES = (ROOT, ROOT / "ops", ROOT / "ops" / "cachelab", ROOT / "ops" / "tests")
# Not followed by `:<tag>`: `cachelab/memcached:1.6.32-alpine` is an image in a registry.
_PATH = re.compile(r"(?<![\w./:$-])((?:\.ci|[a-z][\w-]*)/[\w./-]*[\w/])(?![\w<-]|:\w)")
# What a run writes (results/..., report/... of a results folder, a k8s run's raw/.../k8s/) and
# units that look like paths.
NOT_PATHS = re.compile(
    r"^(?:results|report)/(?!.*\.py$)|^k8s/(?:values|kustomization)\.yaml$|^ops/s"
)


def paths_named() -> Iterator[tuple[Snippet, str]]:
    """(line, path) for every path in the pages whose first folder is one of the repository's or
    of the package's (build outputs, placeholders such as `<name>` and `ops/s` are not paths)."""
    folders = {p.name for base in PATH_BASES for p in base.iterdir() if p.is_dir()}
    for page in markdown_pages():
        text = (ROOT / page).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            for path in _PATH.findall(line):
                first = path.split("/")[0]
                if (
                    first in folders
                    and "target" not in path.split("/")
                    and not NOT_PATHS.match(path)
                ):
                    yield Snippet(str(page), number, line), path
