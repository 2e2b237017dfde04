"""The locust scenarios (loadgen/locust/locustfile.py) run headless against real servers."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_servers import free_port, redis_server_command, start, stop

from cachelab.paths import repo_root

ROOT = repo_root()
LOCUSTFILE = ROOT / "loadgen" / "locust" / "locustfile.py"

pytestmark = pytest.mark.integration


@pytest.fixture
def memcached() -> Iterator[int]:
    if shutil.which("memcached") is None:
        pytest.fail("memcached is not installed (make deps)")
    port = free_port()
    cmd = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "1", "-m", "64"]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    proc = start(cmd, port)
    yield port
    stop(proc)


@pytest.fixture
def redis_server() -> Iterator[int]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (make deps)")
    port = free_port()
    proc = start(redis_server_command(port), port)
    yield port
    stop(proc)


def _run_locust(tmp_path: Path, port: int, users: list[str]) -> dict[str, dict[str, str]]:
    prefix = tmp_path / "locust"
    env = dict(os.environ)
    env.update(
        {
            "CACHELAB_KEY_MAXIMUM": "99",
            "CACHELAB_VALUE_BYTES": "100",
            "CACHELAB_RATIO": "1:3",
            "CACHELAB_PACING_S": "0.05",
        }
    )
    cmd = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"]
    # 10 s: on a machine shared by several builds locust may need seconds before users run
    cmd += ["-u", "4", "-r", "4", "-t", "10s", "--host", f"127.0.0.1:{port}"]
    cmd += ["--csv", str(prefix), "--only-summary", "--loglevel", "WARNING", *users]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    with (tmp_path / "locust_stats.csv").open() as f:
        rows = {f"{row['Type']} {row['Name']}": row for row in csv.DictReader(f)}
    assert len(rows) > 1, f"locust made no requests; its log ends with: {done.stderr[-3000:]}"
    return rows


def _check(rows: dict[str, dict[str, str]], request_type: str) -> None:
    for name in ("set", "get"):
        row = rows[f"{request_type} {name}"]
        assert int(row["Request Count"]) > 0
        assert int(row["Failure Count"]) == 0
        assert float(row["Average Response Time"]) > 0
    total = rows[" Aggregated"]
    sets = int(rows[f"{request_type} set"]["Request Count"])
    gets = int(rows[f"{request_type} get"]["Request Count"])
    assert int(total["Request Count"]) == sets + gets
    # 1:3 cycle per user: about three GETs per SET (4 users may stop mid-cycle)
    assert 3 * sets - 12 <= gets <= 3 * sets + 12


def test_memcached_users_report_every_operation(tmp_path: Path, memcached: int) -> None:
    rows = _run_locust(tmp_path, memcached, ["MemcachedUser", "MemcachedPacedUser"])
    _check(rows, "memcached")


def test_redis_users_report_every_operation(tmp_path: Path, redis_server: int) -> None:
    rows = _run_locust(tmp_path, redis_server, ["RedisUser", "RedisPacedUser"])
    _check(rows, "redis")


COMPONENT = ROOT / "manifests" / "components" / "loadgen-locust"


def test_the_cluster_runs_this_locustfile() -> None:
    # kustomize loads only files beside the component, so it holds a copy; the copy is this file
    copy = COMPONENT / "locustfile.py"
    assert copy.read_bytes() == LOCUSTFILE.read_bytes(), (
        f"{copy} differs from {LOCUSTFILE}: cp {LOCUSTFILE.relative_to(ROOT)} "
        f"{copy.relative_to(ROOT)}"
    )
    assert "locustfile.py" in (COMPONENT / "kustomization.yaml").read_text()


def test_the_cluster_script_sets_the_environment_the_locustfile_reads() -> None:
    script = (COMPONENT / "run-locust.sh").read_text()
    exported = set(re.findall(r"\b(CACHELAB_[A-Z_]+)=", script))
    read = set(re.findall(r"\"(CACHELAB_[A-Z_]+)\"", LOCUSTFILE.read_text()))
    assert exported and exported <= read, sorted(exported - read)
    assert "-f /locust/locustfile.py" in script.replace('"$file"', "/locust/locustfile.py")
    assert script.count("MemcachedUser") == 2  # master and workers pick the same user class
