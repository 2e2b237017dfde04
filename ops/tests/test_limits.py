"""Limits that the spec, the chart's values schema and the Java programs each enforce are the
same numbers: a change to one of them fails here until the others follow."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from cachelab.paths import repo_root
from cachelab.spec import json_schema

ROOT = repo_root()
MIDDLEWARE_CONFIG = (
    ROOT / "middleware/src/main/java/dev/cachelab/middleware/config/MiddlewareConfig.java"
)
LOADGEN_COMMAND = ROOT / "loadgen/src/main/java/dev/cachelab/loadgen/config/LoadgenCommand.java"
CHART_SCHEMA = ROOT / "charts/testbed/values.schema.json"

Bounds = tuple[float | None, float | None]


def _java_constants(source: str) -> dict[str, str]:
    return dict(re.findall(r"static final (?:int|long|double) (\w+) = ([^;]+);", source))


def _java_number(expression: str, constants: dict[str, str]) -> float | None:
    """A constant expression (digits, <<, *, +, named constants) as a number; None otherwise."""
    text = expression.strip()
    for name, value in constants.items():
        text = re.sub(rf"\b{name}\b", f"({value})", text)
    if not re.fullmatch(r"[\d_ ().<*+-]+", text):
        return None
    return float(eval(text.replace("_", "")))


def middleware_checks() -> dict[str, Bounds]:
    """Every `check("<flag>", value, min, max[, unit])` of MiddlewareConfig, by flag (a bound
    that depends on another value, such as the server count, is None)."""
    source = MIDDLEWARE_CONFIG.read_text()
    constants = _java_constants(source)
    found: dict[str, Bounds] = {}
    for flag, rest in re.findall(r'^\s+check\("([^"]+)",\s*(.*?)\);$', source, re.MULTILINE):
        args = re.split(r",\s*(?![^()]*\))", rest)
        found[flag] = (_java_number(args[1], constants), _java_number(args[2], constants))
    return found


def spec_bounds(model: str, field: str) -> Bounds:
    node = json_schema()["$defs"][model]["properties"][field]
    return (
        node.get("minimum", node.get("exclusiveMinimum")),
        node.get("maximum", node.get("exclusiveMaximum")),
    )


def chart_bounds(section: str, key: str) -> Bounds:
    schema: Any = json.loads(CHART_SCHEMA.read_text())
    node = schema["properties"][section]["properties"][key]
    return node.get("minimum"), node.get("maximum")


MW = middleware_checks()
MAX_SERVERS = _java_number("MAX_SERVERS", _java_constants(MIDDLEWARE_CONFIG.read_text()))

# (what, [bounds as each place states them])
SHARED: list[tuple[str, list[Bounds]]] = [
    (
        "middleware workers",
        [spec_bounds("Topology", "workers"), chart_bounds("middleware", "workers"), MW["-t"]],
    ),
    (
        "worker batch",
        [
            spec_bounds("Topology", "worker_batch"),
            chart_bounds("middleware", "workerBatch"),
            MW["--worker-batch"],
        ],
    ),
    (
        "event loops",
        [
            spec_bounds("Topology", "event_loops"),
            chart_bounds("middleware", "eventLoops"),
            MW["--event-loops"],
        ],
    ),
    (
        "servers",
        [
            spec_bounds("Topology", "servers"),
            chart_bounds("memcached", "replicas"),
            chart_bounds("redis", "replicas"),
            MW["-m"],
        ],
    ),
    (
        # the middleware bounds it by the servers it has, at most MAX_SERVERS
        "replication",
        [
            spec_bounds("Workload", "replication"),
            chart_bounds("middleware", "replication"),
            (1, MAX_SERVERS),
        ],
    ),
    (
        "backend max waiters",
        [chart_bounds("middleware", "backendMaxWaiters"), MW["--backend-max-waiters"]],
    ),
    (
        "eject after failures",
        [chart_bounds("middleware", "ejectAfterFailures"), MW["--eject-after-failures"]],
    ),
    ("eject retry", [chart_bounds("middleware", "ejectRetryMs"), MW["--eject-retry-ms"]]),
    ("idle timeout", [chart_bounds("middleware", "idleTimeoutS"), MW["--idle-timeout-s"]]),
    ("statistics window", [chart_bounds("middleware", "windowMs"), MW["--window-ms"]]),
    ("queue capacity", [chart_bounds("middleware", "queueCapacity"), MW["--queue-capacity"]]),
    (
        "backend timeout",
        [chart_bounds("middleware", "backendTimeoutMs"), MW["--backend-timeout-ms"]],
    ),
    (
        "memcached threads",
        [spec_bounds("MemcachedSettings", "threads"), chart_bounds("memcached", "threads")],
    ),
    (
        "memcached memory",
        [spec_bounds("MemcachedSettings", "memory_mib"), chart_bounds("memcached", "memoryMiB")],
    ),
    (
        "redis maxmemory",
        [spec_bounds("RedisSettings", "maxmemory_mib"), chart_bounds("redis", "maxmemoryMiB")],
    ),
]


@pytest.mark.parametrize(("what", "places"), SHARED, ids=[s[0] for s in SHARED])
def test_a_shared_limit_is_the_same_everywhere(what: str, places: list[Bounds]) -> None:
    assert all(p == places[0] for p in places), f"{what}: {places}"


def test_the_middleware_count_has_the_charts_maximum() -> None:
    # the spec's 0 means no middleware (no Deployment), so only the maxima must agree
    assert spec_bounds("Topology", "middlewares")[1] == chart_bounds("middleware", "replicas")[1]


def test_the_zipf_exponent_range_is_the_loadgens() -> None:
    high = _java_number("MAX_ZIPF_EXPONENT", _java_constants(LOADGEN_COMMAND.read_text()))
    schema = json_schema()["$defs"]["Workload"]["properties"]["key_zipf_exp"]
    assert (schema["exclusiveMinimum"], schema["exclusiveMaximum"]) == (0, high)


def test_the_reader_finds_every_check_of_the_middleware() -> None:
    # a check the pattern missed would leave a limit untested
    calls = MIDDLEWARE_CONFIG.read_text().count(' check("')
    assert len(MW) == calls
    assert MW["-t"] == (1, 1024)
    assert MW["--replication"] == (1, None)  # up to the servers given
