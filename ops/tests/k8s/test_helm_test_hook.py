"""The chart's `helm test` hook (templates/tests/test-roundtrip.yaml) run for real: its rendered
shell script, with the Service name swapped for a loopback port, against the middleware jar in
front of a real memcached or (`middleware.backend: redis`) a real redis-server, and against a real
redis-server for a redis-only release. kwok only
marks the hook pod Succeeded, so this is where the round trip itself is checked."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from cachelab.local.tools import find_java

from .test_job_scripts import free_port, memcached_port  # noqa: F401  (fixture)
from .tools import CHART, ROOT, run, tool

pytestmark = [pytest.mark.integration, pytest.mark.k8s]  # needs helm (make k8s-tools)


def hook_script(*values: Path) -> tuple[str, str, int]:
    """(script, host, port) of the rendered hook pod."""
    files = [a for v in values for a in ("-f", str(v))]
    out = run(
        [tool("helm"), "template", "testbed", CHART, *files,
         "--show-only", "templates/tests/test-roundtrip.yaml"]
    ).stdout  # fmt: skip
    pod = yaml.safe_load(out)
    script = pod["spec"]["containers"][0]["args"][0]
    target = script.rsplit("round trip through ", 1)[1].split('"')[0]
    host, port = target.rsplit(":", 1)
    return script, host, int(port)


def run_hook(script: str, host: str, port: int, real_port: int) -> subprocess.CompletedProcess[str]:
    local = script.replace(f"{host} {port}", f"127.0.0.1 {real_port}")
    assert local != script, "the script no longer names its target as '<host> <port>'"
    return subprocess.run(["sh", "-c", local], capture_output=True, text=True, timeout=60)


def wait_listening(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 30
    while subprocess.run(["nc", "-z", "127.0.0.1", str(port)]).returncode != 0:
        assert proc.poll() is None, f"{what} exited at start"
        assert time.monotonic() < deadline, f"{what} not listening on {port}"
        time.sleep(0.2)


@contextmanager
def running_middleware(server_port: int, protocol: str) -> Iterator[int]:
    """The middleware jar on a free port in front of one server; yields its port."""
    jar = ROOT / "middleware" / "target" / "middleware.jar"
    assert jar.is_file(), f"{jar} is missing: run `make build`"
    port = free_port()
    argv = [find_java(ROOT), "-jar", str(jar), "-l", "127.0.0.1", "-p", str(port), "-t", "2"]
    argv += ["-s", "false", "--protocol", protocol, "-m", f"127.0.0.1:{server_port}"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc, "middleware")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture
def middleware_port(memcached_port: int) -> Iterator[int]:  # noqa: F811
    with running_middleware(memcached_port, "memcached") as port:
        yield port


@pytest.fixture
def redis_port(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    argv += ["--appendonly", "no", "--dir", str(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc, "redis-server")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_hook_round_trips_through_the_middleware(middleware_port: int) -> None:
    script, host, port = hook_script()
    assert (host, port) == ("testbed-middleware", 11212)
    done = run_hook(script, host, port, middleware_port)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: set/get round trip" in done.stdout


@pytest.fixture
def redis_middleware_port(redis_port: int) -> Iterator[int]:
    """The middleware jar speaking RESP2 (`--protocol redis`) in front of a real redis-server."""
    with running_middleware(redis_port, "redis") as port:
        yield port


def test_hook_round_trips_through_the_middleware_in_front_of_redis(
    redis_middleware_port: int,
) -> None:
    script, host, port = hook_script(CHART / "ci" / "06-redis-middleware-values.yaml")
    assert (host, port) == ("testbed-middleware", 11212)
    done = run_hook(script, host, port, redis_middleware_port)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: set/get round trip" in done.stdout


def test_hook_round_trips_to_redis_without_a_middleware(redis_port: int) -> None:
    script, host, port = hook_script(CHART / "ci" / "02-redis-values.yaml")
    assert (host, port) == ("testbed-redis-0.testbed-redis", 6379)
    done = run_hook(script, host, port, redis_port)
    assert done.returncode == 0, done.stdout + done.stderr


def test_hook_fails_when_the_value_does_not_come_back(memcached_port: int) -> None:  # noqa: F811
    # The redis variant of the hook against memcached: no "+OK", so the hook must fail.
    script, host, port = hook_script(CHART / "ci" / "02-redis-values.yaml")
    done = run_hook(script, host, port, memcached_port)
    assert done.returncode == 1
    assert "FAIL: set did not answer +OK" in done.stdout
