"""The one process module: child processes of cachelab (servers, middlewares, loadgens of a local
run; Prometheus and exporters of the monitor; the peers of `make bench`): free ports, start, wait
for readiness, stop without orphans.

Every child is started in its own session (its own process group), so the terminal's Ctrl-C
reaches only cachelab, and stopping a child signals its whole group (SIGTERM, then SIGKILL after a
grace). `ProcessSet` remembers what it started and stops all of it on exit, also when the run fails
or is interrupted. Standard library only (scripts/bench uses it too).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

_handed_out: set[int] = set()


CAUSE_CHARS = 200


def log_cause(text: str) -> str:
    """The cause of a failure as a process's log tells it, on one line: a Java
    OutOfMemoryError (which space ran out), else the last line that is not a stack frame."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if "OutOfMemoryError" in line:
            found = (
                line[line.index("java.lang.OutOfMemoryError") :] if "java.lang." in line else line
            )
            return f"out of memory ({found[:CAUSE_CHARS]})"
    frames = ("at ", "... ", "Caused by:", "Exception in thread")
    for line in reversed(lines):
        if not line.startswith(frames):
            return line[:CAUSE_CHARS]
    return lines[-1][:CAUSE_CHARS] if lines else ""


class ProcessError(RuntimeError):
    """A child that failed to start, to become ready, or to finish."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free now on `host` (never one handed out before by this process)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = int(sock.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise ProcessError("no free TCP port found after 100 tries")


def port_accepts(host: str, port: int, timeout_s: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


class ManagedProcess:
    """One child process with its output in a log file; the caller's thread drives it."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ):
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = log_path.open("wb")
        self.started_epoch_ms = time.time() * 1000.0
        try:
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env={**os.environ, **env} if env else None,
                start_new_session=True,
            )
        except OSError as error:
            self._log.close()
            raise ProcessError(f"{name}: cannot start {self.argv[0]} ({error.strerror})") from None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

    def returncode(self) -> int | None:
        return self.popen.poll()

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def failure(self, what: str) -> str:
        """One line for a process that failed: its name, what happened, the cause its log
        gives (an OutOfMemoryError, else its last line that is not a stack frame) and the log's
        path; never the stack trace itself."""
        cause = log_cause(self.log_tail(200))
        return f"{self.name} {what}" + (f": {cause}" if cause else "") + f" (log: {self.log_path})"

    def _fail(self, what: str) -> ProcessError:
        return ProcessError(self.failure(what))

    def wait_until(self, ready: Callable[[], bool], what: str, timeout_s: float) -> None:
        """Poll `ready` until true; fail if the process exits first or time runs out."""
        deadline = time.monotonic() + timeout_s
        delay = 0.02
        while True:
            if ready():
                return
            if not self.running():
                raise self._fail(f"exited with code {self.returncode()} before {what}")
            if time.monotonic() > deadline:
                raise self._fail(f"not {what} after {timeout_s:.0f} s")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.2)

    def wait_for_port(self, host: str, port: int, timeout_s: float = 10.0) -> None:
        self.wait_until(lambda: port_accepts(host, port), f"accepting on {host}:{port}", timeout_s)

    def wait_for_line(self, text: str, timeout_s: float = 30.0) -> None:
        def has_line() -> bool:
            try:
                return text.encode() in self.log_path.read_bytes()
            except OSError:
                return False

        self.wait_until(has_line, f"printing {text!r}", timeout_s)

    def wait_with_cpu(self) -> tuple[int, float]:
        """Wait for the process to exit; returns its exit code and the CPU seconds (user +
        system) it and its waited-for children used, from the kernel's rusage."""
        _, status, usage = os.wait4(self.popen.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        self.popen.returncode = code
        self._log.close()
        return code, usage.ru_utime + usage.ru_stime

    def wait(self, timeout_s: float) -> int:
        """Wait for the process to exit; ProcessError if it takes longer than timeout_s."""
        try:
            return self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise self._fail(f"still running after {timeout_s:.0f} s") from None

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signum)

    def stop(self, grace_s: float = 5.0, signum: int = signal.SIGTERM) -> int:
        """SIGTERM the group, wait up to grace_s, then SIGKILL it; returns the exit code."""
        if self.running():
            self.signal_group(signum)
            try:
                self.popen.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.signal_group(signal.SIGKILL)
                self.popen.wait(timeout=5.0)
        # children left in the group after the leader exited
        self.signal_group(signal.SIGKILL)
        self._log.close()
        code = self.popen.returncode
        return int(code) if code is not None else -1


class ProcessSet:
    """The processes a run started; `stop_all` (or leaving the `with` block) stops them all."""

    def __init__(self) -> None:
        self._procs: list[ManagedProcess] = []

    def start(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ManagedProcess:
        """Starts a child (`env`: variables set on top of this process's environment)."""
        proc = ManagedProcess(name, argv, log_path, cwd, env)
        self._procs.append(proc)
        return proc

    def forget(self, proc: ManagedProcess) -> None:
        if proc in self._procs:
            self._procs.remove(proc)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._procs))

    def stop_all(self, grace_s: float = 5.0) -> None:
        """Stop in reverse start order (clients before the middleware before the servers)."""
        for proc in reversed(self._procs):
            proc.stop(grace_s)
        self._procs.clear()

    def __enter__(self) -> ProcessSet:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop_all()
