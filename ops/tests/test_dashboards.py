"""The Grafana dashboards: generated files up to date, valid structure, PromQL that parses."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab import dashboards, grafana
from cachelab.paths import repo_root

ROOT = repo_root()
DASHBOARD_DIR = ROOT / "charts" / "testbed" / "dashboards"
PROMTOOL = "/usr/bin/promtool"


@pytest.fixture(scope="module")
def loaded() -> dict[str, dict[str, Any]]:
    return grafana.load_dir(DASHBOARD_DIR)


def test_the_three_dashboards_are_committed_as_generated() -> None:
    assert sorted(p.name for p in DASHBOARD_DIR.glob("*.json")) == sorted(dashboards.DASHBOARDS)
    for name in dashboards.DASHBOARDS:
        committed = (DASHBOARD_DIR / name).read_text(encoding="utf-8")
        assert committed == dashboards.render(name), f"{name} is stale: run `make dashboards`"


def test_dashboards_are_valid(loaded: dict[str, dict[str, Any]]) -> None:
    for name, dash in loaded.items():
        assert grafana.problems(name, dash) == []


def test_every_panel_has_queries_and_ids_are_unique(loaded: dict[str, dict[str, Any]]) -> None:
    for name, dash in loaded.items():
        ids = [p["id"] for p, _ in grafana._walk(dash["panels"])]
        assert len(ids) == len(set(ids)), name
        panels = [p for p in dash["panels"] if p["type"] != "row"]
        assert len(panels) >= 6, name
        for panel in panels:
            assert panel["targets"], panel["title"]
            assert all(t["expr"].strip() for t in panel["targets"]), panel["title"]


def test_dashboards_have_namespace_release_and_pod_variables(
    loaded: dict[str, dict[str, Any]],
) -> None:
    for name, dash in loaded.items():
        names = [v.name for v in grafana.variables(dash)]
        assert names[:3] == ["namespace", "release", "pod"], name
        pod = next(v for v in grafana.variables(dash) if v.name == "pod")
        assert pod.multi and pod.all_value == ".*", name


def test_middleware_dashboard_has_an_aggregate_row_and_a_row_per_pod(
    loaded: dict[str, dict[str, Any]],
) -> None:
    rows = [p for p in loaded["cachelab-middleware.json"]["panels"] if p["type"] == "row"]
    assert [r.get("repeat") for r in rows] == [None, "pod"]
    titles = {q.title for q in grafana.queries("mw", loaded["cachelab-middleware.json"])}
    for wanted in (
        "Throughput by operation",
        "Response time percentiles",
        "Queue time percentiles",
        "Service time percentiles",
        "Queue length",
        "Worker busy fraction",
        "Request share per server",
        "Cache miss ratio",
        "Errors by kind",
    ):
        assert wanted in titles


def test_units_are_grafana_units(loaded: dict[str, dict[str, Any]]) -> None:
    units = {
        p["fieldConfig"]["defaults"]["unit"]
        for dash in loaded.values()
        for p in dash["panels"]
        if p["type"] != "row"
    }
    assert {"s", "ops", "bytes"} <= units <= grafana.ALLOWED_UNITS


@pytest.mark.integration  # runs promtool
def test_every_expression_parses_with_promtool(
    loaded: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    values = {
        "namespace": "ns",
        "release": "rel",
        "pod": ".*",
        "pool": ".*",
        "client_pool": "a2",
        "middleware_pool": "a4",
        "server_pool": "a1",
    }
    rules = []
    for name, dash in loaded.items():
        for i, q in enumerate(grafana.queries(name, dash)):
            rules.append({"record": f"cachelab:check_{len(rules)}_{i}", "expr": q.render(values)})
    path = tmp_path / "rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    result = subprocess.run(
        [PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules)} rules found" in result.stdout


def _broken(loaded: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(loaded["cachelab-servers.json"])


def test_problems_names_a_duplicate_id(loaded: dict[str, dict[str, Any]]) -> None:
    dash = _broken(loaded)
    dash["panels"][2]["id"] = dash["panels"][1]["id"]
    (message,) = grafana.problems("x.json", dash)
    title = dash["panels"][2]["title"]
    assert f"x.json panel {title!r}: id {dash['panels'][1]['id']} already used" in message


def test_problems_names_a_panel_without_expr(loaded: dict[str, dict[str, Any]]) -> None:
    dash = _broken(loaded)
    dash["panels"][1]["targets"][0]["expr"] = " "
    (message,) = grafana.problems("x.json", dash)
    assert f"panel {dash['panels'][1]['title']!r}: target 'A' has no expr" in message


def test_problems_names_a_panel_without_targets_and_a_bad_unit(
    loaded: dict[str, dict[str, Any]],
) -> None:
    dash = _broken(loaded)
    dash["panels"][1]["targets"] = []
    dash["panels"][2]["fieldConfig"]["defaults"]["unit"] = "furlongs"
    messages = grafana.problems("x.json", dash)
    assert any(m.endswith(": no targets") for m in messages)
    assert any("unit 'furlongs' not one of" in m for m in messages)


def test_problems_names_an_undeclared_variable(loaded: dict[str, dict[str, Any]]) -> None:
    dash = _broken(loaded)
    dash["panels"][1]["targets"][0]["expr"] = 'up{job="$nope"}'
    (message,) = grafana.problems("x.json", dash)
    assert "uses undeclared variable $nope" in message


def test_load_rejects_a_file_that_is_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(grafana.DashboardError, match=r"bad.json: not JSON"):
        grafana.load(bad)


def test_render_substitutes_variables_and_rate_interval() -> None:
    q = grafana.PanelQuery(
        "d", 1, "t", "A", 'rate(x{pod=~"$pod", ns="${namespace}"}[$__rate_interval])', None
    )
    assert q.render({"pod": "a|b", "namespace": "n"}, "4s") == 'rate(x{pod=~"a|b", ns="n"}[4s])'
    with pytest.raises(grafana.DashboardError, match=r"no value for \$pod"):
        q.render({"namespace": "n"})


def test_regex_value_escapes_a_label_value_for_a_promql_regex_matcher() -> None:
    assert grafana.regex_value("middleware-0") == "middleware-0"
    assert grafana.regex_value("a.b|c") == r"a\\.b\\|c"
    assert grafana.regex_value('a\\b"') == r"a\\\\b\""
