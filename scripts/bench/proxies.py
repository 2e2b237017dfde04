"""Part 1: proxies in front of one memcached (direct, twemproxy, the ASL floor, the
middleware's variants): throughput, latency, CPU and system calls per request."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from cachelab.processes import ManagedProcess, ProcessError, free_port

from bench.config import (
    FLOOR,
    FLOOR_WORKERS,
    MIDDLEWARE_JAR,
    PERF,
    WARMUP_SECONDS,
)
from bench.measure import (
    MEASURE,
    ClientRun,
    ProcCounters,
    client_us,
    cpu_seconds,
    loadgen,
    measure,
    num,
    perf_per_request,
    ratio,
    run_rounds,
    variant_targets,
)
from bench.servers import (
    build_floor,
    middleware_command,
    start_nutcracker,
)
from bench.variants import Variant


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
        loadgen(
            port,
            work,
            f"{name}-warmup{warmup}",
            [*MEASURE, f"--test-time={WARMUP_SECONDS}"],
        )
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
    variant: Variant,
    jar: Path = MIDDLEWARE_JAR,
    label: str = "cachelab",
) -> Row:
    """The middleware `jar` in `variant` (-t 8 --worker-batch 1: the ASL worker)."""
    name = variant.name(label)
    if not jar.exists():
        return Row(name, None, None, 0.0, f"skipped: {jar} not built")
    port = free_port()
    cmd = middleware_command(jar, port, variant, mc_port)
    return started_row(name, "middleware", cmd, port, mc_port, work, memcached_pid)


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
    return started_row(name, "asl-floor", cmd, port, mc_port, work, memcached_pid)


def started_row(
    name: str,
    process: str,
    cmd: list[str],
    port: int,
    mc_port: int,
    work: Path,
    memcached_pid: int,
) -> Row:
    """Starts a proxy (`cmd`, listening on `port`), measures it as `name` and stops it."""
    proc = ManagedProcess(process, cmd, work / f"{process}.log")
    try:
        proc.wait_for_port("127.0.0.1", port, timeout_s=30)
        return measured_row(name, port, work, memcached_pid, proc.pid, mc_port)
    except (RuntimeError, ProcessError) as e:
        return Row(name, None, None, 0.0, f"skipped: {e}")
    finally:
        proc.stop(grace_s=10)


def proxy_rounds(mc_port: int, work: Path, memcached_pid: int) -> list[Row]:
    """Part 1's targets in PROXY_ROUNDS alternating rounds; per target the round with the median
    throughput (its CPU figures come from the same run)."""
    targets: list[tuple[str, Callable[[], Row]]] = [
        ("direct", partial(measured_row, "direct", mc_port, work, memcached_pid, None)),
        ("twemproxy", partial(nutcracker_row, mc_port, work, memcached_pid)),
    ]
    if FLOOR:
        targets.append(
            (
                f"asl-floor-t{FLOOR_WORKERS}",
                partial(floor_row, mc_port, work, memcached_pid),
            )
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
        f"{'target':<18} {'ops/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'proxy CPU us/req':>17}"
        f" {'server CPU us/req':>18} {'client CPU us/req':>18} {'ops/s vs direct':>16}"
        f" {'ops/s vs nutcracker':>20}"
        f" {'proxy CPU vs nutcracker':>24} {'proxy CPU vs server':>20}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        if r.run is None:
            print(f"{r.name:<18} {r.note}")
            continue
        proxy = f"{r.proxy_cpu_us:.2f}" if r.proxy_cpu_us is not None else "-"
        print(
            f"{r.name:<18} {r.run.ops_per_s:>9.0f} {r.run.p50_ms:>7.3f} {r.run.p99_ms:>7.3f}"
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
        f"{'proxy':<18} {'CPU us/req':>10} {'vs nutcracker':>14} {'vs asl-floor':>13}"
        f" {'user %':>7} {'reads/req':>10} {'writes/req':>11} {'switches/req':>13}"
        f" {'perf syscalls/req':>18} {'perf switches/req':>18}"
    )
    print(header)
    print("-" * len(header))

    for r in proxies:
        print(
            f"{r.name:<18} {num(r.proxy_cpu_us):>10}"
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
