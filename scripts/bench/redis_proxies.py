"""Part 3: redis-benchmark against one redis-server directly, through twemproxy's redis
mode and through the middleware's RESP front end."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from statistics import median

from cachelab.processes import ManagedProcess, ProcessError, free_port

from bench.config import (
    KEYS,
    MIDDLEWARE_JAR,
    PROXY_ROUNDS,
    REDIS_CLIENTS,
    REDIS_LOADS,
    REDIS_REQUESTS,
    REDIS_WARMUP_REQUESTS,
    REDIS_WARMUP_RUNS,
)
from bench.measure import (
    ProcCounters,
    num,
    ratio,
    run_client,
    run_rounds,
    variant_targets,
)
from bench.servers import (
    middleware_command,
    start_nutcracker,
    start_redis,
)
from bench.variants import Variant


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


@dataclass(frozen=True)
class RedisLoad:
    """One redis-benchmark load: value size (-d) and requests in flight per connection (-P)."""

    value_bytes: int = 1024
    pipeline: int = 1

    @property
    def label(self) -> str:
        return f"-d {self.value_bytes} -P {self.pipeline}"


def redis_benchmark(
    port: int, work: Path, name: str, requests: int, load: RedisLoad
) -> tuple[dict[str, tuple[float, float]], float]:
    """One redis-benchmark run: test name -> (ops/s, p50 ms), and its CPU seconds."""
    cmd = [
        "redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-t", "get,set",
        "-n", str(requests), "-c", str(REDIS_CLIENTS), "-d", str(load.value_bytes),
        "-P", str(load.pipeline), "-r", str(KEYS), "--csv",
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


def redis_row(
    name: str,
    port: int,
    work: Path,
    proxy_pid: int | None,
    redis_port: int,
    load: RedisLoad = RedisLoad(),
) -> RedisRow:
    for warmup in range(REDIS_WARMUP_RUNS):
        warmup_requests = max(1000, REDIS_WARMUP_REQUESTS)
        redis_benchmark(port, work, f"{name}-warmup{warmup}", warmup_requests, load)
    counters_before = ProcCounters.of(proxy_pid) if proxy_pid else None
    redis_before = redis_counters(redis_port)
    rows, client_cpu_s = redis_benchmark(port, work, name, REDIS_REQUESTS, load)
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


def nutcracker_redis_row(redis_port: int, work: Path, load: RedisLoad = RedisLoad()) -> RedisRow:
    proc, port = start_nutcracker(redis_port, work, redis=True)
    try:
        return redis_row("twemproxy", port, work, proc.pid, redis_port, load)
    finally:
        proc.stop(grace_s=10)


def middleware_redis_row(
    redis_port: int,
    work: Path,
    variant: Variant,
    jar: Path = MIDDLEWARE_JAR,
    label: str = "cachelab",
    load: RedisLoad = RedisLoad(),
) -> RedisRow:
    """The middleware's RESP front end (`jar`) in `variant`."""
    name = variant.name(label)
    if not jar.exists():
        return RedisRow(name, 0, 0, 0, 0, None, f"skipped: {jar} not built")
    port = free_port()
    cmd = middleware_command(jar, port, variant, redis_port, "--protocol", "redis")
    proc = ManagedProcess("middleware (redis)", cmd, work / "middleware-redis.log")
    try:
        proc.wait_for_port("127.0.0.1", port, timeout_s=30)
        return redis_row(name, port, work, proc.pid, redis_port, load)
    except (RuntimeError, ProcessError) as e:
        return RedisRow(name, 0, 0, 0, 0, None, f"skipped: {e}")
    finally:
        proc.stop(grace_s=10)


def median_redis_row(rows: list[RedisRow]) -> RedisRow:
    """The round with the median GET throughput (its SET and CPU figures from the same round)."""
    measured = sorted((r for r in rows if not r.note), key=lambda r: r.get_ops)
    return measured[(len(measured) - 1) // 2] if measured else rows[0]


def redis_targets(
    redis_port: int, work: Path, load: RedisLoad = RedisLoad()
) -> list[tuple[str, Callable[[], RedisRow]]]:
    """Part 3's targets in measuring order: direct, twemproxy, then each middleware variant with
    its baseline right after it."""
    targets: list[tuple[str, Callable[[], RedisRow]]] = [
        (
            "direct",
            partial(redis_row, "direct", redis_port, work, None, redis_port, load),
        ),
        ("twemproxy", partial(nutcracker_redis_row, redis_port, work, load)),
    ]
    return targets + variant_targets(partial(middleware_redis_row, redis_port, work, load=load))


def redis_proxies(work: Path) -> dict[str, dict[str, list[RedisRow]]]:
    """Part 3: one redis-server; direct, twemproxy (redis: true), the middleware's variants (and
    the baseline jar's), under each of BENCH_REDIS_LOADS. Prints the median rounds; returns every
    target's rounds per load (keyed by the load's label)."""
    runs: dict[str, dict[str, list[RedisRow]]] = {}
    redis_port = free_port()
    redis = start_redis(redis_port, work)
    try:
        for value_bytes, pipeline in REDIS_LOADS:
            load = RedisLoad(value_bytes, pipeline)
            print()
            print(
                f"3) redis: redis-benchmark -t get,set -c {REDIS_CLIENTS} -n {REDIS_REQUESTS}"
                f" {load.label} -r {KEYS}, one redis-server; median of {PROXY_ROUNDS} rounds"
            )
            runs[load.label] = run_rounds(
                redis_targets(redis_port, work, load),
                lambda row: row.note or f"GET {row.get_ops:.0f}/s, SET {row.set_ops:.0f}/s",
            )
            print_redis_rows([median_redis_row(rounds) for rounds in runs[load.label].values()])
            print_redis_rounds(runs[load.label])
    finally:
        redis.stop(grace_s=10)
    return runs


def print_redis_rows(rows: list[RedisRow]) -> None:
    direct = next(r for r in rows if r.name == "direct")
    nut = next((r for r in rows if r.name == "twemproxy" and not r.note), None)
    header = (
        f"{'target':<18} {'GET ops/s':>10} {'SET ops/s':>10} {'GET p50':>8} {'SET p50':>8}"
        f" {'proxy CPU us/req':>17} {'GET vs direct':>14} {'SET vs direct':>14}"
        f" {'GET vs nutcracker':>18} {'SET vs nutcracker':>18} {'CPU vs nutcracker':>18}"
        f" {'switches/req':>13} {'CPU wait us/req':>16} {'req/redis read':>15}"
        f" {'redis CPU us/req':>17} {'client CPU us/req':>18}"
    )
    print(header)
    print("-" * len(header))

    for r in rows:
        if r.note:
            print(f"{r.name:<18} {r.note}")
            continue
        print(
            f"{r.name:<18} {r.get_ops:>10.0f} {r.set_ops:>10.0f} {r.get_p50_ms:>8.3f}"
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
        " target: the event loops' (-t 1 --worker-batch 16 --event-loops 2) GET and SET ops/s"
        " >= x1.00 nutcracker's redis mode)"
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
        print(f"  {name:<18} {cells}  (spread x{max(gets) / min(gets):.2f})")
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
            f"  {name:<18} vs twemproxy per round (GET / SET): {cells};"
            f" medians x{median(gets):.2f} / x{median(sets):.2f}"
        )
