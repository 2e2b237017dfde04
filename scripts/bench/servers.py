"""The servers and proxies the bench starts: memcached, redis, twemproxy, the ASL floor."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from cachelab.processes import ManagedProcess, free_port

from bench.config import (
    FLOOR_BINARY,
    FLOOR_SOURCE,
    KEYS,
    MIDDLEWARE_JAVA_OPTS,
    java,
)
from bench.measure import (
    loadgen,
)
from bench.variants import Variant


def start_nutcracker(server_port: int, work: Path, redis: bool) -> tuple[ManagedProcess, int]:
    """twemproxy in front of one server (`redis: true` for redis); returns it and its port."""
    port = free_port()
    name = "nutcracker-redis" if redis else "nutcracker"
    conf = work / f"{name}.yml"
    conf.write_text(
        "bench:\n"
        f"  listen: 127.0.0.1:{port}\n"
        + ("  redis: true\n" if redis else "")
        + "  hash: fnv1a_64\n"
        "  distribution: ketama\n"
        "  timeout: 2000\n"
        "  server_connections: 1\n"
        "  auto_eject_hosts: false\n"
        "  servers:\n"
        f"   - 127.0.0.1:{server_port}:1\n"
    )
    cmd = [
        "nutcracker", "-c", str(conf), "-s", str(free_port()), "-a", "127.0.0.1",
        "-o", str(work / f"{name}.log"),
    ]  # fmt: skip
    proc = ManagedProcess(name, cmd, work / f"{name}.out")
    try:
        proc.wait_for_port("127.0.0.1", port, timeout_s=30)
    except BaseException:
        proc.stop(grace_s=10)
        raise
    return proc, port


def build_floor() -> Path | str:
    """Compiles the ASL floor (if its binary is missing or older than its source); returns the
    binary, or why it could not be built."""
    if shutil.which("gcc") is None:
        return "skipped: gcc not found (scripts/install-debs.sh installs it; run `make deps`)"
    binary = FLOOR_BINARY
    if binary.exists() and binary.stat().st_mtime >= FLOOR_SOURCE.stat().st_mtime:
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    built = subprocess.run(
        ["gcc", "-O2", "-pthread", "-Wall", "-o", str(binary), str(FLOOR_SOURCE)],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        return f"skipped: gcc failed: {built.stderr.strip()[-500:]}"
    return binary


def start_memcached(port: int, work: Path, memory_mb: int = 1024) -> ManagedProcess:
    cmd = [
        "memcached",
        "-l",
        "127.0.0.1",
        "-p",
        str(port),
        "-U",
        "0",
        "-t",
        "2",
        "-m",
        str(memory_mb),
    ]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    proc = ManagedProcess("memcached", cmd, work / "memcached.log")
    proc.wait_for_port("127.0.0.1", port, timeout_s=30)
    return proc


def preload(port: int, work: Path) -> None:
    loadgen(
        port,
        work,
        "preload",
        [
            "-t", "2", "-c", "16", "--ratio=1:0", "-n", "allkeys", "--key-pattern=P:P",
            f"--key-maximum={KEYS - 1}", "-d", "1024", "--pipeline=16",
        ],
    )  # fmt: skip


def start_redis(port: int, work: Path) -> ManagedProcess:
    cmd = [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", str(work),
    ]  # fmt: skip
    proc = ManagedProcess("redis-server", cmd, work / "redis-server.log")
    proc.wait_for_port("127.0.0.1", port, timeout_s=30)
    return proc


def middleware_command(
    jar: Path, port: int, variant: Variant, server_port: int, *flags: str
) -> list[str]:
    """The middleware `jar` in `variant` on loopback `port` in front of one server, as the bench
    runs it."""
    return [
        java(), *MIDDLEWARE_JAVA_OPTS, "-jar", str(jar), "-l", "127.0.0.1",
        "-p", str(port), "-s", "false", *variant.flags(),
        *flags, "-m", f"127.0.0.1:{server_port}",
    ]  # fmt: skip
