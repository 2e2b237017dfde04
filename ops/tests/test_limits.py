"""Limits that the spec, the chart and the Java programs each enforce are the same numbers. The
programs' ranges are exported from their picocli models (`schemas/*-options.json`); the spec reads
them from there, and the chart's values schema, its value comments and README rows are compared
with them here."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

import pytest

from cachelab import program_options as options
from cachelab.paths import repo_root
from cachelab.spec import json_schema

ROOT = repo_root()
CHART = ROOT / "charts/testbed"
MW = options.middleware()

# (min, max, 0 also accepted)
Bounds = tuple[float | None, float | None, bool]

# Chart values with a narrower range than their flag, and why.
NARROWER = {
    "metricsPort": "the chart always serves /metrics (0, off, is not a chart value)",
}


def chart_flags() -> dict[str, str]:
    """Each middleware value and the flag the chart gives it to, as the template passes it: an
    argument `- --flag` followed by `- {{ $mw.key ... }}`, or a `flag={{ $mw.key }}` line of the
    servers file."""
    lines = [line.strip() for line in (CHART / "templates/middleware-deployment.yaml").open()]
    found: dict[str, str] = {}
    for flag_line, value_line in pairwise(lines):
        flag = re.fullmatch(r"- (-[-\w]+)", flag_line)
        value = re.fullmatch(r"- \{\{ \$mw\.(\w+)\b.*\}\}", value_line)
        if flag and value:
            found[value.group(1)] = flag.group(1)
    for line in lines:
        setting = re.fullmatch(r"([a-z-]+)=\{\{ \$mw\.(\w+) \}\}", line)
        if setting:
            found[setting.group(2)] = f"--{setting.group(1)}"
    return found


CHART_FLAGS = {key: flag for key, flag in chart_flags().items() if MW[flag].min is not None}


def option_bounds(flag: str) -> Bounds:
    option = MW[flag]
    return option.min, option.max, option.or_zero


def chart_bounds(section: str, key: str) -> Bounds:
    schema: Any = json.loads((CHART / "values.schema.json").read_text())
    node = schema["properties"][section]["properties"][key]
    if "anyOf" in node:
        (zero, low) = node["anyOf"]
        assert zero == {"const": 0}
        return low.get("minimum"), low.get("maximum"), True
    return node.get("minimum"), node.get("maximum"), False


def spec_bounds(model: str, field: str) -> Bounds:
    node = json_schema()["$defs"][model]["properties"][field]
    return (
        node.get("minimum", node.get("exclusiveMinimum")),
        node.get("maximum", node.get("exclusiveMaximum")),
        False,
    )


def test_the_chart_passes_every_bounded_value_to_its_flag() -> None:
    # a template the reader no longer understands would leave the chart's limits untested
    assert CHART_FLAGS.get("workers") == "-t"
    assert CHART_FLAGS.get("backendTimeoutMs") == "--backend-timeout-ms"
    assert len(CHART_FLAGS) >= 12


@pytest.mark.parametrize(("key", "flag"), sorted(CHART_FLAGS.items()))
def test_a_chart_value_has_its_flags_range(key: str, flag: str) -> None:
    low, high, zero = chart_bounds("middleware", key)
    want_low, want_high, want_zero = option_bounds(flag)
    if key in NARROWER:
        assert want_low is not None and low is not None and low >= want_low
        assert want_high is not None and high is not None and high <= want_high
    else:
        assert (low, high, zero) == (want_low, want_high, want_zero), (
            f"charts/testbed/values.schema.json middleware.{key}: {flag} accepts "
            f"{MW[flag].range_text}"
        )


def _stated_ranges(text: str) -> list[str]:
    return re.findall(r"\b\d+\.\.\w+|0 or >= \d+|>= \d+", text)


@pytest.mark.parametrize(("key", "flag"), sorted(CHART_FLAGS.items()))
def test_a_chart_values_comment_and_readme_row_state_its_flags_range(key: str, flag: str) -> None:
    option = MW[flag]
    docs = [
        line
        for path in ("values.yaml", "README.md")
        for line in (CHART / path).read_text().splitlines()
        if f"@param middleware.{key} " in line or f"| `middleware.{key}` |" in line
    ]
    assert len(docs) == 2
    for line in docs:
        for stated in _stated_ranges(line):
            assert stated in (option.range_text, f">= {option.min}"), (
                f"middleware.{key}: {line!r} states {stated}, {flag} accepts {option.range_text}"
            )


@pytest.mark.parametrize("section", ["memcached", "redis"])
def test_the_chart_runs_as_many_servers_as_the_middleware_takes(section: str) -> None:
    assert chart_bounds(section, "replicas") == option_bounds("-m")


SPEC_FLAGS = [
    ("Topology", "workers", "-t"),
    ("Topology", "worker_batch", "--worker-batch"),
    ("Topology", "event_loops", "--event-loops"),
    ("Topology", "servers", "-m"),
    ("Workload", "replication", "--replication"),
]


@pytest.mark.parametrize(("model", "field", "flag"), SPEC_FLAGS)
def test_a_spec_field_has_its_flags_range(model: str, field: str, flag: str) -> None:
    assert spec_bounds(model, field) == option_bounds(flag)


# Limits of the servers' own settings: the spec and the chart state them (no Java program).
SERVER_SETTINGS = [
    ("MemcachedSettings", "threads", "memcached", "threads"),
    ("MemcachedSettings", "memory_mib", "memcached", "memoryMiB"),
    ("RedisSettings", "maxmemory_mib", "redis", "maxmemoryMiB"),
]


@pytest.mark.parametrize(("model", "field", "section", "key"), SERVER_SETTINGS)
def test_a_server_setting_has_the_same_range_in_spec_and_chart(
    model: str, field: str, section: str, key: str
) -> None:
    assert spec_bounds(model, field) == chart_bounds(section, key)


def test_the_middleware_count_has_the_charts_maximum() -> None:
    # the spec's 0 means no middleware (no Deployment), so only the maxima must agree
    assert spec_bounds("Topology", "middlewares")[1] == chart_bounds("middleware", "replicas")[1]


def test_the_zipf_exponent_range_is_the_loadgens() -> None:
    option = options.loadgen()["--key-zipf-exp"]
    assert option.exclusive
    schema = json_schema()["$defs"]["Workload"]["properties"]["key_zipf_exp"]
    assert (schema["exclusiveMinimum"], schema["exclusiveMaximum"]) == (option.min, option.max)
