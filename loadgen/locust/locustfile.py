"""locust scenarios for cachelab: memcached (text protocol) and redis (redis-py) users.

The one locustfile: run locally as below and in the cluster by the loadgen-locust component of
manifests/ (a copy beside its kustomization, checked equal to this file by ops/tests). The
memcached users speak the text protocol on the standard library, so the stock locust image runs
them; redis-py is imported only when a redis user starts.

Every operation is reported through locust's ``request`` event (request_type ``memcached`` or
``redis``, name ``set``/``get``), so locust's CSV and web UI show it like any HTTP request.

User classes (pick them by name on the command line; ``--host`` is ``host:port``)::

    MemcachedUser        closed loop: next request right after the reply (plus think time)
    MemcachedPacedUser   constant pacing: one request every CACHELAB_PACING_S seconds per user
    RedisUser            closed loop against redis
    RedisPacedUser       constant pacing against redis

Workload from the environment (memtier's meanings):

    CACHELAB_HOST          default host:port when --host is not given
    CACHELAB_KEY_PREFIX    key prefix (default ``memtier-``)
    CACHELAB_KEY_MINIMUM   smallest key number (default 0)
    CACHELAB_KEY_MAXIMUM   largest key number, inclusive (default 10000)
    CACHELAB_VALUE_BYTES   value size of SETs (default 1024)
    CACHELAB_RATIO         SET:GET cycle per user, as memtier --ratio (default ``1:10``)
    CACHELAB_THINK_MS      think time of the closed-loop users in ms (default 0)
    CACHELAB_PACING_S      interval of the paced users in seconds (default 0.01)
    CACHELAB_TIMEOUT_S     socket timeout in seconds (default 5)

Example (headless, CSV)::

    locust -f loadgen/locust/locustfile.py --headless -u 32 -r 32 -t 60s \\
        --host 127.0.0.1:11211 --csv results/locust MemcachedUser
"""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Callable
from typing import Any

from locust import User, constant, constant_pacing, task


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name}: expected an integer, got {raw!r}") from None


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name}: expected a number, got {raw!r}") from None


def parse_ratio(text: str) -> tuple[int, int]:
    """Parses memtier's ``SET:GET`` ratio, e.g. ``1:10``."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"CACHELAB_RATIO: expected SET:GET such as 1:10, got {text!r}")
    sets, gets = int(parts[0]), int(parts[1])
    if sets == 0 and gets == 0:
        raise ValueError("CACHELAB_RATIO: at least one of SET and GET must be > 0, got 0:0")
    return sets, gets


def parse_host(host: str | None) -> tuple[str, int]:
    """``host:port`` (an optional ``scheme://`` prefix is ignored)."""
    if not host:
        raise ValueError("no host: pass --host HOST:PORT or set CACHELAB_HOST")
    address = host.split("://", 1)[-1].rstrip("/")
    name, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"host: expected HOST:PORT, got {host!r}")
    return name, int(port)


class Workload:
    """Keys, values and the SET/GET cycle of one user (memtier's per-client cycle)."""

    def __init__(self, rng: random.Random) -> None:
        self.prefix = os.environ.get("CACHELAB_KEY_PREFIX", "memtier-")
        self.key_minimum = _env_int("CACHELAB_KEY_MINIMUM", 0)
        self.key_maximum = _env_int("CACHELAB_KEY_MAXIMUM", 10000)
        if self.key_maximum < self.key_minimum:
            raise ValueError(
                f"CACHELAB_KEY_MAXIMUM: must be >= CACHELAB_KEY_MINIMUM ({self.key_minimum}),"
                f" got {self.key_maximum}"
            )
        value_bytes = _env_int("CACHELAB_VALUE_BYTES", 1024)
        if value_bytes < 1:
            raise ValueError(f"CACHELAB_VALUE_BYTES: must be >= 1, got {value_bytes}")
        self.value = b"x" * value_bytes
        self.sets, self.gets = parse_ratio(os.environ.get("CACHELAB_RATIO", "1:10"))
        self._done_sets = 0
        self._done_gets = 0
        self._rng = rng

    def key(self) -> str:
        return f"{self.prefix}{self._rng.randint(self.key_minimum, self.key_maximum)}"

    def next_is_set(self) -> bool:
        """True for a SET, False for a GET, following the SET:GET cycle."""
        while True:
            if self._done_sets < self.sets:
                self._done_sets += 1
                return True
            if self._done_gets < self.gets:
                self._done_gets += 1
                return False
            self._done_sets = self._done_gets = 0


class CacheUser(User):
    """Shared part: runs the cycle and reports each operation as a locust request event."""

    abstract = True
    host = os.environ.get("CACHELAB_HOST")
    request_type = "cache"

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self.workload = Workload(random.Random())
        self.server, self.port = parse_host(self.host)

    def _measure(self, name: str, op: Callable[[], int]) -> None:
        start = time.perf_counter()
        length = 0
        error: BaseException | None = None
        try:
            length = op()
        except Exception as e:  # reported to locust as a failure, the user carries on
            error = e
        self.environment.events.request.fire(
            request_type=self.request_type,
            name=name,
            response_time=(time.perf_counter() - start) * 1000.0,
            response_length=length,
            response=None,
            context={},
            exception=error,
        )

    @task
    def operation(self) -> None:
        key = self.workload.key()
        if self.workload.next_is_set():
            self._measure("set", lambda: self.do_set(key, self.workload.value))
        else:
            self._measure("get", lambda: self.do_get(key))

    def do_set(self, key: str, value: bytes) -> int:
        raise NotImplementedError

    def do_get(self, key: str) -> int:
        raise NotImplementedError


class MemcachedText:
    """One memcached text-protocol connection (set and get of one key)."""

    def __init__(self, server: str, port: int, timeout_s: float) -> None:
        self.sock = socket.create_connection((server, port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb")

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def _line(self) -> bytes:
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("memcached closed the connection")
        if line.startswith((b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR")):
            raise RuntimeError(f"memcached replied {line.decode(errors='replace').strip()}")
        return line

    def set(self, key: str, value: bytes) -> None:
        self.sock.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(value), value))
        line = self._line()
        if line != b"STORED\r\n":
            raise RuntimeError(f"memcached did not store {key}: {line!r}")

    def get(self, key: str) -> bytes | None:
        self.sock.sendall(b"get %s\r\n" % key.encode())
        value = None
        while (line := self._line()) != b"END\r\n":
            # VALUE <key> <flags> <bytes>
            length = int(line.split()[3])
            value = self.reader.read(length + 2)[:length]
        return value


class MemcachedUser(CacheUser):
    """Closed loop against memcached (text protocol)."""

    request_type = "memcached"
    wait_time = constant(_env_float("CACHELAB_THINK_MS", 0.0) / 1000.0)

    def on_start(self) -> None:
        timeout = _env_float("CACHELAB_TIMEOUT_S", 5.0)
        self.client = MemcachedText(self.server, self.port, timeout)

    def on_stop(self) -> None:
        self.client.close()

    def do_set(self, key: str, value: bytes) -> int:
        self.client.set(key, value)
        return len(value)

    def do_get(self, key: str) -> int:
        value = self.client.get(key)
        return 0 if value is None else len(value)


class MemcachedPacedUser(MemcachedUser):
    """Constant pacing against memcached: one request every CACHELAB_PACING_S seconds."""

    wait_time = constant_pacing(_env_float("CACHELAB_PACING_S", 0.01))


class RedisUser(CacheUser):
    """Closed loop against redis (RESP2, redis-py)."""

    request_type = "redis"
    wait_time = constant(_env_float("CACHELAB_THINK_MS", 0.0) / 1000.0)

    def on_start(self) -> None:
        import redis  # only here: the stock locust image runs the memcached users without it

        timeout = _env_float("CACHELAB_TIMEOUT_S", 5.0)
        self.client = redis.Redis(
            host=self.server, port=self.port, socket_timeout=timeout, socket_connect_timeout=timeout
        )

    def on_stop(self) -> None:
        self.client.close()

    def do_set(self, key: str, value: bytes) -> int:
        if not self.client.set(key, value):
            raise RuntimeError(f"redis did not store {key}")
        return len(value)

    def do_get(self, key: str) -> int:
        value: Any = self.client.get(key)
        return 0 if value is None else len(value)


class RedisPacedUser(RedisUser):
    """Constant pacing against redis: one request every CACHELAB_PACING_S seconds."""

    wait_time = constant_pacing(_env_float("CACHELAB_PACING_S", 0.01))
