"""Server settings of a spec (`server.memcached`, `server.redis`): the local runner's command lines,
the chart values of the Kubernetes plan, the seed specs that use them, and real servers started
with them."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from cachelab.k8s import plan
from cachelab.local.servers import server_argv, start_servers
from cachelab.processes import ProcessSet
from cachelab.spec import ServerSettings, load_spec, parse_spec

EXPERIMENTS = Path(__file__).parents[1] / "experiments"


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_defaults_keep_the_servers_as_before(tmp_path: Path) -> None:
    spec = parse_spec({"name": "t"})
    mc = server_argv("memcached", 11211, spec.server, tmp_path)
    assert (_flag(mc, "-t"), _flag(mc, "-m")) == ("1", "512")
    redis = server_argv("redis", 6379, spec.server, tmp_path)
    assert _flag(redis, "--save") == "" and _flag(redis, "--appendonly") == "no"
    assert _flag(redis, "--maxmemory") == "0mb"  # no limit, redis's default
    assert _flag(redis, "--maxmemory-policy") == "noeviction"
    assert _flag(redis, "--dir") == str(tmp_path)


def test_mvr_memcached_default_is_memcached_out_of_the_box(tmp_path: Path) -> None:
    """Seed 002 §3.1: `memcached -d -p 11120 -m 6144`, 4 threads by default."""
    spec = load_spec(EXPERIMENTS / "mvr-mc-default.yaml")
    argv = server_argv("memcached", 11211, spec.server, tmp_path)
    assert (_flag(argv, "-t"), _flag(argv, "-m")) == ("4", "6144")
    values = plan.release_values(spec, plan.Target())["memcached"]
    assert (values["threads"], values["memoryMiB"]) == (4, 6144)


def test_mvr_redis_default_is_stock_redis_with_6gb_lru(tmp_path: Path) -> None:
    """Seed 002 §4.1: stock redis.conf, --maxmemory 6gb --maxmemory-policy allkeys-lru."""
    spec = load_spec(EXPERIMENTS / "mvr-redis-default.yaml")
    argv = server_argv("redis", 6379, spec.server, tmp_path)
    assert "--save" not in argv and "--appendonly" not in argv  # persistence as shipped
    assert _flag(argv, "--maxmemory") == "6144mb"
    assert _flag(argv, "--maxmemory-policy") == "allkeys-lru"
    values = plan.release_values(spec, plan.Target())["redis"]
    assert values["persistence"] is True
    assert (values["maxmemoryMiB"], values["maxmemoryPolicy"]) == (6144, "allkeys-lru")


def test_server_settings_can_be_swept() -> None:
    spec = parse_spec(
        {
            "name": "t",
            "sweep": {"server.memcached.threads": [1, 2, 4]},
            "report": {"series": "server.memcached.threads"},
        }
    )
    assert [p.spec.server.memcached.threads for p in spec.points()] == [1, 2, 4]


def _redis_config(port: int, name: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=2.0) as sock:
        sock.sendall(f"CONFIG GET {name}\r\n".encode())
        data = b""
        while data.count(b"\r\n") < 5:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.decode().split("\r\n")[4]


def _memcached_settings(port: int) -> dict[str, str]:
    with socket.create_connection(("127.0.0.1", port), timeout=2.0) as sock:
        sock.sendall(b"stats settings\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return {
        line.split(" ")[1]: line.split(" ", 2)[2]
        for line in data.decode().splitlines()
        if line.startswith("STAT ")
    }


@pytest.mark.integration
def test_real_servers_run_with_the_settings(tmp_path: Path) -> None:
    settings = ServerSettings.model_validate(
        {
            "memcached": {"threads": 3, "memory_mib": 128},
            "redis": {
                "persistence": "stock",
                "maxmemory_mib": 64,
                "maxmemory_policy": "allkeys-lru",
            },
        }
    )
    with ProcessSet() as procs:
        (mc,) = start_servers(procs, "memcached", 1, tmp_path / "mc", settings=settings)
        (redis,) = start_servers(procs, "redis", 1, tmp_path / "redis", settings=settings)
        stats = _memcached_settings(mc.port)
        assert stats["num_threads"] == "3"
        assert stats["maxbytes"] == str(128 * 1024 * 1024)
        assert _redis_config(redis.port, "maxmemory") == str(64 * 1024 * 1024)
        assert _redis_config(redis.port, "maxmemory-policy") == "allkeys-lru"
        assert _redis_config(redis.port, "appendonly") == "no"
        assert _redis_config(redis.port, "save") != ""  # stock: RDB snapshots on
        assert _redis_config(redis.port, "dir") == str(tmp_path / "redis" / "redis-0-data")
