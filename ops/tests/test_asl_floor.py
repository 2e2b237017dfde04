"""The ASL floor (scripts/asl-floor/asl-floor.c, `make bench` part 1's asl-floor-t8 row) against a
real memcached on loopback: replies as memcached's own, bad input, and a loadgen run without errors.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from cachelab.paths import repo_root
from cachelab.processes import ManagedProcess, free_port

pytestmark = pytest.mark.integration

ROOT = repo_root()


@pytest.fixture(scope="module")
def floor(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """memcached and the floor (-t 4) in front of it; yields the floor's port."""
    binary = bench.servers.build_floor()
    assert isinstance(binary, Path), binary
    work = tmp_path_factory.mktemp("asl-floor")
    mc_port, port = free_port(), free_port()
    mc_cmd = ["memcached", "-l", "127.0.0.1", "-p", str(mc_port), "-U", "0", "-t", "1"]
    mc = ManagedProcess("memcached", mc_cmd + (["-u", "root"] if os.geteuid() == 0 else []),
                        work / "memcached.log")  # fmt: skip
    floor = None
    try:
        mc.wait_for_port("127.0.0.1", mc_port, timeout_s=30)
        cmd = [str(binary), "-l", "127.0.0.1", "-p", str(port), "-t", "4",
               "-m", f"127.0.0.1:{mc_port}"]  # fmt: skip
        floor = ManagedProcess("asl-floor", cmd, work / "asl-floor.log")
        floor.wait_for_port("127.0.0.1", port, timeout_s=30)
        yield port
        assert floor.running(), floor.log_tail()
    finally:
        if floor is not None:
            floor.stop(grace_s=5)
        mc.stop(grace_s=5)


class Client:
    """A blocking text-protocol client with a deadline on every reply."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.pending = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def until(self, end: bytes) -> bytes:
        """Reads until the bytes received end with `end`; returns them all."""
        deadline = time.monotonic() + 5
        while not self.pending.endswith(end):
            assert time.monotonic() < deadline, self.pending[-200:]
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                break
            self.pending += chunk
        got, self.pending = self.pending, b""
        return got

    def closed(self) -> bool:
        """Whether the server closes the connection (within the socket timeout)."""
        try:
            return self.sock.recv(4096) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


def test_storage_get_multi_get_miss_and_noreply_as_memcached(floor: int) -> None:
    c = Client(floor)
    try:
        c.send(b"set fa 5 0 3\r\nabc\r\n")
        assert c.until(b"\r\n") == b"STORED\r\n"
        c.send(b"add fa 0 0 1\r\nx\r\n")
        assert c.until(b"\r\n") == b"NOT_STORED\r\n"
        # pipelined: replies come back in the requests' order
        c.send(b"set fb 0 0 2\r\nxy\r\nget fa fb fmissing\r\nget fmissing\r\n")
        assert c.until(b"END\r\nEND\r\n") == (
            b"STORED\r\nVALUE fa 5 3\r\nabc\r\nVALUE fb 0 2\r\nxy\r\nEND\r\nEND\r\n"
        )
        c.send(b"gets fa\r\n")
        assert c.until(b"END\r\n").startswith(b"VALUE fa 5 3 ")
        c.send(b"set fn 0 0 1 noreply\r\n7\r\nincr fn 5\r\ndelete fa\r\nget fa\r\n")
        assert c.until(b"END\r\n") == b"12\r\nDELETED\r\nEND\r\n"
        value = os.urandom(300_000).hex().encode()  # 600 KB, many reads on both sides
        c.send(b"set fbig 0 0 %d\r\n%s\r\n" % (len(value), value))
        assert c.until(b"\r\n") == b"STORED\r\n"
        c.send(b"get fbig\r\n")
        assert c.until(b"END\r\n") == b"VALUE fbig 0 %d\r\n%s\r\nEND\r\n" % (len(value), value)
        # byte by byte
        for byte in b"get fb\r\n":
            c.send(bytes([byte]))
        assert c.until(b"END\r\n") == b"VALUE fb 0 2\r\nxy\r\nEND\r\n"
    finally:
        c.close()


@pytest.mark.parametrize(
    ("request_bytes", "reply"),
    [
        (b"set fx 0 0 notanumber\r\n", b"CLIENT_ERROR bad command line format\r\n"),
        (b"\r\n", b"ERROR\r\n"),
        (b"quit\r\n", b""),
    ],
)
def test_bad_input_gets_an_error_and_the_connection_closed(
    floor: int, request_bytes: bytes, reply: bytes
) -> None:
    c = Client(floor)
    try:
        c.send(request_bytes)
        if reply:
            assert c.until(b"\r\n") == reply
        assert c.closed()
    finally:
        c.close()
    ok = Client(floor)  # the floor keeps serving the others
    try:
        ok.send(b"version\r\n")
        assert ok.until(b"\r\n").startswith(b"VERSION ")
    finally:
        ok.close()


def test_loadgen_through_the_floor_sees_no_errors(
    floor: int, bench: ModuleType, tmp_path: Path
) -> None:
    assert bench.config.LOADGEN_JAR.exists(), "run `make build` first"
    run = bench.measure.loadgen(
        floor,
        tmp_path,
        "floor",
        ["-t", "2", "-c", "8", "--ratio=1:4", "-d", "512", "--key-maximum=999",
         "--test-time=3"],
    )  # fmt: skip
    totals = json.loads((tmp_path / "floor.json").read_text())["ALL STATS"]["Totals"]
    print(f"{run.requests} requests through the floor in 3 s")
    assert run.requests > 0  # served at all; how many a busy machine manages is not the point
    assert totals["Error Replies"] == 0


def test_bad_flags_are_refused_with_usage(bench: ModuleType, tmp_path: Path) -> None:
    binary = bench.servers.build_floor()
    assert isinstance(binary, Path), binary
    for argv in ([], ["-p", "1", "-m", "nocolon"], ["-p", "x", "-m", "127.0.0.1:1"]):
        proc = ManagedProcess("asl-floor", [str(binary), *argv], tmp_path / "bad.log")
        assert proc.wait(timeout_s=10) == 2
        assert "asl-floor" in (tmp_path / "bad.log").read_text()


def test_clients_leaving_mid_pipeline_do_not_disturb_the_others(floor: int) -> None:
    """Connections closed while their requests are queued or being served (the worker, not the
    net thread, frees them then) and a long pipeline answered in order."""
    for _ in range(50):
        gone = Client(floor)
        gone.send(b"".join(b"get fp%d\r\n" % i for i in range(100)))
        gone.close()
    c = Client(floor)
    try:
        c.send(b"".join(b"set fp%d 0 0 %d\r\n%d\r\n" % (i, len(str(i)), i) for i in range(200)))
        assert c.until(b"STORED\r\n" * 200) == b"STORED\r\n" * 200
        c.send(b"".join(b"get fp%d\r\n" % i for i in range(200)))
        want = b"".join(
            b"VALUE fp%d 0 %d\r\n%d\r\nEND\r\n" % (i, len(str(i)), i) for i in range(200)
        )
        assert c.until(b"fp199 0 3\r\n199\r\nEND\r\n") == want
    finally:
        c.close()
