"""What every command shares: its one-line errors and notes, the checks of the folders it reads
and writes, and where the shipped specs are."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape

EXPERIMENTS_DIR = Path(__file__).resolve().parents[2] / "experiments"


def stderr_console() -> Console:
    """The console of a command whose stdout is its JSON: messages on stderr, plain lines when
    stderr is no terminal."""
    from cachelab.terminal import TABLE_WIDTH

    if sys.stderr.isatty():
        return Console(stderr=True)
    return Console(stderr=True, width=TABLE_WIDTH, no_color=True, highlight=False, soft_wrap=True)


def error(console: Console, message: str) -> int:
    """Print `error: MESSAGE` and return the commands' status for it (2)."""
    console.print(f"[red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return 2


def note(console: Console, message: str) -> None:
    console.print(f"[yellow]note:[/] {escape(message)}", highlight=False, soft_wrap=True)


def spec_hint(path: Path) -> str:
    """For a spec file that does not exist: the shipped spec of that name, or where they are."""
    if path.exists():
        return ""
    shipped = EXPERIMENTS_DIR / f"{path.stem}.yaml"
    try:
        shown = shipped.relative_to(Path.cwd())
    except ValueError:
        shown = shipped
    if shipped.is_file():
        return f"\n  did you mean {shown}?"
    return f"\n  `cachelab list` shows the specs in {EXPERIMENTS_DIR}"


def not_results(folder: Path) -> str | None:
    """Why ``folder`` is no results folder with a summary, or None if it is one."""
    if not folder.exists():
        return f"{folder}: no such folder"
    if not folder.is_dir():
        return f"{folder}: not a folder"
    if not (folder / "summary.csv").is_file():
        return f"{folder}: no summary.csv (is it a results folder?)"
    return None


def incomplete_note(folder: Path, shown_by: str = "the report shows") -> str | None:
    """A line saying that ``folder``'s experiment did not finish every run (its status.json), or
    that nothing says whether it did; None for a complete one. A report (or, with ``shown_by``
    "the summary has", a summary) of such a folder shows what was measured and must not pass for
    the whole experiment."""
    from cachelab.results import ResultsDir, ResultsError
    from cachelab.results.experiment import read_status

    try:
        status = read_status(ResultsDir(folder))
    except ResultsError as problem:
        return f"{problem}: whether every run finished is unknown"
    state = status.get("state")
    if state == "complete":
        return None
    if not status:
        return f"{folder}: no status.json, so whether every run finished is unknown"
    runs = f" ({status.get('runs_done', '?')}/{status.get('runs_total', '?')} runs)"
    return f"{folder}: the experiment is {state}{runs}; {shown_by} only the runs that ended"


def cannot_write(folder: Path) -> str | None:
    """Why no results folder can be made in ``folder`` (created if missing), or None."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as problem:
        return f"cannot write there ({problem.strerror or problem})"
    return None


def first_missing(folder: Path) -> Path | None:
    """The outermost folder of ``folder``'s path that does not exist yet (None: it exists)."""
    missing = None
    for path in (folder, *folder.absolute().parents):
        if path.exists():
            break
        missing = path
    return missing


def remove_made(folder: Path, made: Path | None) -> None:
    """Remove the empty folders from ``folder`` up to ``made``: what the write check created
    for a command that then failed."""
    if made is None:
        return
    for path in (folder.absolute(), *folder.absolute().parents):
        if not path.is_dir() or any(path.iterdir()):
            return
        path.rmdir()
        if path == made.absolute():
            return
