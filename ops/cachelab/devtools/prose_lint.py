"""The product speaks of itself: no words about how it was made, no links out of the repository.

Fails (status 1, one `path:line: rule: text` line per finding) on

- words about the making of the project rather than the project: numbered work sessions, issues,
  waves or turns (the word followed by its number, or a pull request's number), references back
  to them (the word after "this" or "the ... 's"), and `History`/`Changelog` sections in Markdown
  (tests/test_prose_lint.py lists the cases caught and left alone);
- links that leave the repository other than to public sites: Markdown links to paths outside the
  repository or to files that do not exist, `file:` links, and paths into folders beside the
  repository (`../shared/...`, `shared/design/...`, `/work/...`).

Every tracked (and new, not ignored) text file is read: sources, comments, Javadoc, test names,
specs, charts and Markdown. Recorded data (JSON, CSV, logs) is a record, not prose, and is not
read. A legitimate use that a rule catches goes into ALLOW (path glob and a regex of the line).

Usage: python -m cachelab.devtools.prose_lint [ROOT]   (ROOT defaults to the git top level)
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

TEXT_SUFFIXES = frozenset(
    {
        ".md", ".java", ".py", ".yaml", ".yml", ".sh", ".tpl", ".toml", ".xml", ".c", ".h",
        ".go", ".j2", ".html", ".properties", ".cfg", ".ini", ".txt",
    }
)  # fmt: skip
TEXT_NAMES = frozenset({"Makefile", "run", "Dockerfile", ".helmignore", ".gitignore"})
# Recorded outputs under test data are data, whatever their suffix.
DATA_GLOBS = ("*/tests/data/*.txt", "*/tests/*/data/*.txt", "*.hgrm")


@dataclass(frozen=True)
class Rule:
    """One pattern of words that do not belong in the product, and why."""

    name: str
    pattern: re.Pattern[str]
    markdown_only: bool = False


_I = re.IGNORECASE
RULES: tuple[Rule, ...] = (
    Rule("work-session", re.compile(r"\bsessions?[-_ ]?\d+\b|\bsession-\w*\d", _I)),
    Rule(
        "work-session",
        re.compile(r"\b(?:this|that|previous|last|next|earlier|later|one) session(?:'s)?\b", _I),
    ),
    Rule("issue-reference", re.compile(r"\bissues?[-_ ]?#?\d+\b", _I)),
    Rule("issue-reference", re.compile(r"\b(?:the|this|that) issue(?:'s)?\b", _I)),
    Rule(
        "issue-reference",
        re.compile(r"(?:\(|\b(?:PR|pull request|fixes|fixed|closes|see)\s+)#\d+\b", _I),
    ),
    Rule("wave-or-turn", re.compile(r"\b(?:wave|turn)s?[-_ ]?\d+\b", _I)),
    Rule(
        "wave-or-turn",
        re.compile(r"\b(?:this|that|previous|last|next|earlier|later) (?:wave|turn)\b", _I),
    ),
    Rule("who-did-what", re.compile(r"\bintegrator\b|\bhelper session\b|\bfiled by\b", _I)),
    Rule(
        "history-section",
        re.compile(r"^#{1,6}\s*(?:history|change ?log|changes)\b", _I),
        markdown_only=True,
    ),
    Rule(
        "outside-path",
        re.compile(
            r"(?:\.\./)+shared/|(?<![\w./-])shared/(?:design|reference)\b|(?<![\w.-])/work/"
        ),
    ),
    Rule("outside-path", re.compile(r"\b(?:ARCHITECTURE|EXPERIMENTS)\.md\b")),
)

# (path glob, regex of the line): uses of a rule's words that are about the product.
ALLOW: tuple[tuple[str, re.Pattern[str]], ...] = (
    # the lint and its test name the words they look for
    ("ops/cachelab/devtools/prose_lint.py", re.compile(".")),
    ("ops/tests/test_prose_lint.py", re.compile(".")),
)

_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_PUBLIC_SCHEMES = ("http://", "https://", "mailto:")


@dataclass(frozen=True)
class Finding:
    """A line that breaks a rule."""

    path: str
    line: int
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.text.strip()[:160]}"


def repo_files(root: Path) -> list[Path]:
    """Tracked and new (not ignored) files under ROOT, relative to it."""
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted({Path(name) for name in out.split("\0") if name})


def is_prose(path: Path) -> bool:
    """Whether the file is text the lint reads (not recorded data)."""
    if any(fnmatch.fnmatch(str(path), glob) for glob in DATA_GLOBS):
        return False
    return path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES


def _allowed(path: str, line: str) -> bool:
    return any(fnmatch.fnmatch(path, glob) and rx.search(line) for glob, rx in ALLOW)


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown text (lower case, punctuation other
    than `-` and `_` dropped, spaces as `-`; a repeated heading gets `-1`, `-2`, ...)."""
    anchors: set[str] = set()
    in_fence = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        heading = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
            anchor, n = slug, 0
            while anchor in anchors:
                n += 1
                anchor = f"{slug}-{n}"
            anchors.add(anchor)
    return anchors


def _link_problem(root: Path, source: Path, target: str) -> str | None:
    """Why a Markdown link target leaves the repository or leads nowhere (None if it is fine)."""
    if target.startswith(_PUBLIC_SCHEMES):
        return None
    if target.startswith("#"):
        text = (root / source).read_text(encoding="utf-8")
        return None if target[1:] in heading_anchors(text) else f"no heading for {target}"
    if target.startswith("file:"):
        return "a file: link leads outside the repository"
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None  # another public scheme (e.g. ftp:), not a path
    path_part = target.split("#", 1)[0].split("?", 1)[0]
    if not path_part:
        return None
    base = root if path_part.startswith("/") else (root / source).parent
    resolved = (base / path_part.lstrip("/")).resolve()
    try:
        resolved.relative_to(root.resolve())
    except ValueError:
        return f"link {target} leaves the repository"
    if not resolved.exists():
        return f"link {target} leads to no file"
    fragment = target.partition("#")[2]
    if (
        fragment
        and resolved.suffix == ".md"
        and fragment not in heading_anchors(resolved.read_text(encoding="utf-8"))
    ):
        return f"link {target}: no such heading in {path_part}"
    return None


def check_text(root: Path, path: Path, text: str) -> Iterator[Finding]:
    """The findings in one file's text (PATH relative to ROOT)."""
    name = str(path)
    markdown = path.suffix == ".md"
    in_fence = False
    for number, line in enumerate(text.splitlines(), start=1):
        if markdown and line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if _allowed(name, line):
            continue
        broken: set[str] = set()  # one finding per rule and line
        for rule in RULES:
            if rule.markdown_only and (not markdown or in_fence):
                continue
            if rule.name not in broken and rule.pattern.search(line):
                broken.add(rule.name)
                yield Finding(name, number, rule.name, line)
        if markdown and not in_fence:
            for match in _MD_LINK.finditer(line):
                problem = _link_problem(root, path, match.group(1))
                if problem:
                    yield Finding(name, number, "outside-link", problem)


def check_files(root: Path, paths: Iterable[Path]) -> list[Finding]:
    """The findings in the prose files among PATHS (relative to ROOT)."""
    findings: list[Finding] = []
    for path in paths:
        if not is_prose(path) or not (root / path).is_file():
            continue
        try:
            text = (root / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        findings.extend(check_text(root, path, text))
    return findings


def git_root() -> Path:
    """The top of the git checkout around the working directory (the devtools' default root)."""
    out = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], check=True, capture_output=True, text=True
    ).stdout
    return Path(out.strip())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else git_root()
    findings = check_files(root, repo_files(root))
    for finding in findings:
        print(finding)
    if findings:
        files = len({f.path for f in findings})
        print(
            f"prose-lint: {len(findings)} line(s) in {files} file(s) speak of how the project was"
            " made or link outside the repository (ops/cachelab/devtools/prose_lint.py)",
            file=sys.stderr,
        )
        return 1
    print("prose-lint: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
