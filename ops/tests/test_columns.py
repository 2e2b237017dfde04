"""The column catalogue (cachelab.columns): every summary.csv column has a unit and a meaning,
docs/columns.md is the catalogue as generated, and the code takes the names of the numeric
columns (and of their per-point `_mean` / `_ci95`) from the catalogue, never as strings."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

import cachelab
from cachelab import columns
from cachelab.columns import CATALOGUE, POINTS, SUMMARY, describe, markdown, summary_columns
from cachelab.paths import repo_root

ROOT = repo_root()
DATA = Path(__file__).resolve().parent / "data"


def test_docs_columns_md_is_the_generated_catalogue() -> None:
    assert (ROOT / "docs" / "columns.md").read_text() == markdown(), (
        "docs/columns.md is stale: regenerate it with "
        "`.venv/bin/python -m cachelab.columns > docs/columns.md` (from ops/)"
    )


def test_every_summary_column_is_catalogued() -> None:
    for column in summary_columns(["topology.workers", "workload.ratio"]):
        assert describe(column, SUMMARY) is not None, column


@pytest.mark.parametrize("folder", sorted(p.name for p in DATA.glob("results-*")))
def test_every_recorded_summary_header_is_catalogued(folder: str) -> None:
    header = pd.read_csv(DATA / folder / "summary.csv", nrows=0).columns
    assert [c for c in header if describe(c, SUMMARY) is None] == []


def test_a_column_without_an_entry_is_not_described() -> None:
    assert describe("U host CPU", "report/points.csv") is None
    assert describe("cpu loadgen-0", "report/points.csv") is None
    assert describe("throughput_ops_per_s_std", "report/points.csv") is None
    assert describe("cpu_loadgen_0_cores", "report/points.csv") is not None
    assert describe("throughput_ops_per_s_ci95", "report/points.csv") is not None


def test_names_are_snake_case_with_a_unit() -> None:
    for column in CATALOGUE:
        name = column.name.replace("{", "").replace("}", "")
        assert name == name.lower() and " " not in name, column.name
        assert column.unit and column.meaning, column.name


# --- column names in code ---------------------------------------------------------------------

CACHELAB = Path(cachelab.__file__).resolve().parent
CATALOGUE_MODULE = CACHELAB / "columns.py"

# A string equal to a column's name that is not that column: a key of another format, or words.
# (module, function, the strings, what they are)
_NOT_COLUMNS: list[tuple[str, str, tuple[str, ...], str]] = [
    (
        "results/middleware.py",
        "read_middleware_summary",
        ("throughput_ops_per_s",),
        "the middleware's stats JSON",
    ),
    (
        "k8s/metrics.py",
        "summary_from_scrapes",
        ("throughput_ops_per_s", "errors"),
        "the middleware's stats JSON, rebuilt from Prometheus",
    ),
    (
        "terminal.py",
        "parse_progress",
        ("p99_ms", "errors"),
        "groups of the loadgen's progress line",
    ),
    ("local/runner.py", "_preload", ("hits", "misses", "miss_ratio"), "the preload check's record"),
    ("k8s/preload.py", "read", ("miss_ratio",), "the preload check's record"),
    ("local/latency.py", "off_links", ("p50_ms",), "a field of a link's calibration"),
    ("summary.py", "_achieved_rtts", ("p50_ms",), "a field of a link's calibration"),
    (
        "report/sections/network.py",
        "network_section",
        ("p50_ms", "p90_ms"),
        "a field of a link's calibration",
    ),
    ("summary.py", "row_of", ("think_time_ms",), "the spec's workload field the column copies"),
    ("dashboards.py", "overview_dashboard", ("errors",), "a panel's legend"),
    ("report/figures/faults.py", "plot_fault_run", ("errors",), "an axis label"),
]
NOT_COLUMNS = {(m, f, s) for m, f, strings, _ in _NOT_COLUMNS for s in strings}


def _names_in_code() -> dict[str, str]:
    """The constants of cachelab.columns named after their column (`THROUGHPUT_OPS_PER_S`)."""
    return {
        value: name
        for name, value in vars(columns).items()
        if isinstance(value, str) and name == value.upper()
    }


def _column_names() -> dict[str, str]:
    """Every name code takes from cachelab.columns, with how to write it."""
    named = _names_in_code()
    found = dict(named.items())
    for column, constant in named.items():
        found[columns.mean_column(column)] = f"mean_column({constant})"
        found[columns.ci95_column(column)] = f"ci95_column({constant})"
    return found


class _Literals(ast.NodeVisitor):
    """The string constants of a module with the function or class they are in."""

    def __init__(self) -> None:
        self.scope: list[str] = []
        self.found: list[tuple[str, int, str]] = []

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self.found.append((".".join(self.scope) or "<module>", node.lineno, node.value))


def _source_strings() -> list[tuple[str, str, int, str]]:
    """(module, innermost function or class, line, string) of every string constant in
    ops/cachelab outside the catalogue."""
    found = []
    for path in sorted(CACHELAB.rglob("*.py")):
        if path == CATALOGUE_MODULE:
            continue
        module = path.relative_to(CACHELAB).as_posix()
        visitor = _Literals()
        visitor.visit(ast.parse(path.read_text(), filename=str(path)))
        found += [(module, scope, line, value) for scope, line, value in visitor.found]
    return found


def test_every_numeric_summary_column_has_a_name_in_code() -> None:
    named = _names_in_code()
    numeric = [
        c
        for c in [columns.TOTAL_CLIENTS, columns.THINK_TIME_MS, *columns.METRIC_COLUMNS]
        if (entry := describe(c, SUMMARY)) is not None and entry.unit not in ("text", "JSON")
    ]
    assert [c for c in numeric if c not in named] == []
    assert [c for c in named if describe(c, SUMMARY) is None and describe(c, POINTS) is None] == []


def test_code_takes_column_names_from_the_catalogue() -> None:
    names = _column_names()
    offences = [
        f"{module}:{line} ({scope}): {value!r} -> {names[value]}"
        for module, scope, line, value in _source_strings()
        if value in names and (module, scope.split(".")[-1], value) not in NOT_COLUMNS
    ]
    assert offences == [], "a column's name written as a string: import it from cachelab.columns"


def test_every_exception_is_a_string_in_its_function() -> None:
    seen = {(module, scope.split(".")[-1], value) for module, scope, _, value in _source_strings()}
    assert [key for key in NOT_COLUMNS if key not in seen] == []
