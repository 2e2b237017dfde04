"""The prose lint of `make lint`: it catches words about how the project was made and links out
of the repository, and leaves the product's own uses of the same words alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cachelab.devtools.prose_lint import Finding, check_files, main

CAUGHT = [
    ("README.md", "One `make run` in session 3 measured 16k ops/s.", "work-session"),
    ("README.md", "Session 2's run of the same spec on an idle machine", "work-session"),
    ("docs/a.md", "The second model check of issue 10 is this spec.", "issue-reference"),
    ("Foo.java", "  // Found by the session-7 probe.", "work-session"),
    ("Foo.java", " * Idle clients (issue 12, point 8): the heap", "issue-reference"),
    ("test_x.py", "    # the issue's point: 19,683 and 10,495 ops/s", "issue-reference"),
    ("spec.yaml", "# (issue-10's second model check)", "issue-reference"),
    ("docs/a.md", "Fixed in the previous wave.", "wave-or-turn"),
    ("docs/a.md", "## History", "history-section"),
    ("docs/a.md", "Ids from the catalogue `shared/design/EXPERIMENTS.md`.", "outside-path"),
    ("docs/a.md", "See [the peers](../shared/reference/peers.md).", "outside-link"),
    ("docs/a.md", "See [the guide](missing.md).", "outside-link"),
]

KEPT = [
    ("docs/a.md", "an HTTP session, a pytest session-scoped fixture, one test session"),
    ("a.py", "each child starts in its own session (its own process group)"),
    ("docs/a.md", "the bridge plugin turns on ip_forward; in turn, the kubelet"),
    ("docs/a.md", "an old kubelet bug (kubernetes#70014); memtier's `[RUN #1 45%]` line"),
    ("docs/a.md", "a known issue of the kernel; [the chart](b.md); [site](https://helm.sh/docs)"),
    ("docs/a.md", "```\n## History\n```"),
]


def _write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    return tmp_path


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git repository with FILES (the lint lists a repository's files with git)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return _write(tmp_path, files)


def _findings(tmp_path: Path, files: dict[str, str]) -> list[Finding]:
    _write(tmp_path, files)
    return check_files(tmp_path, [Path(name) for name in files])


@pytest.mark.parametrize(("name", "line", "rule"), CAUGHT, ids=[c[1][:40] for c in CAUGHT])
def test_catches_words_about_the_making_and_outside_links(
    tmp_path: Path, name: str, line: str, rule: str
) -> None:
    findings = _findings(tmp_path, {name: "A first line.\n" + line})
    assert {(f.path, f.line) for f in findings} == {(name, 2)}
    assert rule in {f.rule for f in findings}


@pytest.mark.parametrize(("name", "text"), KEPT, ids=[k[1][:40] for k in KEPT])
def test_leaves_the_products_own_words_alone(tmp_path: Path, name: str, text: str) -> None:
    assert _findings(tmp_path, {name: text, "docs/b.md": "b"}) == []


def test_recorded_data_is_not_prose(tmp_path: Path) -> None:
    assert _findings(tmp_path, {"ops/tests/data/run/metadata.json": '{"branch": "issue-10"}'}) == []


@pytest.mark.integration
def test_main_fails_with_one_line_per_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _repo(tmp_path, {"README.md": "ok\nmeasured in session 3\n", "b.md": "clean"})
    assert main([str(root)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "README.md:2: work-session: measured in session 3\n"
    assert "1 line(s) in 1 file(s)" in captured.err
    (root / "README.md").write_text("ok\n")
    assert main([str(root)]) == 0


@pytest.mark.integration
def test_runs_as_a_module(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"docs/a.md": "[out](../../elsewhere.md)"})
    done = subprocess.run(
        [sys.executable, "-m", "cachelab.devtools.prose_lint", str(root)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "docs/a.md:1: outside-link: link ../../elsewhere.md leaves the repository" in done.stdout


def test_links_to_headings_must_find_them(tmp_path: Path) -> None:
    findings = _findings(
        tmp_path,
        {
            "docs/b.md": "# B\n## Local runner (`cachelab/local/`)\n```\n## not a heading\n```",
            "docs/a.md": "[ok](b.md#local-runner-cachelablocal) [top](#a) [bad](b.md#nope)\n# A",
            "docs/c.md": "[code](b.md#not-a-heading) [self](#nowhere)",
        },
    )
    found = [(f.path, f.text) for f in findings]
    assert found == [
        ("docs/a.md", "link b.md#nope: no such heading in b.md"),
        ("docs/c.md", "link b.md#not-a-heading: no such heading in b.md"),
        ("docs/c.md", "no heading for #nowhere"),
    ]
