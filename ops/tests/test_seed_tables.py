"""The seeds' published numbers in cachelab/seeds/curves.yaml against the lines of the seed texts
they were taken from, stored verbatim in cachelab/seeds/tables/: a number changed in either
fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cachelab.paths import repo_root
from cachelab.seeds import TABLES_DIR, Excerpt, SeedCurve, all_curves, all_effects

# A number as printed; "11k" (thousands, in a sentence) is 11000, "10'242" (an apostrophe between
# thousands) is 10242.
NUMBER = re.compile(r"(?<![\w.'])(-?\d{1,3}(?:'\d{3})+|-?\d+(?:\.\d+)?)(k?)(?![\w.'])")
SEED_TEXTS = repo_root().parent / "shared" / "seeds"
WITH_EXCERPT = [c for c in all_curves() if c.excerpt is not None]


def numbers(line: str) -> list[float]:
    return [float(n.replace("'", "")) * (1000 if k else 1) for n, k in NUMBER.findall(line)]


def excerpt_lines(excerpt: Excerpt) -> list[str]:
    return excerpt.path.read_text(encoding="utf-8").splitlines()


def printed(excerpt: Excerpt, metric: str) -> list[float]:
    """The metric's numbers as printed (before `scale`): a row-wise table's line, a column of
    a column-wise table's rows, or its parts' lines added up number by number."""
    lines = excerpt_lines(excerpt)
    if metric in excerpt.sums:
        parts = [numbers(lines[index - 1]) for index in excerpt.sums[metric]]
        return [sum(values) for values in zip(*parts, strict=True)]
    if metric in excerpt.columns:
        first, last = excerpt.rows
        return [numbers(line)[excerpt.columns[metric] - 1] for line in lines[first - 1 : last]]
    where = excerpt.lines[metric]
    if isinstance(where, list):  # a row the text splits over lines: its numbers, in any order
        return [n for index in where for n in numbers(lines[index - 1])]
    return numbers(lines[where - 1])


def _id(curve: SeedCurve) -> str:
    return f"{curve.seed}:{curve.label}"


@pytest.mark.parametrize("curve", WITH_EXCERPT, ids=_id)
def test_each_published_number_is_the_one_printed(curve: SeedCurve) -> None:
    excerpt = curve.excerpt
    assert excerpt is not None
    checked = [*excerpt.lines, *excerpt.columns, *excerpt.sums]
    assert "throughput_ops_per_s" in checked
    for metric in checked:
        scale = excerpt.scale.get(metric, 1.0)
        ours = curve.points[metric]
        theirs = [n * scale for n in printed(excerpt, metric)]
        where = excerpt.lines.get(metric)
        if isinstance(where, list):
            for value in ours:  # each value once among the split row's numbers
                match = next(i for i, n in enumerate(theirs) if n == pytest.approx(value))
                theirs.pop(match)
        else:
            assert theirs[-len(ours) :] == pytest.approx(ours), (curve.label, metric)
    if excerpt.columns and curve.x is not None:  # a column-wise table prints one row per x
        first, last = excerpt.rows
        assert last - first + 1 == len(curve.points[curve.x])


def test_every_stored_excerpt_is_used() -> None:
    used = {c.excerpt.file for c in WITH_EXCERPT if c.excerpt is not None}
    used |= {e.excerpt for e in all_effects()}
    assert {p.stem for p in TABLES_DIR.glob("*.txt")} == used


def _normalised(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.skipif(
    not SEED_TEXTS.is_dir(),
    reason=f"the seed texts are not beside this checkout ({SEED_TEXTS}); the excerpts are then "
    "checked against curves.yaml only",
)
@pytest.mark.parametrize("path", sorted(TABLES_DIR.glob("*.txt")), ids=lambda p: p.stem)
def test_each_excerpt_is_printed_in_a_seed_text(path: Path) -> None:
    texts = [_normalised(p.read_text(encoding="utf-8")) for p in SEED_TEXTS.glob("*.txt")]
    for line in path.read_text(encoding="utf-8").splitlines():
        assert any(_normalised(line) in text for text in texts), line
