"""The dashboards' panels of a run (cachelab.panels) from a recorded Prometheus answer, kept as
files and drawn in the report's cluster metrics section."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cachelab import grafana
from cachelab.panels import legend, read_recording, record_panels, write_recording
from cachelab.paths import repo_root
from cachelab.report.figures.plan import draw, panel_plans
from cachelab.report.sections.panels import panels_section

DATA = Path(__file__).parent / "data" / "prometheus-servers-panels.json"
DASHBOARDS = repo_root() / "charts" / "testbed" / "dashboards"
PINNED = {"namespace": "ns1", "release": "rel1"}
MEMCACHED_ROW = [
    "memcached ops/s by command",
    "memcached get hit ratio",
    "memcached connections",
    "memcached evictions",
    "memcached memory",
    "memcached network bytes in/out",
]


class RecordedPrometheus:
    """Replays the recorded answers; a query it has no answer for fails with the query."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def label_values(
        self, selector: str, label: str, start: float | None = None, end: float | None = None
    ) -> list[str]:
        values: list[str] = self.answers["label_values"][f"{selector}|{label}"]
        return values

    def query_range(
        self, expr: str, start: float, end: float, step_s: float = 1.0
    ) -> list[dict[str, Any]]:
        if expr not in self.answers["query_range"]:
            raise AssertionError(f"no recorded answer for {expr}")
        result: list[dict[str, Any]] = self.answers["query_range"][expr]
        return result


@pytest.fixture(scope="module")
def answers() -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads(DATA.read_text())
    return recorded


def _record(answers: dict[str, Any]) -> Any:
    servers = grafana.load(DASHBOARDS / "cachelab-servers.json")
    return record_panels(
        {"cachelab-servers.json": servers},
        RecordedPrometheus(answers),
        answers["start"],
        answers["end"],
        PINNED,
        "4s",
        2.0,
    )


def test_every_memcached_panel_has_data_and_every_redis_panel_is_listed_without(
    answers: dict[str, Any],
) -> None:
    recording = _record(answers)
    assert [p.title for p in recording.with_data] == MEMCACHED_ROW
    assert [p.title for p in recording.without_data] == [
        "redis ops/s",
        "redis keyspace hit ratio",
        "redis connections",
        "redis evictions",
        "redis memory",
        "redis network bytes in/out",
    ]
    by_title = {p.title: p for p in recording.panels}
    # the queries as run: variables pinned or resolved, $__rate_interval filled in
    (hit_ratio,) = by_title["memcached get hit ratio"].queries
    assert 'namespace=~"ns1", release=~"rel1", pod=~".*"' in hit_ratio
    assert "[4s]" in hit_ratio and "$" not in hit_ratio
    # the legends as Grafana shows them; half of the gets missed
    memory = by_title["memcached memory"]
    assert [s.label for s in memory.series] == ["memcached-0 used", "memcached-0 limit"]
    ratio = by_title["memcached get hit ratio"].series[0].values
    assert ratio and all(abs(v - 0.5) < 0.01 for v in ratio), ratio
    commands = {s.label for s in by_title["memcached ops/s by command"].series}
    assert {"memcached-0 get", "memcached-0 set"} <= commands


def test_a_recording_survives_its_files(answers: dict[str, Any], tmp_path: Path) -> None:
    recording = _record(answers)
    folder = write_recording(tmp_path, recording)
    assert sorted(p.name for p in folder.iterdir()) == ["panels.json", "series.csv"]
    again = read_recording(tmp_path)
    assert again is not None
    assert again.panels == recording.panels
    assert again.settings["variables"] == PINNED
    assert read_recording(tmp_path / "elsewhere") is None


def test_the_report_draws_the_panels_with_data_and_names_those_without(
    answers: dict[str, Any], tmp_path: Path
) -> None:
    write_recording(tmp_path / "raw" / "p0-r0", _record(answers))
    section = panels_section(tmp_path)
    assert section is not None
    assert section.figures == ["panels-p0-r0-cachelab-servers.png"]
    (row,) = section.rows
    assert row["panels"] == 12 and row["with data"] == 6
    assert row["without data"].startswith("redis ops/s; redis keyspace hit ratio")
    figures = draw(panel_plans(section), tmp_path)
    assert figures.files == {"panels-p0-r0-cachelab-servers": "panels-p0-r0-cachelab-servers.png"}
    assert (tmp_path / "panels-p0-r0-cachelab-servers.png").stat().st_size > 10_000
    assert panels_section(tmp_path / "none") is None


def test_legend_fills_labels_like_grafana() -> None:
    assert legend("{{pod}} {{ type }}", {"pod": "m-0", "type": "get"}) == "m-0 get"
    assert legend("{{missing}} in", {"pod": "m-0"}) == "in"
    assert legend("", {"__name__": "up", "pod": "m-0", "job": "x"}) == '{job="x", pod="m-0"}'
