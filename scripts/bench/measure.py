"""Measuring one target: loadgen runs, a process's CPU and system calls, rounds, ratios."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from cachelab.processes import ManagedProcess

from bench.config import (
    BASELINE_JAR,
    CLK_TCK,
    KEYS,
    LOADGEN_JAR,
    LOADGEN_JAVA_OPTS,
    MIDDLEWARE_VARIANTS,
    PERF_SECONDS,
    PROXY_ROUNDS,
    SECONDS,
    java,
)

T = TypeVar("T")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a running process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


@dataclass
class ClientRun:
    ops_per_s: float
    requests: int
    p50_ms: float
    p99_ms: float
    client_cpu_s: float
    p999_ms: float | None = None  # p99.9 (the loadgen's JSON; not kept by combine)


def run_client(cmd: list[str], log: Path) -> tuple[int, float]:
    """Runs a client to completion; returns (exit status, its CPU seconds from rusage)."""
    code, cpu_s = ManagedProcess(Path(cmd[0]).name, cmd, log).wait_with_cpu()
    return int(code), float(cpu_s)


def loadgen(port: int, work: Path, name: str, extra: list[str]) -> ClientRun:
    out = work / f"{name}.json"
    cmd = [
        java(),
        *LOADGEN_JAVA_OPTS,
        # class-data sharing archive, created by the first (preload) run and reused after
        f"-XX:SharedArchiveFile={work / 'loadgen.jsa'}",
        "-XX:+AutoCreateSharedArchive",
        "-jar",
        str(LOADGEN_JAR),
        "-s",
        "127.0.0.1",
        "-p",
        str(port),
        "-P",
        "memcache_text",
        "--quiet",
        "--hide-histogram",
        f"--json-out-file={out}",
        *extra,
    ]
    status, cpu = run_client(cmd, work / f"{name}.log")
    if status != 0:
        raise RuntimeError(f"loadgen ({name}) failed:\n{(work / f'{name}.log').read_text()}")
    totals = json.loads(out.read_text())["ALL STATS"]["Totals"]
    pct = totals["Percentile Latencies"]
    return ClientRun(
        float(totals["Ops/sec"]),
        int(totals["Count"]),
        float(pct["p50.00"]),
        float(pct["p99.00"]),
        cpu,
        float(pct["p99.90"]) if "p99.90" in pct else None,
    )


MEASURE = [
    "-t", "2", "-c", "16", "--ratio=1:9", "-d", "1024", f"--key-maximum={KEYS - 1}",
    "--distinct-client-seed",
]  # fmt: skip


def combine(runs: list[ClientRun]) -> ClientRun:
    """Several runs as one: requests and CPU summed, ops/s over the summed time."""
    requests = sum(r.requests for r in runs)
    seconds = sum(r.requests / r.ops_per_s for r in runs)
    return ClientRun(
        requests / seconds,
        requests,
        max(r.p50_ms for r in runs),
        max(r.p99_ms for r in runs),
        sum(r.client_cpu_s for r in runs),
    )


def measure(port: int, work: Path, name: str, pinned: bool = True) -> ClientRun:
    """A timed loadgen run; pinned = --pin-threads (one CPU per thread, as memcaslap does)."""
    pin = ["--pin-threads"] if pinned else []
    return loadgen(port, work, name, [*MEASURE, *pin, f"--test-time={SECONDS}"])


@dataclass
class ProcCounters:
    """A process's read and write system calls, context switches and run-queue wait (all its
    threads) and user and system CPU ticks so far."""

    reads: int
    writes: int
    switches: int
    user_ticks: int
    system_ticks: int
    # Time its threads spent runnable but waiting for a CPU (/proc/<pid>/task/*/schedstat).
    run_queue_nanos: int = 0

    @property
    def cpu_s(self) -> float:
        """utime + stime in seconds (what cpu_seconds reads)."""
        return (self.user_ticks + self.system_ticks) / CLK_TCK

    @staticmethod
    def of(pid: int) -> ProcCounters:
        io = dict(line.split(": ", 1) for line in Path(f"/proc/{pid}/io").read_text().splitlines())
        switches = run_queue_nanos = 0
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                status = (task / "status").read_text()
                schedstat = (task / "schedstat").read_text().split()
            except OSError:  # the thread ended meanwhile
                continue
            switches += sum(
                int(line.split()[1]) for line in status.splitlines() if "ctxt_switches" in line
            )
            run_queue_nanos += int(schedstat[1]) if len(schedstat) > 1 else 0
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return ProcCounters(
            int(io["syscr"]),
            int(io["syscw"]),
            switches,
            int(stat[11]),
            int(stat[12]),
            run_queue_nanos,
        )


def memcached_requests(port: int) -> int:
    """memcached's get and set commands so far (its `stats`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"stats\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    stats = dict(
        line.split()[1:3] for line in data.decode().splitlines() if line.startswith("STAT")
    )
    return int(stats["cmd_get"]) + int(stats["cmd_set"])


def parse_perf_csv(text: str) -> dict[str, float]:
    """`perf stat -x ,` output: event name -> count (events perf could not count left out)."""
    counts: dict[str, float] = {}
    for line in text.splitlines():
        cells = line.split(",")
        if len(cells) >= 3 and not line.startswith("#"):
            try:
                counts[cells[2]] = float(cells[0])
            except ValueError:
                continue
    return counts


def perf_per_request(
    port: int, mc_port: int, work: Path, name: str, proxy_pid: int
) -> tuple[float, float] | None:
    """BENCH_PERF: system calls and context switches per request of the proxy, counted by perf
    stat over PERF_SECONDS in the middle of one more loadgen run (requests from memcached's
    counters over the same window, one backend request per client request)."""
    if shutil.which("perf") is None:
        print(f"  {name}: perf not found, no system call counts", flush=True)
        return None
    client = threading.Thread(
        target=loadgen,
        args=(
            port,
            work,
            f"{name}-perf",
            [*MEASURE, f"--test-time={PERF_SECONDS + 3}"],
        ),
    )
    client.start()
    try:
        time.sleep(1.5)  # the loadgen's JVM starts and connects
        out = work / f"{name}-perf.csv"
        before = memcached_requests(mc_port)
        subprocess.run(
            [
                "perf", "stat", "-x", ",", "-o", str(out), "-e",
                "raw_syscalls:sys_enter,context-switches", "-p", str(proxy_pid),
                "--", "sleep", str(PERF_SECONDS),
            ],
            check=False, capture_output=True, timeout=PERF_SECONDS + 30,
        )  # fmt: skip
        requests = memcached_requests(mc_port) - before
    finally:
        client.join(timeout=PERF_SECONDS + 60)
    counts = parse_perf_csv(out.read_text()) if out.exists() else {}
    if requests <= 0 or {"raw_syscalls:sys_enter", "context-switches"} - counts.keys():
        print(f"  {name}: perf stat counted nothing ({out})", flush=True)
        return None
    return counts["raw_syscalls:sys_enter"] / requests, counts["context-switches"] / requests


def num(value: float | None) -> str:
    """A figure with two decimals, or "-" if there is none."""
    return f"{value:.2f}" if value is not None else "-"


def ratio(a: float | None, b: float | None) -> str:
    return f"x{a / b:.2f}" if a and b else "-"


def variant_targets(measure: Callable[..., T]) -> list[tuple[str, Callable[[], T]]]:
    """Each BENCH_MIDDLEWARE variant as a target `cachelab-t<W>-b<B>` (`-e<L>` with event loops),
    each followed by the BENCH_BASELINE_JAR's `base-t<W>-b<B>[-e<L>]` (so both see the same
    background load); `measure(variant, jar=..., label=...)` measures one."""
    targets: list[tuple[str, Callable[[], T]]] = []
    for variant in MIDDLEWARE_VARIANTS:
        run = partial(measure, variant)
        targets.append((variant.name(), run))
        if BASELINE_JAR is not None:
            base = partial(run, jar=BASELINE_JAR, label="base")
            targets.append((variant.name("base"), base))
    return targets


def run_rounds(
    targets: list[tuple[str, Callable[[], T]]], describe: Callable[[T], str]
) -> dict[str, list[T]]:
    """PROXY_ROUNDS rounds over every target, in reversed order every other round (a drift in
    the background load hits every target alike); each target's results in round order."""
    runs: dict[str, list[T]] = {name: [] for name, _ in targets}
    for n in range(PROXY_ROUNDS):
        order = targets if n % 2 == 0 else targets[::-1]
        for name, measure_target in order:
            result = measure_target()
            runs[name].append(result)
            print(
                f"  round {n + 1}/{PROXY_ROUNDS}: {name}: {describe(result)}",
                flush=True,
            )
    return runs


def client_us(run: ClientRun) -> float:
    """The loadgen's CPU per request (its JVM start-up included, so slightly high)."""
    return run.client_cpu_s / run.requests * 1e6
