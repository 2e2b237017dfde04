"""Process management of the local runner against real memcached and redis-server processes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from cachelab.local.servers import server_stats, start_servers
from cachelab.processes import ProcessError, ProcessSet, free_port, port_accepts

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); look at its state
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = {free_port() for _ in range(20)}
    assert len(ports) == 20
    assert all(not port_accepts("127.0.0.1", p) for p in ports)


@pytest.mark.parametrize("backend", ["memcached", "redis"])
def test_servers_start_on_free_ports_answer_and_stop(tmp_path: Path, backend: str) -> None:
    with ProcessSet() as procs:
        servers = start_servers(procs, backend, 2, tmp_path)
        assert servers[0].port != servers[1].port
        stats = server_stats(servers[0])
        assert ("curr_connections" if backend == "memcached" else "redis_version") in stats
        pids = [s.proc.pid for s in servers]
    assert not any(_alive(pid) for pid in pids)
    assert not any(port_accepts(s.host, s.port) for s in servers)


def test_two_server_sets_coexist(tmp_path: Path) -> None:
    with ProcessSet() as first, ProcessSet() as second:
        a = start_servers(first, "memcached", 1, tmp_path / "a")
        b = start_servers(second, "memcached", 1, tmp_path / "b")
        assert a[0].port != b[0].port
        assert port_accepts(a[0].host, a[0].port) and port_accepts(b[0].host, b[0].port)


def test_stop_kills_the_whole_process_group(tmp_path: Path) -> None:
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    with ProcessSet() as procs:
        parent = procs.start("parent", [sys.executable, "-c", script], tmp_path / "p.log")
        parent.wait_until(lambda: (tmp_path / "p.log").read_text().strip() != "", "ready", 10)
        child_pid = int((tmp_path / "p.log").read_text().split()[0])
        assert _alive(child_pid)
    deadline = time.monotonic() + 5
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child_pid)


def test_process_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    script = (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ignoring', flush=True)\n"
        "time.sleep(60)\n"
    )
    with ProcessSet() as procs:
        proc = procs.start("stubborn", [sys.executable, "-c", script], tmp_path / "s.log")
        proc.wait_for_line("ignoring", timeout_s=60)  # a busy machine starts Python slowly
        code = proc.stop(grace_s=0.5)
    assert code == -9


def test_waiting_for_a_line_fails_clearly_when_the_process_dies(tmp_path: Path) -> None:
    with ProcessSet() as procs:
        code = "print('bad flag'); raise SystemExit(3)"
        proc = procs.start("quitter", [sys.executable, "-c", code], tmp_path / "q.log")
        with pytest.raises(
            ProcessError,
            match=r"^quitter exited with code 3 before printing 'listening': bad flag "
            r"\(log: .*q\.log\)$",
        ):
            proc.wait_for_line("listening", timeout_s=10)


def test_waiting_times_out_with_the_log_tail(tmp_path: Path) -> None:
    with ProcessSet() as procs:
        code = "print('hello', flush=True); import time; time.sleep(30)"
        proc = procs.start("sleeper", [sys.executable, "-c", code], tmp_path / "z.log")
        proc.wait_for_line("hello", timeout_s=60)  # in the log tail, however slow the start
        with pytest.raises(
            ProcessError, match=r"^sleeper not printing 'never' after 1 s: hello \(log: .*z\.log\)$"
        ):
            proc.wait_for_line("never", timeout_s=1)


def test_missing_binary_is_named(tmp_path: Path) -> None:
    with ProcessSet() as procs, pytest.raises(ProcessError, match="cannot start /no/such/binary"):
        procs.start("ghost", ["/no/such/binary"], tmp_path / "g.log")
