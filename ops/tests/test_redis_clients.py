"""redis-py as users run it, through the middleware's RESP front end.

Two redis-servers behind the middleware jar at its defaults (round-robin reads, writes to every
server) and a third used directly: every data type's keyed commands give the same answers both
ways, with redis-py's default settings (RESP3, `HELLO 3` on connect) and with `protocol=2`, at the
middleware's defaults and with two event loops (`--event-loops 2`).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from local_servers import free_port, redis_server_command, start, stop

from cachelab.local.tools import find_java
from cachelab.paths import repo_root

pytestmark = pytest.mark.integration


def _redis_server() -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    return start(redis_server_command(port), port), port


@pytest.fixture(scope="module", params=[0, 2], ids=["workers", "event-loops-2"])
def ports(request: pytest.FixtureRequest) -> Iterator[tuple[int, int, list[int]]]:
    """(middleware port, direct redis port, the middleware's redis ports).

    The middleware at its defaults, and with two event loops (`--event-loops 2`) that send
    single-server requests themselves.
    """
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (make deps)")
    root = repo_root()
    jar = root / "middleware" / "target" / "middleware.jar"
    if not jar.is_file():
        pytest.fail(f"{jar} is missing: run `make build`")
    servers = [_redis_server() for _ in range(3)]
    port = free_port()
    cmd = [find_java(root), "-jar", str(jar), "-l", "127.0.0.1", "-p", str(port)]
    cmd += ["--protocol", "redis", "-t", "8", "-s", "false", "--event-loops", str(request.param)]
    cmd += ["--admin-commands", "true"]  # the tests empty the servers with FLUSHALL
    cmd += ["-m"]
    cmd += [f"127.0.0.1:{p}" for _, p in servers[:2]]
    middleware = start(cmd, port, timeout_s=60)
    yield port, servers[2][1], [p for _, p in servers[:2]]
    stop(middleware)
    for proc, _ in servers:
        stop(proc)


def _every_type(r: redis.Redis) -> list[Any]:
    """Commands of every data type, with what each returned."""
    r.flushall()
    out: list[Any] = []
    # hashes
    out += [r.hset("h", mapping={"a": "1", "b": "2"}), r.hget("h", "a"), r.hgetall("h")]
    out += [r.hincrby("h", "n", 5), r.hincrbyfloat("h", "f", 1.5), r.hmget("h", ["a", "x"])]
    out += [r.hdel("h", "b"), r.hlen("h"), r.hexists("h", "a"), sorted(r.hkeys("h"))]
    # lists
    out += [r.rpush("l", "a", "b", "c"), r.lpush("l", "z"), r.lrange("l", 0, -1)]
    out += [r.lpop("l"), r.rpop("l"), r.llen("l"), r.lindex("l", 0), r.lset("l", 0, "x")]
    out += [r.rpoplpush("l", "l2"), r.lmove("l", "l2", "LEFT", "RIGHT"), r.lrange("l2", 0, -1)]
    # sets
    out += [r.sadd("s", "a", "b", "c"), r.sadd("t", "b", "c", "d"), r.smembers("s")]
    out += [r.sismember("s", "a"), r.scard("s"), r.sinter(["s", "t"]), r.sunion(["s", "t"])]
    out += [r.sdiff(["s", "t"]), r.sinterstore("st", ["s", "t"]), r.smove("s", "t", "b")]
    # sorted sets
    out += [r.zadd("z", {"a": 1.0, "b": 2.5, "c": 3.0}), r.zscore("z", "b"), r.zscore("z", "x")]
    out += [r.zincrby("z", 1.0, "a"), r.zrange("z", 0, -1), r.zrange("z", 0, -1, withscores=True)]
    out += [r.zrank("z", "c"), r.zcard("z"), r.zcount("z", 0, 10), r.zmscore("z", ["b", "x"])]
    out += [r.zrangebyscore("z", 1, 3, withscores=True), r.zpopmin("z"), r.zpopmax("z", 2)]
    out += [r.zadd("y", {"m": 1.0}), r.zunionstore("zu", ["y", "z"]), r.zrange("zu", 0, -1)]
    # bitmaps and HyperLogLog
    out += [r.setbit("b", 7, 1), r.getbit("b", 7), r.bitcount("b"), r.bitpos("b", 1)]
    out += [r.pfadd("p", "a", "b", "c"), r.pfcount("p"), r.pfadd("q", "c", "d")]
    out += [r.pfmerge("pq", "p", "q"), r.pfcount("pq")]
    # strings and generic
    out += [r.set("k", "v"), r.get("k"), r.mset({"m1": "1", "m2": "2"}), r.mget("m1", "x", "m2")]
    out += [r.incrbyfloat("m1", 0.5), r.getrange("k", 0, 0), r.type("h"), r.rename("t", "t2")]
    out += [r.exists("t", "t2"), r.expire("h", 100), r.ttl("h") > 0, r.delete("h", "l", "s")]
    pipe = r.pipeline(transaction=False)
    pipe.hset("ph", "f", "v")
    pipe.hgetall("ph")
    pipe.sadd("ps", "x")
    pipe.smembers("ps")
    pipe.zadd("pz", {"a": 2})
    pipe.zrange("pz", 0, -1, withscores=True)
    out += pipe.execute()
    return out


@pytest.mark.parametrize("protocol", [None, 2], ids=["defaults", "protocol-2"])
def test_redis_py_gets_what_a_redis_server_gives(
    ports: tuple[int, int, list[int]], protocol: int | None
) -> None:
    middleware_port, direct_port, _ = ports
    settings: dict[str, Any] = {} if protocol is None else {"protocol": protocol}
    with redis.Redis(port=direct_port, **settings) as direct:
        expected = _every_type(direct)
    with redis.Redis(port=middleware_port, **settings) as client:
        assert _every_type(client) == expected


def test_redis_py_defaults_speak_resp3_and_writes_reach_every_server(
    ports: tuple[int, int, list[int]],
) -> None:
    middleware_port, _, server_ports = ports
    with redis.Redis(port=middleware_port) as client:
        assert client.ping()
        client.flushall()
        client.hset("h", mapping={"a": "1"})
        client.zadd("z", {"m": 1.5})
        connection = client.connection_pool.get_connection()
        try:
            assert connection.handshake_metadata is not None
            assert connection.handshake_metadata[b"proto"] == 3
        finally:
            client.connection_pool.release(connection)
    for port in server_ports:
        with redis.Redis(port=port, protocol=2) as server:
            assert server.hgetall("h") == {b"a": b"1"}
            assert server.zscore("z", "m") == 1.5
