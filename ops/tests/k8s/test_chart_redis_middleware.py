"""Tier 4 (no cluster needed): the chart rendered with `middleware.backend: redis`
(ci/06-redis-middleware-values.yaml). The middleware must speak RESP2 (`--protocol redis`) to the
redis StatefulSet's pods on the redis port, the servers' policy must let it in on that port, and the
helm test hook must talk redis to the middleware. The round trip itself runs in
test_helm_test_hook.py against the real jar and redis-server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.k8s import plan
from cachelab.spec import load_spec

from .tools import CHART, ROOT, run, tool

pytestmark = pytest.mark.k8s

VALUES = CHART / "ci" / "06-redis-middleware-values.yaml"
EXPERIMENTS = ROOT / "ops" / "experiments"


def _render(*args: str) -> list[dict[str, Any]]:
    out = run([tool("helm"), "template", "testbed", CHART, *args]).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def _one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (doc,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def _middleware_args(docs: list[dict[str, Any]]) -> list[str]:
    deployment = _one(docs, "Deployment", "testbed-middleware")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return [str(a) for a in container["args"]]


def _servers(docs: list[dict[str, Any]]) -> list[str]:
    """The servers the middleware reads from its mounted servers file (the ConfigMap)."""
    args = _middleware_args(docs)
    assert args[args.index("--servers-file") + 1] == "/etc/cachelab/servers"
    config_map = _one(docs, "ConfigMap", "testbed-middleware-servers")
    return [line for line in config_map["data"]["servers"].splitlines() if line and "=" not in line]


def test_the_timeouts_are_in_the_servers_file_so_a_change_needs_no_restart() -> None:
    """backendTimeoutMs and ejectRetryMs reach the middleware as lines of its mounted servers
    file, which it re-reads when the file changes, not as flags (a changed flag is a rollout)."""
    docs = _render(
        "--set", "middleware.backendTimeoutMs=250", "--set", "middleware.ejectRetryMs=900"
    )
    args = _middleware_args(docs)
    assert "--backend-timeout-ms" not in args and "--eject-retry-ms" not in args, args
    config_map = _one(docs, "ConfigMap", "testbed-middleware-servers")
    lines = config_map["data"]["servers"].splitlines()
    assert "backend-timeout-ms=250" in lines and "eject-retry-ms=900" in lines, lines
    assert _servers(docs) and all(":" in s for s in _servers(docs))


def test_redis_backend_makes_the_middleware_speak_resp_to_the_redis_pods() -> None:
    docs = _render("-f", str(VALUES))
    args = _middleware_args(docs)
    assert args[args.index("--protocol") + 1] == "redis"
    assert args[args.index("-s") + 1] == "true"
    assert _servers(docs) == [
        f"testbed-redis-{i}.testbed-redis.default.svc.cluster.local:6379" for i in range(3)
    ]
    assert not [d for d in docs if d["kind"] == "StatefulSet" and "memcached" in str(d)]


def test_memcached_backend_keeps_the_text_protocol() -> None:
    docs = _render()
    args = _middleware_args(docs)
    assert args[args.index("--protocol") + 1] == "memcached"
    servers = _servers(docs)
    assert servers and all(s.endswith(":11211") for s in servers)


def test_servers_policy_admits_the_middleware_on_the_redis_port() -> None:
    policy = _one(_render("-f", str(VALUES)), "NetworkPolicy", "testbed-servers")
    from_middleware = [
        rule
        for rule in policy["spec"]["ingress"]
        if any(
            p.get("podSelector", {}).get("matchLabels", {}).get("cachelab.dev/role") == "middleware"
            for p in rule["from"]
        )
    ]
    assert [p["port"] for p in from_middleware[0]["ports"]] == [6379]


def test_helm_test_hook_talks_redis_to_the_middleware() -> None:
    docs = _render("-f", str(VALUES), "--show-only", "templates/tests/test-roundtrip.yaml")
    script = docs[0]["spec"]["containers"][0]["args"][0]
    assert "SET helm-test" in script and "GET helm-test" in script
    assert "testbed-middleware 11212" in script


def test_the_k8s_plan_of_the_redis_spec_renders_a_resp_middleware(tmp_path: Path) -> None:
    spec = load_spec(EXPERIMENTS / "beyond-mvr-mw-redis.yaml").points()[0].spec
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(plan.release_values(spec, plan.Target())))
    docs = _render("-f", str(values))
    args = _middleware_args(docs)
    assert args[args.index("--protocol") + 1] == "redis"
    servers = _servers(docs)
    assert servers and all(s.endswith(":6379") for s in servers)
