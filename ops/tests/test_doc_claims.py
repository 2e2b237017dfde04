"""The claims of the Markdown pages that code can check: the make targets they name exist, the
flags they give to `cachelab`, the middleware and the loadgen are in those commands' --help, and
the chart values they name are in values.yaml (or its schema, for optional keys); `make help`
lists each target once, and the test targets are the tiers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from doc_claims import (
    PATH_BASES,
    ROOT,
    cachelab_flags_named,
    chart_values_named,
    jar_flags_named,
    make_targets_named,
    make_variables_named,
    paths_named,
)

from cachelab.cli import build_parser

MAKEFILE = (ROOT / "Makefile").read_text()
TARGETS = set(re.findall(r"^([a-zA-Z_0-9-]+):", MAKEFILE, re.MULTILINE))
TIERS = [
    "test-unit",
    "test-integration",
    "test-e2e",
    "test-k8s",
    "test-k8s-real",
    "test-k8s-cilium",
]
TEST_ALL = (ROOT / "scripts" / "test-all.sh").read_text()
CHART = ROOT / "charts" / "testbed"
# middleware/README.md is being rewritten as a reference in another change, without the targets
# that overlapped the tiers; until it lands, its two mentions of `make test-java` are known.
NAMED_BEFORE_THE_TIERS: set[tuple[str, str]] = set()


def test_every_make_target_named_in_the_pages_exists() -> None:
    named = list(make_targets_named())
    assert len(named) > 30  # the pages do name targets: the reader works
    missing = [
        f"{s.path}:{s.line}: make {t}"
        for s, t in named
        if t not in TARGETS and (s.path, t) not in NAMED_BEFORE_THE_TIERS
    ]
    assert missing == []


def test_make_help_lists_each_target_once_and_the_tests_are_the_tiers() -> None:
    documented = re.findall(r"^([a-zA-Z_0-9-]+):.*?## ", MAKEFILE, re.MULTILINE)
    assert len(documented) == len(set(documented))
    test_section = MAKEFILE.split("##@ Test", 1)[1].split("##@ ", 1)[0]
    tests = re.findall(r"^(test[\w-]*):.*?## ", test_section, re.MULTILINE)
    assert tests == ["test", *TIERS]
    # `make test` is scripts/test-all.sh, which runs the lint and then every tier in order
    assert re.search(r"^test: ## .*\n\t@scripts/test-all.sh$", MAKEFILE, re.MULTILINE)
    runs = re.findall(r"^\s*part \"[^\"]+\" make_ ([\w-]+)", TEST_ALL, re.MULTILINE)
    assert [t for t in runs if t.startswith("test-")] == TIERS
    assert "lint" in runs and "check-installs" in runs


def _cachelab_options() -> dict[str, set[str]]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {
        name: {s for action in sub._actions for s in action.option_strings}
        for name, sub in subparsers.choices.items()  # type: ignore[attr-defined]
    }


def test_every_cachelab_flag_named_in_the_pages_exists() -> None:
    options = _cachelab_options()
    named = list(cachelab_flags_named(options))
    assert len(named) > 20
    missing = [
        f"{s.path}:{s.line}: cachelab {cmd} {flag}"
        for s, cmd, flag in named
        if flag not in options[cmd]
    ]
    assert missing == []


def _values_has(values: Any, schema: dict[str, Any], path: list[str]) -> bool:
    """Whether PATH (a `<name>` part stands for any key) is in the values or the schema."""
    if not path:
        return True
    key, rest = path[0], path[1:]
    sub_schema: dict[str, Any] = {}
    properties = schema.get("properties", {})
    if key.startswith("<"):
        keys = list(values) if isinstance(values, dict) else []
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and _values_has(None, extra, rest):
            return True
        return any(_values_has(values[k], properties.get(k, extra or {}), rest) for k in keys)
    if key in properties:
        sub_schema = properties[key]
    elif isinstance(schema.get("additionalProperties"), dict):
        sub_schema = schema["additionalProperties"]
    in_values = isinstance(values, dict) and key in values
    if not in_values and not sub_schema:
        return False
    return _values_has(values.get(key) if in_values else None, sub_schema, rest)


def test_every_chart_value_named_in_the_pages_exists() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    schema = json.loads((CHART / "values.schema.json").read_text())
    named = list(chart_values_named(set(values)))
    assert len(named) > 40
    missing = [
        f"{s.path}:{s.line}: {path}"
        for s, path in named
        if not _values_has(values, schema, path.split("."))
    ]
    assert missing == []


def _java() -> str:
    home = subprocess.run(
        [str(ROOT / "scripts" / "find-jdk.sh")], capture_output=True, text=True, check=True
    ).stdout.strip()
    return f"{home}/bin/java"


@pytest.mark.integration
@pytest.mark.parametrize("jar", ["middleware", "loadgen"])
def test_every_jar_flag_named_in_the_pages_is_in_its_help(jar: str) -> None:
    path = ROOT / jar / "target" / f"{jar}.jar"
    if not path.is_file() and not os.environ.get("CACHELAB_ROOT"):
        pytest.fail(f"{path} is missing: make build")
    done = subprocess.run(
        [_java(), "-jar", str(path), "--help"], capture_output=True, text=True, timeout=60
    )
    shown = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", done.stdout + done.stderr))
    named = [(s, flag) for s, j, flag in jar_flags_named() if j == jar]
    assert len(named) > 10
    missing = sorted(
        {f"{s.path}:{s.line}: {jar}.jar {flag}" for s, flag in named if flag not in shown}
    )
    assert missing == []


def _tier_expressions() -> dict[str, str]:
    """Each tier's pytest marker expression, as the Makefile gives it (CILIUM=1, as CI)."""
    expressions = {}
    for tier in TIERS:
        recipe = MAKEFILE.split(f"\n{tier}:", 1)[1].split("\n.PHONY", 1)[0]
        found = re.search(
            r'\$\(PYTEST\) -m "(?:\$\(if \$\(filter 1,\$\(CILIUM\)\),)?([^,"]+)', recipe
        )
        assert found, f"{tier}: no pytest -m expression"
        expressions[tier] = found.group(1)
    return expressions


@pytest.mark.integration
def test_each_python_test_runs_in_exactly_one_tier() -> None:
    from _pytest.mark.expression import Expression

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "tier_probe"],
        cwd=ROOT / "ops",
        env={**os.environ, "PYTHONPATH": str(ROOT / "ops" / "tests")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    tests = [line.split(" ")[1:] for line in done.stdout.splitlines() if line.startswith("TIER-")]
    assert len(tests) > 500
    compiled = {tier: Expression.compile(e) for tier, e in _tier_expressions().items()}
    wrong = []
    for nodeid, *rest in tests:
        markers = set(rest[0].split(",")) if rest and rest[0] else set()
        tiers = [t for t, e in compiled.items() if e.evaluate(markers.__contains__)]
        if len(tiers) != 1:
            wrong.append(f"{nodeid} ({','.join(sorted(markers))}): {tiers}")
    assert wrong == []


def test_every_chart_value_is_documented_in_the_chart_readme() -> None:
    params = re.findall(r"## @param (\S+)", (CHART / "values.yaml").read_text())
    assert len(params) > 80
    readme = (CHART / "README.md").read_text()
    assert [p for p in params if p != "<path>" and f"`{p}`" not in readme] == []


def test_ci_runs_make_test_without_cilium_as_the_pages_say() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assigned = [line.split("=")[0].split()[-1] for line in ci.splitlines() if "=" in line]
    assert "CILIUM" not in assigned
    assert re.search(r"^make test$", ci, re.MULTILINE)
    said = (ROOT / "README.md").read_text() + (ROOT / "docs" / "kubernetes.md").read_text()
    assert "CI (`.ci/run`) runs\n`make test` without it" in said
    assert "`.ci/run` | CI: `make test`," in said


def test_every_path_named_in_the_pages_exists() -> None:
    named = list(paths_named())
    assert len(named) > 100
    missing = [
        f"{s.path}:{s.line}: {path}"
        for s, path in named
        if not any((base / path).exists() for base in (*PATH_BASES, ROOT / Path(s.path).parent))
    ]
    assert missing == []


def test_every_make_variable_named_in_the_pages_is_read() -> None:
    named = list(make_variables_named())
    assert {"SPEC", "CILIUM"} <= {v for _, v in named}
    scripts = "".join(p.read_text() for p in (ROOT / "scripts").glob("*.sh"))
    # The bench's Python modules read their knobs from the environment make passes on.
    bench = "".join(p.read_text() for p in (ROOT / "scripts" / "bench").glob("*.py"))
    missing = [
        f"{s.path}:{s.line}: {v}"
        for s, v in named
        if not re.search(rf"\$\({v}\)|^{v}\s*\?=|^export {v}$", MAKEFILE, re.MULTILINE)
        and not re.search(rf"\$\{{?{v}\b", scripts)
        and not re.search(rf"environ(\.get\(|\[)\"{v}\"", bench)
    ]
    assert missing == []


def test_the_license_and_the_citation_file_are_there_and_agree() -> None:
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "Apache-2.0"
    assert citation["title"] and citation["authors"] and citation["version"]
    cited = {r["authors"][0]["family-names"] for r in citation["references"]}
    readme = (ROOT / "README.md").read_text()
    assert cited == {"Egli", "Burkhalter", "Pungas", "Meier", "Pavlik"}
    assert all(name in readme for name in cited)
