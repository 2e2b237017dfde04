"""Reads Grafana dashboards: checks their structure, lists their queries, fills in variables.

Used by the dashboard tests and by anyone who wants to evaluate a dashboard's PromQL outside
Grafana (``PanelQuery.render`` substitutes variables the way Grafana does for a Prometheus
data source, for the variable kinds our dashboards use).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# Grafana unit ids our panels may use: seconds, operations/s, bytes, bytes/s, bits/s, ratios.
ALLOWED_UNITS = frozenset({"s", "ops", "bytes", "Bps", "bps", "percentunit", "short"})
BUILTIN_VARIABLES = frozenset({"__rate_interval", "__interval", "__range"})
_VARIABLE = re.compile(r"\$(?:\{(\w+)(?::\w+)?\}|(\w+))")
_LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\s*\)$", re.DOTALL)


def regex_value(value: str) -> str:
    """``value`` as a literal inside a PromQL ``=~"..."`` matcher, escaped like Grafana does:
    regex metacharacters get a backslash, then the string is escaped for PromQL."""
    regex = re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", value)
    return regex.replace("\\", "\\\\").replace('"', '\\"')


class DashboardError(ValueError):
    """A dashboard file is not a valid dashboard of ours; the message names the file and panel."""


@dataclass(frozen=True)
class PanelQuery:
    """One target of one panel. ``repeat`` is the variable the panel's row repeats over;
    ``legend`` the target's legend format (``{{label}}`` placeholders), ``unit`` the panel's."""

    dashboard: str
    panel_id: int
    title: str
    ref_id: str
    expr: str
    repeat: str | None
    legend: str = ""
    unit: str = ""

    def render(self, values: Mapping[str, str], rate_interval: str = "5s") -> str:
        """The expression with ``$var``/``${var}`` replaced by ``values`` (regexes for ``=~``)."""
        builtins = {"__rate_interval": rate_interval, "__interval": rate_interval}

        def replace(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            if name in builtins:
                return builtins[name]
            if name not in values:
                raise DashboardError(f"{self.dashboard} panel {self.title!r}: no value for ${name}")
            return values[name]

        return _VARIABLE.sub(replace, self.expr)


@dataclass(frozen=True)
class Variable:
    """A query variable: ``label_values(selector, label)``, single or multi (with All)."""

    name: str
    selector: str
    label: str
    multi: bool
    default: str | None
    all_value: str | None


class LabelSource(Protocol):
    """What variable resolution needs from Prometheus (``PromClient`` has it)."""

    def label_values(
        self, selector: str, label: str, start: float | None = None, end: float | None = None
    ) -> list[str]: ...


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DashboardError(f"{path.name}: not JSON: {e}") from e
    if not isinstance(data, dict):
        raise DashboardError(f"{path.name}: top level must be an object")
    return data


def load_dir(directory: Path) -> dict[str, dict[str, Any]]:
    """Every ``*.json`` dashboard in ``directory`` by file name."""
    files = sorted(directory.glob("*.json"))
    if not files:
        raise DashboardError(f"{directory}: no dashboards (*.json)")
    return {f.name: load(f) for f in files}


def _walk(panels: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Panels in order with the repeat variable of the row they sit under."""
    repeat: str | None = None
    for panel in panels:
        if panel.get("type") == "row":
            repeat = panel.get("repeat") or None
            yield panel, None
            for inner in panel.get("panels", []):  # a collapsed row keeps its panels inside
                yield inner, repeat
        else:
            yield panel, repeat


def queries(name: str, dashboard: dict[str, Any]) -> list[PanelQuery]:
    """Every target expression of every panel (rows excluded)."""
    found = []
    for panel, repeat in _walk(dashboard.get("panels", [])):
        if panel.get("type") == "row":
            continue
        unit = str(panel.get("fieldConfig", {}).get("defaults", {}).get("unit", ""))
        for target in panel.get("targets", []):
            found.append(
                PanelQuery(
                    name,
                    int(panel.get("id", -1)),
                    str(panel.get("title", "")),
                    str(target.get("refId", "")),
                    str(target.get("expr", "")),
                    repeat,
                    str(target.get("legendFormat", "")),
                    unit,
                )
            )
    return found


def variables(dashboard: dict[str, Any]) -> list[Variable]:
    """The query variables, in the order Grafana resolves them."""
    found = []
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        definition = v.get("definition") or v.get("query")
        if isinstance(definition, dict):
            definition = definition.get("query", "")
        m = _LABEL_VALUES.match(str(definition).strip())
        if m is None:
            raise DashboardError(
                f"variable {v.get('name')}: only label_values(selector, label) is supported, "
                f"got {definition!r}"
            )
        current = v.get("current") or {}
        default = current.get("value") if isinstance(current.get("value"), str) else None
        found.append(
            Variable(
                name=str(v["name"]),
                selector=m["selector"].strip(),
                label=m["label"],
                multi=bool(v.get("multi") or v.get("includeAll")),
                default=default,
                all_value=v.get("allValue"),
            )
        )
    return found


def problems(name: str, dashboard: dict[str, Any]) -> list[str]:
    """Everything wrong with a dashboard, one message per problem (empty when valid)."""
    found: list[str] = []
    for key in ("uid", "title", "panels", "templating", "schemaVersion"):
        if key not in dashboard:
            found.append(f"{name}: missing {key!r}")
    if found:
        return found
    declared = {v.get("name") for v in dashboard["templating"].get("list", [])}
    seen_ids: dict[int, str] = {}
    for panel, _repeat in _walk(dashboard["panels"]):
        title = panel.get("title", "<untitled>")
        where = f"{name} panel {title!r}"
        panel_id = panel.get("id")
        if not isinstance(panel_id, int):
            found.append(f"{where}: id must be an integer, got {panel_id!r}")
        elif panel_id in seen_ids:
            found.append(f"{where}: id {panel_id} already used by {seen_ids[panel_id]!r}")
        else:
            seen_ids[panel_id] = title
        grid = panel.get("gridPos", {})
        if not all(isinstance(grid.get(k), int) for k in ("h", "w", "x", "y")):
            found.append(f"{where}: gridPos needs integer h, w, x, y")
        if panel.get("type") == "row":
            repeat = panel.get("repeat")
            if repeat and repeat not in declared:
                found.append(f"{where}: repeats over undeclared variable ${repeat}")
            continue
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
        if unit not in ALLOWED_UNITS:
            found.append(f"{where}: unit {unit!r} not one of {sorted(ALLOWED_UNITS)}")
        targets = panel.get("targets") or []
        if not targets:
            found.append(f"{where}: no targets")
        for target in targets:
            expr = str(target.get("expr", "")).strip()
            if not expr:
                found.append(f"{where}: target {target.get('refId')!r} has no expr")
            for m in _VARIABLE.finditer(expr):
                var = m.group(1) or m.group(2)
                if var not in declared and var not in BUILTIN_VARIABLES:
                    found.append(f"{where}: uses undeclared variable ${var}")
    try:
        variables(dashboard)
    except DashboardError as e:
        found.append(f"{name}: {e}")
    return found


@dataclass(frozen=True)
class Resolution:
    """Variable values as Grafana would offer them, and the one chosen for each."""

    options: dict[str, list[str]]
    chosen: dict[str, str]


def resolve(
    dashboard: dict[str, Any],
    source: LabelSource,
    start: float | None = None,
    end: float | None = None,
    pinned: Mapping[str, str] | None = None,
) -> Resolution:
    """Resolves the query variables in order, like Grafana on load.

    A single-value variable takes its saved default if Prometheus offers it, else the first
    value; a multi-value variable takes "All" (its ``allValue``). A variable with no values
    keeps an empty option list and the chosen value ``""``, so queries using it match nothing.
    A variable in ``pinned`` takes that value, as a user picking it would (the variables after
    it are resolved with it).
    """
    pinned = pinned or {}
    options: dict[str, list[str]] = {}
    chosen: dict[str, str] = {}
    for var in variables(dashboard):
        probe = PanelQuery("", 0, f"variable {var.name}", "", var.selector, None)
        selector = probe.render(chosen)
        values = source.label_values(selector, var.label, start, end)
        options[var.name] = values
        if var.name in pinned:
            chosen[var.name] = pinned[var.name]
        elif var.multi:
            chosen[var.name] = var.all_value or "|".join(regex_value(v) for v in values)
        elif var.default in values:
            chosen[var.name] = str(var.default)
        else:
            chosen[var.name] = values[0] if values else ""
    return Resolution(options, chosen)


class QuerySource(LabelSource, Protocol):
    """What panel evaluation needs from Prometheus (``PromClient`` has it)."""

    def query_range(
        self, expr: str, start: float, end: float, step_s: float = 1.0
    ) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Evaluation:
    """A panel query as run: the rendered expression and how many series came back."""

    query: PanelQuery
    rendered: str
    series: int

    def describe(self) -> str:
        repeat = f" (row for {self.query.repeat})" if self.query.repeat else ""
        return (
            f"{self.query.dashboard} panel {self.query.title!r}{repeat} target "
            f"{self.query.ref_id}: {self.series} series from {self.rendered}"
        )


def evaluate(
    name: str,
    dashboard: dict[str, Any],
    source: QuerySource,
    start: float,
    end: float,
    rate_interval: str = "5s",
    step_s: float = 1.0,
) -> list[Evaluation]:
    """Runs every panel query over ``[start, end]`` with the variables resolved like Grafana.

    Panels of a repeated row run once per value of the repeated variable (one row per pod);
    the others run with the chosen values ("All" for multi-value variables).
    """
    resolution = resolve(dashboard, source, start, end)
    runs = []
    for q in queries(name, dashboard):
        value_sets = [resolution.chosen]
        if q.repeat:
            value_sets = [
                {**resolution.chosen, q.repeat: regex_value(v)}
                for v in resolution.options.get(q.repeat, [])
            ] or [resolution.chosen]
        for values in value_sets:
            rendered = q.render(values, rate_interval)
            result = source.query_range(rendered, start, end, step_s)
            series = sum(1 for s in result if s.get("values"))
            runs.append(Evaluation(q, rendered, series))
    return runs
