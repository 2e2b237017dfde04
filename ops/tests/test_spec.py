"""Spec validation: good specs expand into points, bad specs fail with the field named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.paths import repo_root
from cachelab.spec import SCHEMA_PATH, SpecError, json_schema, load_spec, parse_spec

EXPERIMENTS = Path(__file__).parents[1] / "experiments"


def spec_with(**sections: Any) -> dict[str, Any]:
    return {"name": "t", **sections}


BAD_SPECS = [
    ({"name": "Bad Name"}, "name: must match [a-z0-9-]+, got 'Bad Name'"),
    ({}, "name: required field is missing"),
    (spec_with(topology={"workers": 0}), "topology.workers: must be >= 1, got 0"),
    (spec_with(topology={"workers": 2000}), "topology.workers: must be <= 1024, got 2000"),
    (spec_with(topology={"wrkers": 3}), "topology.wrkers: unknown field"),
    (spec_with(colour="red"), "colour: unknown field"),
    (spec_with(topology={"servers": 0}), "topology.servers: must be >= 1, got 0"),
    (spec_with(topology={"middlewares": -1}), "topology.middlewares: must be >= 0, got -1"),
    (
        spec_with(topology={"backend": "mongo"}),
        "topology.backend: must be one of 'memcached' or 'redis', got 'mongo'",
    ),
    (spec_with(topology={"workers": "many"}), "topology.workers: input should be a valid integer"),
    (spec_with(workload={"ratio": "1-2"}), 'workload.ratio: must look like "SET:GET"'),
    (spec_with(workload={"ratio": "0:0"}), "workload.ratio: SET and GET cannot both be 0"),
    (spec_with(workload={"key_pattern": "R"}), 'workload.key_pattern: must be "X:Y"'),
    (spec_with(workload={"value_bytes": 0}), "workload.value_bytes: must be >= 1, got 0"),
    (spec_with(workload={"key_zipf_exp": 0}), "workload.key_zipf_exp: must be > 0, got 0"),
    (spec_with(workload={"key_zipf_exp": 5}), "workload.key_zipf_exp: must be < 5, got 5"),
    (
        spec_with(workload={"key_zipf_exp": "steep"}),
        "workload.key_zipf_exp: input should be a valid number",
    ),
    (spec_with(workload={"routing": "random"}), "workload.routing: must be one of"),
    (spec_with(workload={"think_time_ms": -1}), "workload.think_time_ms: must be >= 0, got -1"),
    (
        spec_with(topology={"backend": "redis"}),
        "workload.protocol: must be 'redis' for backend 'redis', got 'memcache_text'",
    ),
    (
        spec_with(workload={"replication": 2}),
        "workload.replication: must be <= topology.servers (1), got 2",
    ),
    (
        spec_with(workload={"ratio": "1:0", "multi_get": 4}),
        "workload.multi_get: needs GETs in workload.ratio",
    ),
    (
        spec_with(preload={"expected_miss_ratio": 1.5}),
        "preload.expected_miss_ratio: must be <= 1, got 1.5",
    ),
    (
        spec_with(server={"memcached": {"threads": 0}}),
        "server.memcached.threads: must be >= 1, got 0",
    ),
    (
        spec_with(server={"memcached": {"memory_mib": 8}}),
        "server.memcached.memory_mib: must be >= 64, got 8",
    ),
    (
        spec_with(server={"redis": {"persistence": "aof"}}),
        "server.redis.persistence: must be one of 'stock' or 'off', got 'aof'",
    ),
    (
        spec_with(server={"redis": {"maxmemory_policy": "lru"}}),
        "server.redis.maxmemory_policy: must be one of",
    ),
    (
        spec_with(server={"redis": {"maxmemory_mib": -1}}),
        "server.redis.maxmemory_mib: must be >= 0, got -1",
    ),
    (spec_with(server={"mongo": {}}), "server.mongo: unknown field"),
    (
        spec_with(report={"series": "topology.workers"}),
        "report.series: 'topology.workers' is not a swept field (sweep: nothing is swept)",
    ),
    (
        spec_with(
            sweep={"topology.clients_per_thread": [1, 2]}, report={"series": "topology.workers"}
        ),
        "report.series: 'topology.workers' is not a swept field "
        "(sweep: topology.clients_per_thread)",
    ),
    (
        spec_with(report={"x": "total_client"}),
        "report.x: 'total_client' is not a summary.csv column (a sweep axis: none; or one of"
        " total_clients,",
    ),
    (  # a sweep axis is its column under its whole path
        spec_with(sweep={"workload.multi_get": [1, 3]}, report={"x": "multi_get"}),
        "report.x: 'multi_get' is not a summary.csv column (a sweep axis: workload.multi_get;",
    ),
    (
        spec_with(run={"duration_s": 4, "warmup_s": 2, "cooldown_s": 2}),
        "run: warmup_s + cooldown_s must be < duration_s, got 2 + 2 >= 4",
    ),
    (spec_with(run={"repetitions": 0}), "run.repetitions: must be >= 1, got 0"),
    (
        spec_with(topology={"worker_batch": 0}),
        "topology.worker_batch: must be >= 1, got 0",
    ),
    (spec_with(topology={"event_loops": -1}), "topology.event_loops: must be >= 0, got -1"),
    (spec_with(topology={"event_loops": 65}), "topology.event_loops: must be <= 64, got 65"),
    (
        spec_with(topology={"event_loops": "two"}),
        "topology.event_loops: input should be a valid integer",
    ),
    (spec_with(sweep={"topology.nope": [1]}), "sweep.topology.nope: not a field that can be swept"),
    (spec_with(sweep={"name": ["a"]}), "sweep.name: not a field that can be swept"),
    (spec_with(sweep={"topology.workers": []}), "sweep.topology.workers: must be a non-empty list"),
    (spec_with(sweep={"topology.workers": 8}), "sweep.topology.workers: must be a non-empty list"),
    (spec_with(sweep={"topology.workers": [8, 8]}), "sweep.topology.workers: values must be"),
    (spec_with(sweep=[1, 2]), "sweep: must be a mapping"),
    (
        spec_with(sweep={"topology.workers": [8, 0]}),
        "sweep point 1 (topology.workers=0): topology.workers: must be >= 1, got 0",
    ),
    (
        spec_with(
            workload={"routing": "hash", "replication": 2},
            topology={"servers": 2},
            sweep={"topology.servers": [2, 1]},
        ),
        "sweep point 1 (topology.servers=1): workload.replication: must be <= topology.servers",
    ),
    ([1, 2], "top level must be a mapping, got list"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_SPECS)
def test_bad_spec_is_rejected_naming_the_field(raw: Any, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(raw)
    assert message in str(caught.value)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(spec_with(topology={"workers": 0, "servers": 0}))
    assert len(caught.value.problems) == 2


def test_unreadable_and_invalid_yaml_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    with pytest.raises(SpecError) as caught:
        load_spec(broken)
    assert caught.value.problems == [
        "not valid YAML: line 2, column 1: expected ',' or ']', but got '<stream end>'"
    ]


def test_unquoted_ratios_stay_text_not_base_60_numbers(tmp_path: Path) -> None:
    path = tmp_path / "ratio.yaml"
    path.write_text(
        "name: ratio\nworkload:\n  ratio: 1:10\n  key_maximum: 1_000\n"
        "sweep:\n  workload.ratio: [1:10, 0:1, 10:1]\n"
    )
    spec = load_spec(path)
    assert spec.workload.ratio == "1:10"  # YAML 1.1 would read 70
    assert spec.workload.key_maximum == 1000
    assert [p.values["workload.ratio"] for p in spec.points()] == ["1:10", "0:1", "10:1"]
    path.write_text("name: ratio\nrun:\n  duration_s: 1:30\n")  # was 90 s, silently
    with pytest.raises(SpecError, match=r"run\.duration_s: input should be a valid integer"):
        load_spec(path)


def test_report_x_may_be_a_sweep_axis_a_config_column_or_a_metric() -> None:
    swept = spec_with(sweep={"workload.multi_get": [1, 3]}, report={"x": "workload.multi_get"})
    assert parse_spec(swept).report.x == "workload.multi_get"
    assert parse_spec(spec_with(report={"x": "workers"})).report.x == "workers"
    assert parse_spec(spec_with(report={"x": "p99_ms"})).report.x == "p99_ms"


def test_defaults_fill_an_almost_empty_spec() -> None:
    spec = parse_spec({"name": "tiny"})
    assert spec.topology.workers == 8
    assert spec.workload.ratio == "0:1"
    assert [p.index for p in spec.points()] == [0]


def test_sweep_is_the_cartesian_product_in_axis_order() -> None:
    spec = parse_spec(
        spec_with(sweep={"topology.clients_per_thread": [1, 4, 8], "topology.workers": [8, 32]})
    )
    points = spec.points()
    assert len(points) == 6
    assert [(p.spec.topology.clients_per_thread, p.spec.topology.workers) for p in points] == [
        (1, 8), (1, 32), (4, 8), (4, 32), (8, 8), (8, 32),
    ]  # fmt: skip
    assert points[2].values == {"topology.clients_per_thread": 4, "topology.workers": 8}
    assert points[2].spec.sweep == {}
    assert points[2].label() == "p2 (clients_per_thread=4, workers=8)"


def test_sweep_over_workload_and_run_fields() -> None:
    spec = parse_spec(spec_with(sweep={"workload.ratio": ["1:0", "0:1"], "run.duration_s": [5]}))
    assert [p.spec.workload.writes for p in spec.points()] == [True, False]


def test_total_clients_counts_every_connection() -> None:
    spec = parse_spec(
        spec_with(
            topology={
                "client_machines": 3,
                "instances_per_machine": 2,
                "threads": 1,
                "clients_per_thread": 5,
            }
        )
    )
    assert spec.topology.total_clients == 30


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_experiments_are_valid(path: Path) -> None:
    spec = load_spec(path)
    assert spec.name == path.stem


def test_interfaces_example_is_valid() -> None:
    doc = (repo_root() / "docs" / "interfaces.md").read_text()
    section = doc.split("## 3. Experiment spec", 1)[1]
    example = section.split("```yaml", 1)[1].split("```", 1)[0]
    spec = parse_spec(yaml.safe_load(example))
    assert len(spec.points()) == 8


def test_event_loops_default_to_the_asl_net_thread_and_take_a_value_or_a_sweep() -> None:
    assert parse_spec(spec_with()).topology.event_loops == 0
    assert parse_spec(spec_with(topology={"event_loops": 2})).topology.event_loops == 2
    swept = parse_spec(spec_with(sweep={"topology.event_loops": [0, 64]}))
    assert [p.spec.topology.event_loops for p in swept.points()] == [0, 64]


def test_schema_file_is_up_to_date() -> None:
    assert json.loads(SCHEMA_PATH.read_text()) == json.loads(json.dumps(json_schema()))
    assert "topology.workers" in json_schema()["properties"]["sweep"]["propertyNames"]["enum"]
