"""Real server processes on loopback for the integration tests: a free port, start, stop."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(cmd: list[str], port: int, timeout_s: float = 10) -> subprocess.Popen[bytes]:
    """Runs `cmd` and waits until it accepts connections on `port` (RuntimeError if not)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"{cmd[0]} did not start on port {port}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def redis_server_command(port: int) -> list[str]:
    """redis-server on loopback `port`, without persistence."""
    return [
        *("redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""),
        *("--appendonly", "no", "--protected-mode", "no"),
    ]
