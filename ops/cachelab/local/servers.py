"""memcached and redis-server processes on free loopback ports."""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from cachelab.processes import ManagedProcess, ProcessError, ProcessSet, free_port
from cachelab.spec import ServerSettings

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Server:
    """A running backend server."""

    backend: str
    host: str
    port: int
    proc: ManagedProcess

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def server_argv(backend: str, port: int, settings: ServerSettings, data_dir: Path) -> list[str]:
    """The command line of one server with the spec's `server` settings; redis keeps whatever it
    writes (RDB snapshots with `persistence: stock`) in `data_dir`."""
    if backend == "memcached":
        binary = shutil.which("memcached")
        if binary is None:
            raise ProcessError("memcached not found on PATH (make deps installs it)")
        mc = settings.memcached
        argv = [binary, "-l", HOST, "-p", str(port), "-U", "0"]
        argv += ["-t", str(mc.threads), "-m", str(mc.memory_mib)]
        if os.geteuid() == 0:  # memcached refuses to run as root without naming the user
            argv += ["-u", "root"]
        return argv
    if backend == "redis":
        binary = shutil.which("redis-server")
        if binary is None:
            raise ProcessError("redis-server not found on PATH (make deps installs it)")
        rd = settings.redis
        argv = [binary, "--bind", HOST, "--port", str(port), "--dir", str(data_dir)]
        if rd.persistence == "off":
            argv += ["--save", "", "--appendonly", "no"]
        argv += ["--maxmemory", f"{rd.maxmemory_mib}mb", "--maxmemory-policy", rd.maxmemory_policy]
        return argv
    raise ProcessError(f"unknown backend {backend!r}")


def _answers(backend: str, port: int) -> bool:
    """True when the server replies to `version` (memcached) or `PING` (redis)."""
    probe, expect = (
        (b"version\r\n", b"VERSION") if backend == "memcached" else (b"PING\r\n", b"+PONG")
    )
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as sock:
            sock.sendall(probe)
            return sock.recv(64).startswith(expect)
    except OSError:
        return False


def start_servers(
    procs: ProcessSet,
    backend: str,
    count: int,
    log_dir: Path,
    timeout_s: float = 10.0,
    settings: ServerSettings | None = None,
) -> list[Server]:
    """Start `count` servers, each on a free port, and wait until every one answers."""
    settings = settings or ServerSettings()
    servers = []
    for index in range(count):
        port = free_port(HOST)
        data_dir = log_dir / f"{backend}-{index}-data"
        data_dir.mkdir(parents=True, exist_ok=True)
        proc = procs.start(
            f"{backend}-{index}",
            server_argv(backend, port, settings, data_dir),
            log_dir / f"{backend}-{index}.log",
        )
        servers.append(Server(backend, HOST, port, proc))
    for server in servers:
        server.proc.wait_until(
            lambda s=server: _answers(s.backend, s.port),  # type: ignore[misc]
            f"answering on {server.address}",
            timeout_s,
        )
    return servers


def server_stats(server: Server) -> dict[str, str]:
    """memcached `stats` or redis `INFO` as a flat dict (for servers.json)."""
    command = b"stats\r\n" if server.backend == "memcached" else b"INFO\r\n"
    chunks = []
    try:
        with socket.create_connection((server.host, server.port), timeout=2.0) as sock:
            sock.sendall(command)
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                data = b"".join(chunks)
                if server.backend == "memcached" and data.endswith(b"END\r\n"):
                    break
                if server.backend == "redis" and _redis_bulk_complete(data):
                    break
    except OSError as error:
        return {"error": str(error)}
    text = b"".join(chunks).decode(errors="replace")
    stats = {}
    for line in text.splitlines():
        if line.startswith("STAT "):
            _, key, value = [*line.split(" ", 2), ""][:3]
            stats[key] = value
        elif ":" in line and not line.startswith("#"):
            key, value = line.split(":", 1)
            stats[key] = value
    return stats


def _redis_bulk_complete(data: bytes) -> bool:
    if not data.startswith(b"$"):
        return True
    header, _, rest = data.partition(b"\r\n")
    try:
        length = int(header[1:])
    except ValueError:
        return True
    return len(rest) >= length + 2
