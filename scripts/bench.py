#!/usr/bin/env python3
"""`make bench`: throughput, latency and CPU per request, measured side by side in one run.

Part 1 drives one memcached with the cachelab loadgen (2 threads x 16 closed-loop clients,
1 KiB values, --ratio=1:9, preloaded keys) directly, through twemproxy (nutcracker) and through
the cachelab middleware in each variant of BENCH_MIDDLEWARE (workers:worker-batch pairs, default
"8:1,8:16,2:16": the ASL worker, then 16-request batches with 8 and with 2 workers), and prints
each proxy's CPU seconds per request (utime + stime from /proc/<pid>/stat) next to throughput and
p50/p99, as ratios to nutcracker and to direct, then the CPU budget a proxy sharing this machine
would have for 0.8x direct's throughput. Part 1 also measures the ASL floor (row asl-floor-t8):
scripts/asl-floor/asl-floor.c, the ASL worker's design (one epoll net thread, a mutex + condvar
request queue, 8 workers each sending one request at a time on its own blocking backend
connection) in minimal C, compiled with `gcc -O2 -pthread` into target/asl-floor/ (BENCH_FLOOR=0
leaves it out; without gcc the row says so). For each proxy the bench also prints its read and
write system calls (/proc/<pid>/io syscr, syscw) and context switches (summed over
/proc/<pid>/task/*/status) per request of the measured run; BENCH_PERF=1 adds one more run of
BENCH_PERF_SECONDS (5) per proxy under `perf stat -e raw_syscalls:sys_enter,context-switches`
for all its system calls per request (a separate run, so perf's own cost stays out of the CPU
figures). Every target first gets two runs of BENCH_WARMUP_SECONDS
(default 5) of unmeasured load, so JVM start-up and JIT compilation (including the recompilation
after the first run's clients disconnect and new ones connect) are not counted against the
middleware.

Part 3 (redis) runs redis-benchmark (-t get,set, BENCH_REDIS_CLIENTS (50) connections,
BENCH_REDIS_REQUESTS (800000) requests per test, 1 KiB values, random keys) against one
redis-server directly, through twemproxy's redis mode (`redis: true`) and through the middleware's
RESP front end (`--protocol redis`) in each BENCH_MIDDLEWARE variant (each followed by the
BENCH_BASELINE_JAR's, as in part 1), and prints GET and SET ops/s, p50, proxy CPU and context
switches per request (/proc, all threads) and redis' commands per read event (its INFO stats: the
requests each write to redis carried) with ratios to direct and to twemproxy (target: GET and SET
at >= x1.00 twemproxy), median of BENCH_PROXY_ROUNDS rounds in alternating order, then every
round's figures with the spread of each target's rounds. Each target first gets
BENCH_REDIS_WARMUP_RUNS (3) unmeasured redis-benchmark runs of BENCH_REDIS_WARMUP_REQUESTS
(default: as many as the measured run, at most 100000) requests per test, so the middleware's JIT
compilation is not counted. Only part 3: BENCH_PARTS=3.

Part 2 compares the loadgen with memcaslap (-T 2 -c 32) against one memcached: ops/s and the
client's own CPU seconds per request (from wait4 rusage), as ratios; then the loadgen's CPU per
request with Zipf keys (--key-pattern=Z:Z) beside uniform ones (R:R).

Each target of part 1 is measured in BENCH_PROXY_ROUNDS (3) rounds, every other round in reversed
order; the table shows each target's median round. Other knobs: BENCH_SECONDS (20), BENCH_ROUNDS
(2, part 2), BENCH_KEYS (100000), BENCH_PARTS ("1,2,3"),
LOADGEN_JAVA_OPTS, MIDDLEWARE_JAVA_OPTS (default: the local runner's, from cachelab.jvm),
BENCH_RESULTS (where the
output is saved: results/bench/<UTC time>/bench.txt and bench.json). BENCH_BASELINE_JAR: a second
middleware jar (e.g. main's, copied aside before a change) measured in every variant right after
the current one, in parts 1 and 3, as rows named base-t<W>-b<B>, for a before/after comparison in
the same run. A quick A/B of the redis path: BENCH_PARTS=3 BENCH_MIDDLEWARE=2:16
BENCH_BASELINE_JAR=/tmp/before.jar.
A quick A/B of one variant in part 1 only: BENCH_PARTS=1 BENCH_PROXY_ROUNDS=1 BENCH_SECONDS=10
BENCH_MIDDLEWARE=8:1 BENCH_BASELINE_JAR=/tmp/before.jar (about 2 minutes; add BENCH_PERF=1 for
the system calls per request).

Timing results depend on the machine; this is a benchmark, not a test. Standard library only,
plus cachelab.processes (itself standard library only; found through ops/ on sys.path), which
starts and stops every child as the local runner does.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from statistics import median
from typing import Any, TextIO, TypeVar

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "ops") not in sys.path:
    sys.path.insert(0, str(ROOT / "ops"))
from cachelab import jvm  # noqa: E402
from cachelab.processes import ManagedProcess, ProcessError, free_port  # noqa: E402

LOADGEN_JAR = ROOT / "loadgen" / "target" / "loadgen.jar"
MIDDLEWARE_JAR = ROOT / "middleware" / "target" / "middleware.jar"
SECONDS = int(os.environ.get("BENCH_SECONDS", "20"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
KEYS = int(os.environ.get("BENCH_KEYS", "100000"))
# The JVM flags of the image and the local runner (cachelab.jvm: the pom's jib <jvmFlags>, with
# the local heap sizes).
LOADGEN_JAVA_OPTS = os.environ.get(
    "LOADGEN_JAVA_OPTS", " ".join(jvm.flags(ROOT, "loadgen"))
).split()
MIDDLEWARE_JAVA_OPTS = os.environ.get(
    "MIDDLEWARE_JAVA_OPTS", " ".join(jvm.flags(ROOT, "middleware"))
).split()
# Unmeasured load before each measured run, so start-up and JIT compilation are not counted.
WARMUP_SECONDS = int(os.environ.get("BENCH_WARMUP_SECONDS", "5"))
# Middleware variants, as workers:worker-batch pairs; 8:1 is the ASL worker.
MIDDLEWARE_VARIANTS = [
    (int(w), int(b))
    for w, b in (
        v.split(":") for v in os.environ.get("BENCH_MIDDLEWARE", "8:1,8:16,2:16").split(",")
    )
]
# A second jar measured in every variant after the current one (before/after in one run).
_BASELINE = os.environ.get("BENCH_BASELINE_JAR", "")
BASELINE_JAR = Path(_BASELINE) if _BASELINE else None
# Where each run's printed output (bench.txt) and figures (bench.json) are saved.
OUT_BASE = Path(os.environ.get("BENCH_RESULTS", ROOT / "results" / "bench"))
PROXY_ROUNDS = int(os.environ.get("BENCH_PROXY_ROUNDS", "3"))
# The ASL floor: the ASL worker's design in C (scripts/asl-floor/), measured in part 1 unless 0.
FLOOR = os.environ.get("BENCH_FLOOR", "1") != "0"
FLOOR_SOURCE = ROOT / "scripts" / "asl-floor" / "asl-floor.c"
FLOOR_BINARY = ROOT / "target" / "asl-floor" / "asl-floor"
FLOOR_WORKERS = 8  # as the ASL worker's row (-t 8)
# BENCH_PERF=1: one more run per proxy under perf stat, for its system calls per request.
PERF = os.environ.get("BENCH_PERF", "0") == "1"
PERF_SECONDS = int(os.environ.get("BENCH_PERF_SECONDS", "5"))
PARTS = os.environ.get("BENCH_PARTS", "1,2,3").split(",")
REDIS_CLIENTS = int(os.environ.get("BENCH_REDIS_CLIENTS", "50"))
# 800,000 per test (about 9.5 s here): the rounds spread 1.01-1.20x against 1.05-1.48x at 100,000
# (middleware/README.md, "Current figures").
REDIS_REQUESTS = int(os.environ.get("BENCH_REDIS_REQUESTS", "800000"))
# Unmeasured requests per test before each target's measured run. 10,000 (once a tenth of the
# measured run) left C2 compiling during the measured run: 9 % of the middleware's samples;
# three runs of 100,000 leave 0.1 %.
REDIS_WARMUP_REQUESTS = int(
    os.environ.get("BENCH_REDIS_WARMUP_REQUESTS", str(min(REDIS_REQUESTS, 100_000)))
)
# Unmeasured runs before each target's measured one. After one, C2 still compiled for 0.32 of the
# middleware's 4.6 CPU seconds of the measured run (7 %, `perf stat --per-thread`); after three,
# for 0.004 s: each run's SET-then-GET phases and its 50 new connections reach code the compiled
# code had not seen yet.
REDIS_WARMUP_RUNS = int(os.environ.get("BENCH_REDIS_WARMUP_RUNS", "3"))
CLK_TCK = os.sysconf("SC_CLK_TCK")
T = TypeVar("T")


def java() -> str:
    home = (
        os.environ.get("JAVA_HOME")
        or subprocess.run(
            [str(ROOT / "scripts" / "find-jdk.sh")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    return str(Path(home) / "bin" / "java")


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
class Row:
    name: str
    run: ClientRun | None
    proxy_cpu_us: float | None
    server_cpu_us: float
    note: str = ""
    # The proxy's read and write system calls and context switches per request (measured run).
    reads_per_request: float | None = None
    writes_per_request: float | None = None
    switches_per_request: float | None = None
    user_share: float | None = None  # utime / (utime + stime) of the proxy in the measured run
    # BENCH_PERF=1: all its system calls and context switches per request (perf stat, own run).
    perf_syscalls_per_request: float | None = None
    perf_switches_per_request: float | None = None


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
        args=(port, work, f"{name}-perf", [*MEASURE, f"--test-time={PERF_SECONDS + 3}"]),
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


def measured_row(
    name: str,
    port: int,
    work: Path,
    memcached_pid: int,
    proxy_pid: int | None,
    mc_port: int | None = None,
) -> Row:
    # Two warm-up runs: the JIT compiles the steady state during the first; the first run's
    # connections closing and the next run's connecting then hit code paths the compiled code has
    # not seen (uncommon traps, recompilation), which the second run absorbs instead of the
    # measured one (C2 took 1-3 us/req of the measured run after a single warm-up).
    for warmup in range(2 if WARMUP_SECONDS > 0 else 0):
        loadgen(port, work, f"{name}-warmup{warmup}", [*MEASURE, f"--test-time={WARMUP_SECONDS}"])
    counters_before = ProcCounters.of(proxy_pid) if proxy_pid else None
    server_before = cpu_seconds(memcached_pid)
    run = measure(port, work, name)
    server_us = (cpu_seconds(memcached_pid) - server_before) / run.requests * 1e6
    if not proxy_pid or not counters_before:
        return Row(name, run, None, server_us)
    after = ProcCounters.of(proxy_pid)
    proxy_us = (after.cpu_s - counters_before.cpu_s) / run.requests * 1e6
    row = Row(
        name,
        run,
        proxy_us,
        server_us,
        reads_per_request=(after.reads - counters_before.reads) / run.requests,
        writes_per_request=(after.writes - counters_before.writes) / run.requests,
        switches_per_request=(after.switches - counters_before.switches) / run.requests,
    )
    user = after.user_ticks - counters_before.user_ticks
    system = after.system_ticks - counters_before.system_ticks
    row.user_share = user / (user + system) if user + system > 0 else None
    if PERF and mc_port is not None:
        counted = perf_per_request(port, mc_port, work, name, proxy_pid)
        if counted:
            row.perf_syscalls_per_request, row.perf_switches_per_request = counted
    return row


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


def nutcracker_row(mc_port: int, work: Path, memcached_pid: int) -> Row:
    proc, port = start_nutcracker(mc_port, work, redis=False)
    try:
        return measured_row("twemproxy", port, work, memcached_pid, proc.pid, mc_port)
    finally:
        proc.stop(grace_s=10)


def middleware_row(
    mc_port: int,
    work: Path,
    memcached_pid: int,
    workers: int,
    batch: int,
    jar: Path = MIDDLEWARE_JAR,
    label: str = "cachelab",
) -> Row:
    """The middleware with `workers` workers; `batch` is its --worker-batch (1 = the ASL worker)."""
    name = f"{label}-t{workers}-b{batch}"
    if not jar.exists():
        return Row(name, None, None, 0.0, f"skipped: {jar} not built")
    port = free_port()
    cmd = [
        java(), *MIDDLEWARE_JAVA_OPTS, "-jar", str(jar), "-l", "127.0.0.1",
        "-p", str(port), "-t", str(workers),
        "-s", "false", "-m", f"127.0.0.1:{mc_port}", "--worker-batch", str(batch),
    ]  # fmt: skip
    proc = ManagedProcess("middleware", cmd, work / "middleware.log")
    try:
        proc.wait_for_port("127.0.0.1", port, timeout_s=30)
        return measured_row(name, port, work, memcached_pid, proc.pid, mc_port)
    except (RuntimeError, ProcessError) as e:
        return Row(name, None, None, 0.0, f"skipped: {e}")
    finally:
        proc.stop(grace_s=10)


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


def floor_row(mc_port: int, work: Path, memcached_pid: int) -> Row:
    """The ASL floor (scripts/asl-floor/) with FLOOR_WORKERS workers, measured as the middleware."""
    name = f"asl-floor-t{FLOOR_WORKERS}"
    binary = build_floor()
    if isinstance(binary, str):
        return Row(name, None, None, 0.0, binary)
    port = free_port()
    cmd = [
        str(binary), "-l", "127.0.0.1", "-p", str(port), "-t", str(FLOOR_WORKERS),
        "-m", f"127.0.0.1:{mc_port}",
    ]  # fmt: skip
    proc = ManagedProcess("asl-floor", cmd, work / "asl-floor.log")
    try:
        proc.wait_for_port("127.0.0.1", port, timeout_s=30)
        return measured_row(name, port, work, memcached_pid, proc.pid, mc_port)
    except (RuntimeError, ProcessError) as e:
        return Row(name, None, None, 0.0, f"skipped: {e}")
    finally:
        proc.stop(grace_s=10)


def start_memcached(port: int, work: Path) -> ManagedProcess:
    cmd = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "2", "-m", "1024"]
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


def memcaslap(port: int, work: Path) -> tuple[float, int, float]:
    cmd = [
        "memcaslap",
        "-s",
        f"127.0.0.1:{port}",
        "-T",
        "2",
        "-c",
        "32",
        "-t",
        f"{SECONDS}s",
    ]
    status, cpu = run_client(cmd, work / "memcaslap.log")
    text = (work / "memcaslap.log").read_text(errors="replace")
    found = re.findall(r"Run time: [\d.]+s Ops: (\d+) TPS: (\d+)", text)
    if status != 0 or not found:
        raise RuntimeError(f"memcaslap failed (status {status}):\n{text[-2000:]}")
    ops, tps = found[-1]
    return float(tps), int(ops), cpu


def ratio(a: float | None, b: float | None) -> str:
    return f"x{a / b:.2f}" if a and b else "-"


def variant_targets(measure: Callable[..., T]) -> list[tuple[str, Callable[[], T]]]:
    """Each BENCH_MIDDLEWARE variant as a target `cachelab-t<W>-b<B>`, each followed by the
    BENCH_BASELINE_JAR's `base-t<W>-b<B>` (so both see the same background load);
    `measure(workers, batch, jar=..., label=...)` measures one."""
    targets: list[tuple[str, Callable[[], T]]] = []
    for workers, batch in MIDDLEWARE_VARIANTS:
        run = partial(measure, workers, batch)
        targets.append((f"cachelab-t{workers}-b{batch}", run))
        if BASELINE_JAR is not None:
            base = partial(run, jar=BASELINE_JAR, label="base")
            targets.append((f"base-t{workers}-b{batch}", base))
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
            print(f"  round {n + 1}/{PROXY_ROUNDS}: {name}: {describe(result)}", flush=True)
    return runs


def proxy_rounds(mc_port: int, work: Path, memcached_pid: int) -> list[Row]:
    """Part 1's targets in PROXY_ROUNDS alternating rounds; per target the round with the median
    throughput (its CPU figures come from the same run)."""
    targets: list[tuple[str, Callable[[], Row]]] = [
        ("direct", partial(measured_row, "direct", mc_port, work, memcached_pid, None)),
        ("twemproxy", partial(nutcracker_row, mc_port, work, memcached_pid)),
    ]
    if FLOOR:
        targets.append(
            (f"asl-floor-t{FLOOR_WORKERS}", partial(floor_row, mc_port, work, memcached_pid))
        )
    targets += variant_targets(partial(middleware_row, mc_port, work, memcached_pid))
    runs = run_rounds(
        targets, lambda row: f"{row.run.ops_per_s:.0f} ops/s" if row.run else row.note
    )
    return [median_row(runs[name]) for name, _ in targets]


def median_row(rows: list[Row]) -> Row:
    measured = sorted(
        (r for r in rows if r.run is not None),
        key=lambda r: r.run.ops_per_s if r.run else 0,
    )
    if not measured:
        return rows[0]
    return measured[(len(measured) - 1) // 2]


def print_rows(rows: list[Row]) -> None:
    direct = next(r for r in rows if r.name == "direct")
    nut = next((r for r in rows if r.name == "twemproxy"), None)
    header = (
        f"{'target':<17} {'ops/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'proxy CPU us/req':>17}"
        f" {'server CPU us/req':>18} {'client CPU us/req':>18} {'ops/s vs direct':>16}"
        f" {'ops/s vs nutcracker':>20}"
        f" {'proxy CPU vs nutcracker':>24} {'proxy CPU vs server':>20}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        if r.run is None:
            print(f"{r.name:<17} {r.note}")
            continue
        proxy = f"{r.proxy_cpu_us:.2f}" if r.proxy_cpu_us is not None else "-"
        print(
            f"{r.name:<17} {r.run.ops_per_s:>9.0f} {r.run.p50_ms:>7.3f} {r.run.p99_ms:>7.3f}"
            f" {proxy:>17} {r.server_cpu_us:>18.2f} {client_us(r.run):>18.2f}"
            f" {ratio(r.run.ops_per_s, direct.run.ops_per_s if direct.run else None):>16}"
            f" {ratio(r.run.ops_per_s, nut.run.ops_per_s if nut and nut.run else None):>20}"
            f" {ratio(r.proxy_cpu_us, nut.proxy_cpu_us if nut else None):>24}"
            f" {ratio(r.proxy_cpu_us, direct.server_cpu_us):>20}"
        )


def print_per_request(rows: list[Row]) -> None:
    """Each proxy's CPU against twemproxy's and the ASL floor's, and its system calls and context
    switches per request (reads/writes: /proc/<pid>/io of the measured run; perf: BENCH_PERF)."""
    nut = next((r for r in rows if r.name == "twemproxy" and r.run), None)
    floor = next((r for r in rows if r.name.startswith("asl-floor") and r.run), None)
    proxies = [r for r in rows if r.run is not None and r.proxy_cpu_us is not None]
    if not proxies:
        return
    print()
    header = (
        f"{'proxy':<17} {'CPU us/req':>10} {'vs nutcracker':>14} {'vs asl-floor':>13}"
        f" {'user %':>7} {'reads/req':>10} {'writes/req':>11} {'switches/req':>13}"
        f" {'perf syscalls/req':>18} {'perf switches/req':>18}"
    )
    print(header)
    print("-" * len(header))

    def num(value: float | None) -> str:
        return f"{value:.2f}" if value is not None else "-"

    for r in proxies:
        print(
            f"{r.name:<17} {num(r.proxy_cpu_us):>10}"
            f" {ratio(r.proxy_cpu_us, nut.proxy_cpu_us if nut else None):>14}"
            f" {ratio(r.proxy_cpu_us, floor.proxy_cpu_us if floor else None):>13}"
            f" {num(r.user_share * 100 if r.user_share is not None else None):>7}"
            f" {num(r.reads_per_request):>10} {num(r.writes_per_request):>11}"
            f" {num(r.switches_per_request):>13} {num(r.perf_syscalls_per_request):>18}"
            f" {num(r.perf_switches_per_request):>18}"
        )
    print(
        "(user %: the proxy's user time in its CPU time; reads/writes: read-like and write-like"
        " system calls, /proc/<pid>/io; switches: voluntary"
        " + involuntary over all threads; perf columns: BENCH_PERF=1, a separate run;"
        " target: the ASL worker cachelab-t8-b1 at <= x1.30 nutcracker's CPU per request)"
    )


def client_us(run: ClientRun) -> float:
    """The loadgen's CPU per request (its JVM start-up included, so slightly high)."""
    return run.client_cpu_s / run.requests * 1e6


def print_budget(rows: list[Row], share_of_direct: float = 0.8) -> None:
    """What a proxy may spend per request for `share_of_direct` of direct's throughput here.

    Client, server and proxy share this machine's CPUs, so at N ops/s they can spend at most
    cpus / N seconds per request together; what the client and the server spend per request
    through a proxy (measured above) leaves the proxy the rest.
    """
    direct = next(r for r in rows if r.name == "direct")
    proxied = [r for r in rows if r.run is not None and r.proxy_cpu_us is not None]
    if direct.run is None or not proxied:
        return
    cpus = os.cpu_count() or 1
    target = share_of_direct * direct.run.ops_per_s
    total_us = cpus / target * 1e6
    others_us = min(client_us(r.run) + r.server_cpu_us for r in proxied if r.run is not None)
    print(
        f"CPU budget: {share_of_direct:.1f}x direct = {target:.0f} ops/s leaves"
        f" {total_us:.2f} us of CPU per request on {cpus} CPUs for client, server and proxy"
        f" together; client + server take at least {others_us:.2f} us/req behind a proxy,"
        f" so a proxy on the same machine may use at most {total_us - others_us:.2f} us/req"
        " (compare the proxy CPU column)."
    )


def client_comparison(mc_port: int, work: Path) -> dict[str, Any]:
    """Part 2: memcaslap and the loadgen against one memcached; prints and returns the figures."""
    print()
    print(
        "2) clients: one memcached, 2 threads x 32 connections in total,"
        f" {ROUNDS} x {SECONDS} s each"
    )
    # alternate the order each round so a drift in background load hits both tools
    caslap_ops = caslap_seconds = caslap_cpu = 0.0
    pinned_runs: list[ClientRun] = []
    for n in range(ROUNDS):
        if n % 2 == 1:
            pinned_runs.append(measure(mc_port, work, f"loadgen-pinned-{n}"))
        tps, ops, cpu = memcaslap(mc_port, work)
        caslap_ops, caslap_seconds, caslap_cpu = (
            caslap_ops + ops,
            caslap_seconds + ops / tps,
            caslap_cpu + cpu,
        )
        if n % 2 == 0:
            pinned_runs.append(measure(mc_port, work, f"loadgen-pinned-{n}"))
    pinned = combine(pinned_runs)
    plain = measure(mc_port, work, "loadgen-unpinned", pinned=False)
    caslap_tps = caslap_ops / caslap_seconds
    caslap_us = caslap_cpu / caslap_ops * 1e6
    head = ("tool", "ops/s", "requests", "client CPU s", "CPU us/req")
    print(f"{head[0]:<22} {head[1]:>9} {head[2]:>10} {head[3]:>13} {head[4]:>11}")
    print(
        f"{'memcaslap':<22} {caslap_tps:>9.0f} {caslap_ops:>10.0f}"
        f" {caslap_cpu:>13.2f} {caslap_us:>11.2f}"
    )
    for label, lg in (("loadgen --pin-threads", pinned), ("loadgen (unpinned)", plain)):
        print(
            f"{label:<22} {lg.ops_per_s:>9.0f} {lg.requests:>10}"
            f" {lg.client_cpu_s:>13.2f} {client_us(lg):>11.2f}"
        )
    for label, lg in (("pinned", pinned), ("unpinned", plain)):
        print(
            f"loadgen ({label}) / memcaslap: ops/s {ratio(lg.ops_per_s, caslap_tps)},"
            f" CPU per request {ratio(client_us(lg), caslap_us)}"
        )
    print(
        f"(memcaslap and pinned loadgen: {ROUNDS} alternating rounds of {SECONDS} s, summed;"
        " memcaslap pins its threads like --pin-threads; loadgen CPU includes JVM start-up"
        " and JIT; target: ops/s >= x1.00 at CPU per request <= x1.00)"
    )
    return {
        "memcaslap": {
            "ops_per_s": caslap_tps,
            "requests": caslap_ops,
            "client_cpu_s": caslap_cpu,
            "cpu_us_per_request": caslap_us,
        },
        "loadgen_pinned": {**asdict(pinned), "cpu_us_per_request": client_us(pinned)},
        "loadgen_unpinned": {**asdict(plain), "cpu_us_per_request": client_us(plain)},
    }


def key_pattern_cost(mc_port: int, work: Path) -> dict[str, Any]:
    """Part 2, last: the loadgen's CPU per request with Zipf keys (--key-pattern=Z:Z,
    --key-zipf-exp=1) beside uniform keys (R:R), in ROUNDS alternating pinned rounds each."""
    runs: dict[str, list[ClientRun]] = {"R:R": [], "Z:Z": []}
    for n in range(ROUNDS):
        for pattern in ("R:R", "Z:Z") if n % 2 == 0 else ("Z:Z", "R:R"):
            zipf = ["--key-zipf-exp=1"] if "Z" in pattern else []
            name = f"loadgen-keys-{pattern[0]}-{n}"
            extra = [*MEASURE, "--pin-threads", f"--key-pattern={pattern}", *zipf]
            runs[pattern].append(loadgen(mc_port, work, name, [*extra, f"--test-time={SECONDS}"]))
    uniform, zipf_run = combine(runs["R:R"]), combine(runs["Z:Z"])
    print(
        f"loadgen key patterns ({ROUNDS} alternating rounds of {SECONDS} s, pinned):"
        f" R:R {client_us(uniform):.2f} us/req at {uniform.ops_per_s:.0f} ops/s,"
        f" Z:Z (exp 1) {client_us(zipf_run):.2f} us/req at {zipf_run.ops_per_s:.0f} ops/s;"
        f" Z / R CPU per request {ratio(client_us(zipf_run), client_us(uniform))}"
        " (target <= x1.05)"
    )
    return {
        pattern: {**asdict(run), "cpu_us_per_request": client_us(run)}
        for pattern, run in (("R:R", uniform), ("Z:Z", zipf_run))
    }


@dataclass
class RedisRow:
    """One target of part 3: redis-benchmark's GET and SET figures and the proxy's CPU."""

    name: str
    get_ops: float
    set_ops: float
    get_p50_ms: float
    set_p50_ms: float
    proxy_cpu_us: float | None
    note: str = ""
    # The proxy's context switches per request (all threads, /proc) in the measured run, and the
    # time its threads waited for a CPU per request (schedstat).
    switches_per_request: float | None = None
    run_queue_us_per_request: float | None = None
    # redis' commands per read event in the measured run (its INFO stats): how many requests
    # reach redis per write of its clients (1 for direct; a proxy's pipeline depth behind it).
    requests_per_redis_read: float | None = None
    # CPU per request of redis (INFO cpu) and of redis-benchmark (rusage) in the measured run.
    redis_cpu_us: float | None = None
    client_cpu_us: float | None = None


def parse_redis_benchmark_csv(text: str) -> dict[str, tuple[float, float]]:
    """redis-benchmark --csv output: test name -> (requests per second, p50 ms)."""
    rows: dict[str, tuple[float, float]] = {}
    for line in text.splitlines():
        cells = [c.strip('"') for c in line.strip().split('","')]
        if len(cells) >= 5 and cells[0] != "test":
            try:
                rows[cells[0]] = (float(cells[1]), float(cells[4]))
            except ValueError:
                continue
    return rows


def redis_benchmark(
    port: int, work: Path, name: str, requests: int
) -> tuple[dict[str, tuple[float, float]], float]:
    """One redis-benchmark run: test name -> (ops/s, p50 ms), and its CPU seconds."""
    cmd = [
        "redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-t", "get,set",
        "-n", str(requests), "-c", str(REDIS_CLIENTS), "-d", "1024", "-r", str(KEYS), "--csv",
    ]  # fmt: skip
    log = work / f"{name}.csv"
    status, cpu_s = run_client(cmd, log)
    text = log.read_text(errors="replace")
    rows = parse_redis_benchmark_csv(text)
    if status != 0 or not {"GET", "SET"} <= rows.keys():
        raise RuntimeError(f"redis-benchmark ({name}) failed (status {status}):\n{text[-2000:]}")
    return rows, cpu_s


def parse_redis_info(text: str) -> dict[str, str]:
    """`INFO` output (the bulk string's lines `field:value`; `#` section headers skipped)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            key, value = line.split(":", 1)
            fields[key.strip()] = value.strip()
    return fields


@dataclass
class RedisCounters:
    """redis' commands processed, read events and CPU seconds so far (INFO stats, cpu)."""

    commands: int
    reads: int
    cpu_s: float


def redis_counters(port: int) -> RedisCounters | None:
    """redis' counters now, or None if it has no read counter (redis < 6)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO stats cpu\r\n")
        data = b""
        while b"\r\n" not in data:
            data += s.recv(65536) or b"\r\n"
        header, _, body = data.partition(b"\r\n")
        if not header.startswith(b"$"):
            return None
        length = int(header[1:])
        while len(body) < length:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
    info = parse_redis_info(body.decode(errors="replace"))
    if "total_reads_processed" not in info:
        return None
    return RedisCounters(
        int(info["total_commands_processed"]),
        int(info["total_reads_processed"]),
        float(info.get("used_cpu_user", 0)) + float(info.get("used_cpu_sys", 0)),
    )


def redis_row(name: str, port: int, work: Path, proxy_pid: int | None, redis_port: int) -> RedisRow:
    for warmup in range(REDIS_WARMUP_RUNS):
        redis_benchmark(port, work, f"{name}-warmup{warmup}", max(1000, REDIS_WARMUP_REQUESTS))
    counters_before = ProcCounters.of(proxy_pid) if proxy_pid else None
    redis_before = redis_counters(redis_port)
    rows, client_cpu_s = redis_benchmark(port, work, name, REDIS_REQUESTS)
    requests = 2 * REDIS_REQUESTS
    redis_after = redis_counters(redis_port)
    after = ProcCounters.of(proxy_pid) if proxy_pid else None
    (get_ops, get_p50), (set_ops, set_p50) = rows["GET"], rows["SET"]
    row = RedisRow(name, get_ops, set_ops, get_p50, set_p50, None)
    row.client_cpu_us = client_cpu_s / requests * 1e6
    if after and counters_before:
        row.proxy_cpu_us = (after.cpu_s - counters_before.cpu_s) / requests * 1e6
        row.switches_per_request = (after.switches - counters_before.switches) / requests
        waited = after.run_queue_nanos - counters_before.run_queue_nanos
        row.run_queue_us_per_request = waited / requests / 1e3
    if redis_before and redis_after and redis_after.reads > redis_before.reads:
        # redis-benchmark's own CONFIG GET calls at start-up are a few commands among 10^5.
        commands = redis_after.commands - redis_before.commands
        row.requests_per_redis_read = commands / (redis_after.reads - redis_before.reads)
        row.redis_cpu_us = (redis_after.cpu_s - redis_before.cpu_s) / requests * 1e6
    return row


def nutcracker_redis_row(redis_port: int, work: Path) -> RedisRow:
    proc, port = start_nutcracker(redis_port, work, redis=True)
    try:
        return redis_row("twemproxy", port, work, proc.pid, redis_port)
    finally:
        proc.stop(grace_s=10)


def middleware_redis_row(
    redis_port: int,
    work: Path,
    workers: int,
    batch: int,
    jar: Path = MIDDLEWARE_JAR,
    label: str = "cachelab",
) -> RedisRow:
    """The middleware's RESP front end (`jar`) with `workers` workers and --worker-batch `batch`."""
    name = f"{label}-t{workers}-b{batch}"
    if not jar.exists():
        return RedisRow(name, 0, 0, 0, 0, None, f"skipped: {jar} not built")
    port = free_port()
    cmd = [
        java(), *MIDDLEWARE_JAVA_OPTS, "-jar", str(jar), "-l", "127.0.0.1",
        "-p", str(port), "-t", str(workers), "-s", "false", "--protocol", "redis",
        "-m", f"127.0.0.1:{redis_port}", "--worker-batch", str(batch),
    ]  # fmt: skip
    proc = ManagedProcess("middleware (redis)", cmd, work / "middleware-redis.log")
    try:
        proc.wait_for_port("127.0.0.1", port, timeout_s=30)
        return redis_row(name, port, work, proc.pid, redis_port)
    except (RuntimeError, ProcessError) as e:
        return RedisRow(name, 0, 0, 0, 0, None, f"skipped: {e}")
    finally:
        proc.stop(grace_s=10)


def start_redis(port: int, work: Path) -> ManagedProcess:
    cmd = [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", str(work),
    ]  # fmt: skip
    proc = ManagedProcess("redis-server", cmd, work / "redis-server.log")
    proc.wait_for_port("127.0.0.1", port, timeout_s=30)
    return proc


def median_redis_row(rows: list[RedisRow]) -> RedisRow:
    """The round with the median GET throughput (its SET and CPU figures from the same round)."""
    measured = sorted((r for r in rows if not r.note), key=lambda r: r.get_ops)
    return measured[(len(measured) - 1) // 2] if measured else rows[0]


def redis_targets(redis_port: int, work: Path) -> list[tuple[str, Callable[[], RedisRow]]]:
    """Part 3's targets in measuring order: direct, twemproxy, then each middleware variant with
    its baseline right after it."""
    targets: list[tuple[str, Callable[[], RedisRow]]] = [
        ("direct", partial(redis_row, "direct", redis_port, work, None, redis_port)),
        ("twemproxy", partial(nutcracker_redis_row, redis_port, work)),
    ]
    return targets + variant_targets(partial(middleware_redis_row, redis_port, work))


def redis_proxies(work: Path) -> dict[str, list[RedisRow]]:
    """Part 3: one redis-server; direct, twemproxy (redis: true), the middleware's variants (and
    the baseline jar's). Prints the median rounds; returns every target's rounds."""
    print()
    print(
        f"3) redis: redis-benchmark -t get,set -c {REDIS_CLIENTS} -n {REDIS_REQUESTS} -d 1024"
        f" -r {KEYS}, one redis-server; median of {PROXY_ROUNDS} rounds"
    )
    redis_port = free_port()
    redis = start_redis(redis_port, work)
    try:
        runs = run_rounds(
            redis_targets(redis_port, work),
            lambda row: row.note or f"GET {row.get_ops:.0f}/s, SET {row.set_ops:.0f}/s",
        )
    finally:
        redis.stop(grace_s=10)
    print_redis_rows([median_redis_row(rounds) for rounds in runs.values()])
    print_redis_rounds(runs)
    return runs


def print_redis_rows(rows: list[RedisRow]) -> None:
    direct = next(r for r in rows if r.name == "direct")
    nut = next((r for r in rows if r.name == "twemproxy" and not r.note), None)
    header = (
        f"{'target':<17} {'GET ops/s':>10} {'SET ops/s':>10} {'GET p50':>8} {'SET p50':>8}"
        f" {'proxy CPU us/req':>17} {'GET vs direct':>14} {'SET vs direct':>14}"
        f" {'GET vs nutcracker':>18} {'SET vs nutcracker':>18} {'CPU vs nutcracker':>18}"
        f" {'switches/req':>13} {'CPU wait us/req':>16} {'req/redis read':>15}"
        f" {'redis CPU us/req':>17} {'client CPU us/req':>18}"
    )
    print(header)
    print("-" * len(header))

    def num(value: float | None) -> str:
        return f"{value:.2f}" if value is not None else "-"

    for r in rows:
        if r.note:
            print(f"{r.name:<17} {r.note}")
            continue
        print(
            f"{r.name:<17} {r.get_ops:>10.0f} {r.set_ops:>10.0f} {r.get_p50_ms:>8.3f}"
            f" {r.set_p50_ms:>8.3f} {num(r.proxy_cpu_us):>17}"
            f" {ratio(r.get_ops, direct.get_ops):>14} {ratio(r.set_ops, direct.set_ops):>14}"
            f" {ratio(r.get_ops, nut.get_ops if nut else None):>18}"
            f" {ratio(r.set_ops, nut.set_ops if nut else None):>18}"
            f" {ratio(r.proxy_cpu_us, nut.proxy_cpu_us if nut else None):>18}"
            f" {num(r.switches_per_request):>13} {num(r.run_queue_us_per_request):>16}"
            f" {num(r.requests_per_redis_read):>15} {num(r.redis_cpu_us):>17}"
            f" {num(r.client_cpu_us):>18}"
        )
    print(
        "(switches: the proxy's context switches per request, all threads; CPU wait: the time"
        " its threads waited runnable for a CPU per request (schedstat); req/redis read:"
        " redis' commands per read event, the requests each write to redis carried; redis and"
        " client CPU: redis-server's (INFO cpu) and redis-benchmark's (rusage) per request;"
        " target: the middleware's GET and SET ops/s >= x1.00 nutcracker's redis mode)"
    )


def print_redis_rounds(runs: dict[str, list[RedisRow]]) -> None:
    """Every round's GET / SET ops/s per target with the spread of its GET rounds (max / min);
    then, per middleware target, its GET and SET against twemproxy's round of the same number
    (measured next to it or nearly) and the medians of those ratios, which a drift in the
    background load between rounds moves less than the ratio of the two medians."""
    print("rounds (GET / SET ops/s, in round order; spread: max / min GET):")
    for name, rounds in runs.items():
        measured = [r for r in rounds if not r.note]
        if not measured:
            continue
        gets = [r.get_ops for r in measured]
        cells = ", ".join(f"{r.get_ops:.0f} / {r.set_ops:.0f}" for r in measured)
        print(f"  {name:<17} {cells}  (spread x{max(gets) / min(gets):.2f})")
    nut = runs.get("twemproxy", [])
    for name, rounds in runs.items():
        if name in ("direct", "twemproxy"):
            continue
        pairs = [(r, n) for r, n in zip(rounds, nut, strict=False) if not r.note and not n.note]
        if not pairs:
            continue
        gets = [r.get_ops / n.get_ops for r, n in pairs]
        sets = [r.set_ops / n.set_ops for r, n in pairs]
        cells = ", ".join(f"{g:.2f} / {s:.2f}" for g, s in zip(gets, sets, strict=True))
        print(
            f"  {name:<17} vs twemproxy per round (GET / SET): {cells};"
            f" medians x{median(gets):.2f} / x{median(sets):.2f}"
        )


def memcached_parts(record: dict[str, Any], work: Path) -> None:
    """Parts 1 and 2 (as BENCH_PARTS selects), on one preloaded memcached; figures into `record`."""
    mc_port = free_port()
    mc = start_memcached(mc_port, work)
    try:
        preload(mc_port, work)
        if "1" in PARTS:
            print()
            print(
                "1) proxies: loadgen --pin-threads, 2 threads x 16 clients, 1 KiB values,"
                f" --ratio=1:9, {SECONDS} s each, {KEYS} preloaded keys, one memcached"
                f" (-t 2); median of {PROXY_ROUNDS} rounds"
            )
            rows = proxy_rounds(mc_port, work, mc.pid)
            print_rows(rows)
            print_per_request(rows)
            print_budget(rows)
            record["proxies"] = [asdict(r) for r in rows]
        if "2" in PARTS:
            record["clients"] = client_comparison(mc_port, work)
            record["key_patterns"] = key_pattern_cost(mc_port, work)
    finally:
        mc.stop(grace_s=10)


class Tee(io.TextIOBase):
    """Writes to the terminal and to a file (the bench's saved output)."""

    def __init__(self, terminal: TextIO, file: TextIO) -> None:
        self.terminal = terminal
        self.file = file

    def write(self, text: str) -> int:
        self.terminal.write(text)
        self.file.write(text)
        return len(text)

    def flush(self) -> None:
        self.terminal.flush()
        self.file.flush()


def main() -> int:
    for tool in ("memcached", "nutcracker", "memcaslap", "redis-server", "redis-benchmark"):
        if shutil.which(tool) is None:
            print(f"error: {tool} not found (run `make deps`)", file=sys.stderr)
            return 1
    if not LOADGEN_JAR.exists() and {"1", "2"} & set(PARTS):
        print(f"error: {LOADGEN_JAR} not built (run `make build`)", file=sys.stderr)
        return 1
    out_dir = OUT_BASE / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out_dir.mkdir(parents=True, exist_ok=True)
    terminal = sys.stdout
    with (out_dir / "bench.txt").open("w", encoding="utf-8") as text:
        sys.stdout = Tee(terminal, text)
        try:
            record = run_bench()
        finally:
            sys.stdout = terminal
    (out_dir / "bench.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"saved: {out_dir}/bench.txt and bench.json")
    return 0


def run_bench() -> dict[str, Any]:
    """Both parts (as BENCH_PARTS selects); returns what the JSON file records."""
    record: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
        "seconds": SECONDS,
        "warmup_seconds": WARMUP_SECONDS,
        "proxy_rounds": PROXY_ROUNDS,
        "client_rounds": ROUNDS,
        "loadgen_java_opts": LOADGEN_JAVA_OPTS,
        "middleware_java_opts": MIDDLEWARE_JAVA_OPTS,
        "baseline_jar": str(BASELINE_JAR) if BASELINE_JAR else None,
        "redis_requests": REDIS_REQUESTS,
        "redis_warmup_requests": REDIS_WARMUP_REQUESTS,
    }
    print(
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
        " (shared machine: numbers are noisy; compare ratios from the same run)"
    )
    print(f"loadgen JVM options: {' '.join(LOADGEN_JAVA_OPTS) or '(none)'}")
    with tempfile.TemporaryDirectory(prefix="cachelab-bench-") as tmp:
        work = Path(tmp)
        if {"1", "2"} & set(PARTS):
            memcached_parts(record, work)
        if "3" in PARTS:
            runs = redis_proxies(work)
            record["redis_proxies"] = [asdict(median_redis_row(r)) for r in runs.values()]
            record["redis_rounds"] = {name: [asdict(r) for r in rs] for name, rs in runs.items()}
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    record["load_average_at_end"] = os.getloadavg()[0]
    return record


if __name__ == "__main__":
    sys.exit(main())
