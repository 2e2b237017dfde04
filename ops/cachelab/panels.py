"""A run's dashboard panels as data: every panel of the Grafana dashboards
(``charts/testbed/dashboards``), its own PromQL run as a range query over the run's seconds with
the dashboard's template variables filled in (``cachelab.grafana``: the release's namespace and
name, the run's pools, "All" for the pods, ``$__rate_interval`` as Grafana computes it), and the
series that came back kept in the run's folder so that a report draws them without Prometheus.

Files in ``<run>/panels/``: ``series.csv`` (one row per sample: dashboard, panel, series,
epoch seconds, value) and ``panels.json`` (every panel, with or without data: its title, unit,
rendered queries and series count, and how the queries were made). Panels of a row that Grafana
repeats over a variable (the middleware dashboard's row per pod) are recorded once per value,
titled ``<title> (<variable> <value>)``. Called from the runner's thread.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachelab.grafana import PanelQuery, QuerySource, queries, regex_value, resolve

PANELS_DIR = "panels"
SERIES_CSV = "series.csv"
INDEX_JSON = "panels.json"
SERIES_COLUMNS = ("dashboard", "panel", "title", "series", "epoch_s", "value")
_LEGEND_LABEL = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass(frozen=True)
class Series:
    """One series of a panel: its legend and its samples (epoch seconds, value)."""

    label: str
    epoch_s: list[float]
    values: list[float]


@dataclass(frozen=True)
class Panel:
    """A dashboard panel as recorded: its queries as run and the series they returned."""

    dashboard: str  # the file's stem: cachelab-servers
    key: str  # unique in the run: <dashboard>/<panel id>[/<repeat value>]
    title: str
    unit: str
    queries: list[str]
    series: list[Series] = field(default_factory=list)

    @property
    def has_data(self) -> bool:
        return any(any(math.isfinite(v) for v in s.values) for s in self.series)


@dataclass(frozen=True)
class Recording:
    """Every panel of a run, and how its queries were made (``settings``)."""

    panels: list[Panel]
    settings: dict[str, Any]

    @property
    def with_data(self) -> list[Panel]:
        return [p for p in self.panels if p.has_data]

    @property
    def without_data(self) -> list[Panel]:
        return [p for p in self.panels if not p.has_data]


def legend(legend_format: str, labels: Mapping[str, str]) -> str:
    """Grafana's legend: ``{{label}}`` replaced by the series' label values; without a format,
    the label set as PromQL prints it."""
    if legend_format.strip():
        return _LEGEND_LABEL.sub(lambda m: labels.get(m.group(1), ""), legend_format).strip()
    shown = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return "{" + shown + "}"


def _series(result: list[dict[str, Any]], legend_format: str) -> list[Series]:
    found = []
    for entry in result:
        samples = entry.get("values") or []
        if not samples:
            continue
        found.append(
            Series(
                legend(legend_format, entry.get("metric", {})),
                [float(t) for t, _ in samples],
                [float(v) for _, v in samples],
            )
        )
    return found


def _unique_labels(series: list[Series]) -> list[Series]:
    """The series with a label each of their own (``#2``, ``#3`` after a repeated one)."""
    seen: dict[str, int] = {}
    unique = []
    for s in series:
        seen[s.label] = seen.get(s.label, 0) + 1
        label = s.label if seen[s.label] == 1 else f"{s.label} #{seen[s.label]}"
        unique.append(Series(label, s.epoch_s, s.values))
    return unique


def _panel_instances(
    name: str,
    dashboard: dict[str, Any],
    chosen: Mapping[str, str],
    options: Mapping[str, list[str]],
) -> list[tuple[str, str, dict[str, str], list[PanelQuery]]]:
    """(key, title, variable values, queries) of every panel, a repeated row's once per value."""
    by_panel: dict[int, list[PanelQuery]] = {}
    for q in queries(name, dashboard):
        by_panel.setdefault(q.panel_id, []).append(q)
    stem = name.removesuffix(".json")
    instances = []
    for panel_id, targets in by_panel.items():
        first = targets[0]
        key = f"{stem}/{panel_id}"
        repeat = first.repeat
        if repeat and options.get(repeat):
            for value in options[repeat]:
                values = {**chosen, repeat: regex_value(value)}
                title = f"{first.title} ({repeat} {value})"
                instances.append((f"{key}/{value}", title, values, targets))
        else:
            instances.append((key, first.title, dict(chosen), targets))
    return instances


def record_panels(
    dashboards: Mapping[str, dict[str, Any]],
    source: QuerySource,
    start_s: float,
    end_s: float,
    pinned: Mapping[str, str],
    rate_interval: str,
    step_s: float,
) -> Recording:
    """Every panel of ``dashboards`` (file name -> dashboard) over ``[start_s, end_s]``.

    ``pinned`` sets variables as a user would pick them (namespace, release, pools); the others
    are resolved like Grafana does on load (``grafana.resolve``)."""
    panels = []
    for name, dashboard in dashboards.items():
        resolution = resolve(dashboard, source, start_s, end_s, pinned)
        for key, title, values, targets in _panel_instances(
            name, dashboard, resolution.chosen, resolution.options
        ):
            rendered = [q.render(values, rate_interval) for q in targets]
            series: list[Series] = []
            for q, expr in zip(targets, rendered, strict=True):
                series += _series(source.query_range(expr, start_s, end_s, step_s), q.legend)
            series = _unique_labels(series)
            panels.append(
                Panel(name.removesuffix(".json"), key, title, targets[0].unit, rendered, series)
            )
    settings = {
        "start_epoch_s": start_s,
        "end_epoch_s": end_s,
        "step_s": step_s,
        "rate_interval": rate_interval,
        "variables": dict(pinned),
    }
    return Recording(panels, settings)


def write_recording(folder: Path, recording: Recording) -> Path:
    """``folder/panels/{series.csv,panels.json}``; returns the ``panels`` folder."""
    out = folder / PANELS_DIR
    out.mkdir(parents=True, exist_ok=True)
    with (out / SERIES_CSV).open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(SERIES_COLUMNS)
        for panel in recording.panels:
            for s in panel.series:
                for t, v in zip(s.epoch_s, s.values, strict=True):
                    writer.writerow((panel.dashboard, panel.key, panel.title, s.label, t, v))
    index = {
        **recording.settings,
        "panels": [
            {
                "dashboard": p.dashboard,
                "key": p.key,
                "title": p.title,
                "unit": p.unit,
                "queries": p.queries,
                "series": len(p.series),
                "has_data": p.has_data,
            }
            for p in recording.panels
        ],
    }
    (out / INDEX_JSON).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    return out


def read_recording(folder: Path) -> Recording | None:
    """The panels a run recorded (``folder/panels``), or None when it recorded none."""
    out = folder / PANELS_DIR
    index_file = out / INDEX_JSON
    if not index_file.is_file():
        return None
    index = json.loads(index_file.read_text(encoding="utf-8"))
    samples: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    order: dict[str, list[str]] = {}
    series_file = out / SERIES_CSV
    if series_file.is_file():
        with series_file.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                times, values = samples.setdefault((row["panel"], row["series"]), ([], []))
                if not times:
                    order.setdefault(row["panel"], []).append(row["series"])
                times.append(float(row["epoch_s"]))
                values.append(float(row["value"]))
    panels = [
        Panel(
            p["dashboard"],
            p["key"],
            p["title"],
            p["unit"],
            list(p["queries"]),
            [Series(label, *samples[(p["key"], label)]) for label in order.get(p["key"], [])],
        )
        for p in index["panels"]
    ]
    settings = {k: v for k, v in index.items() if k != "panels"}
    return Recording(panels, settings)


def panel_titles(panels: Sequence[Panel]) -> list[str]:
    """``<dashboard> / <title>`` of each panel, for listing those without data."""
    return [f"{p.dashboard} / {p.title}" for p in panels]
