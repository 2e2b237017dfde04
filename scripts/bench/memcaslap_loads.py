"""Part 4: memcaslap loads (connections, get share, value size) through twemproxy and the
middleware's variants in front of one memcached: throughput, and the proxy's CPU per request
against twemproxy's and against memcached's own."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from cachelab.processes import ManagedProcess, ProcessError, free_port

from bench.config import (
    BASELINE_JAR,
    MEMCASLAP_LOADS,
    MEMCASLAP_MEMCACHED_MB,
    MEMCASLAP_ROUNDS,
    MEMCASLAP_SECONDS,
    MEMCASLAP_VARIANTS,
    MEMCASLAP_WARMUP_SECONDS,
    MEMCASLAP_WINDOW,
    MIDDLEWARE_JAR,
)
from bench.measure import cpu_seconds, run_client
from bench.servers import middleware_command, start_memcached, start_nutcracker
from bench.variants import variant_of


@dataclass(frozen=True)
class CaslapLoad:
    """One memcaslap load: connections (-c, over 2 threads), percent of gets, value bytes."""

    connections: int
    get_percent: int
    value_bytes: int

    @property
    def label(self) -> str:
        mix = (
            "read-only"
            if self.get_percent == 100
            else f"{self.get_percent}:{100 - self.get_percent}"
        )
        size = (
            f"{self.value_bytes // 1024} KiB"
            if self.value_bytes >= 1024
            else f"{self.value_bytes} B"
        )
        return f"memcaslap -c {self.connections}, {mix}, {size}"


@dataclass
class CaslapRun:
    """One target on one load in one round (ops/s 0 and a note if it failed)."""

    target: str
    load: str
    ops_per_s: float
    requests: int
    proxy_cpu_us: float | None
    server_cpu_us: float
    note: str = ""


def parse_loads(spec: str) -> list[CaslapLoad]:
    """`connections:get-percent:value-bytes` entries, comma-separated (BENCH_MEMCASLAP_LOADS)."""
    loads = []
    for entry in spec.split(","):
        connections, gets, size = (int(x) for x in entry.split(":"))
        loads.append(CaslapLoad(connections, gets, size))
    return loads


def memcaslap_run(
    port: int, work: Path, load: CaslapLoad, seconds: int, name: str
) -> tuple[float, int]:
    """memcaslap against `port` for `seconds`; returns (ops/s, operations)."""
    config = work / f"memcaslap-{load.get_percent}-{load.value_bytes}.cfg"
    set_share = (100 - load.get_percent) / 100
    config.write_text(
        "key\n64 64 1\n"
        f"value\n{load.value_bytes} {load.value_bytes} 1\n"
        f"cmd\n0 {set_share:.2f}\n1 {1 - set_share:.2f}\n"
    )
    log = work / f"{name}.log"
    cmd = [
        "memcaslap", "-s", f"127.0.0.1:{port}", "-T", "2", "-c", str(load.connections),
        "-w", MEMCASLAP_WINDOW, "-F", str(config), "-t", f"{seconds}s",
    ]  # fmt: skip
    status, _ = run_client(cmd, log)
    text = log.read_text(errors="replace")
    found = re.findall(r"Run time: [\d.]+s Ops: (\d+) TPS: (\d+)", text)
    if status != 0 or not found:
        raise RuntimeError(f"memcaslap failed (status {status}): {text[-500:]}")
    ops, tps = found[-1]
    return float(tps), int(ops)


def measure_loads(
    target: str, port: int, proxy_pid: int | None, mc_pid: int, work: Path, loads: list[CaslapLoad]
) -> list[CaslapRun]:
    """Every load through one started target: a warm-up run, then the measured one."""
    runs = []
    for load in loads:
        name = f"caslap-{target}-{load.connections}-{load.get_percent}-{load.value_bytes}"
        try:
            if MEMCASLAP_WARMUP_SECONDS > 0:
                memcaslap_run(port, work, load, MEMCASLAP_WARMUP_SECONDS, name + "-warmup")
            proxy_before = cpu_seconds(proxy_pid) if proxy_pid else 0.0
            server_before = cpu_seconds(mc_pid)
            ops_per_s, ops = memcaslap_run(port, work, load, MEMCASLAP_SECONDS, name)
            server_us = (cpu_seconds(mc_pid) - server_before) / ops * 1e6
            proxy_us = (cpu_seconds(proxy_pid) - proxy_before) / ops * 1e6 if proxy_pid else None
            runs.append(CaslapRun(target, load.label, ops_per_s, ops, proxy_us, server_us))
        except (RuntimeError, ProcessError, OSError) as e:
            runs.append(CaslapRun(target, load.label, 0.0, 0, None, 0.0, f"failed: {e}"))
    return runs


def target_runs(
    target: str, mc_port: int, mc_pid: int, work: Path, loads: list[CaslapLoad]
) -> list[CaslapRun]:
    """Starts `target` (twemproxy, cachelab-t<W>-b<B>[-e<L>], or base-... for the
    BENCH_BASELINE_JAR's), measures every load, stops it."""
    if target == "twemproxy":
        proc, port = start_nutcracker(mc_port, work, redis=False)
    else:
        port = free_port()
        jar = BASELINE_JAR if target.startswith("base-") and BASELINE_JAR else MIDDLEWARE_JAR
        cmd = middleware_command(jar, port, variant_of(target), mc_port)
        proc = ManagedProcess("middleware", cmd, work / f"caslap-{target}.log")
        try:
            proc.wait_for_port("127.0.0.1", port, timeout_s=30)
        except BaseException:
            proc.stop(grace_s=10)
            raise
    try:
        return measure_loads(target, port, proc.pid, mc_pid, work, loads)
    finally:
        proc.stop(grace_s=10)


def caslap_rounds(work: Path) -> dict[str, dict[str, list[CaslapRun]]]:
    """Part 4: MEMCASLAP_ROUNDS rounds (targets and loads in reversed order every other round)
    on a memcached of its own; per load label, each target's runs in round order."""
    loads = parse_loads(MEMCASLAP_LOADS)
    targets = ["twemproxy"]
    for variant in MEMCASLAP_VARIANTS:
        targets.append(variant.name())
        if BASELINE_JAR is not None:
            targets.append(variant.name("base"))  # right after it: the same background load
    print()
    print(
        f"4) memcaslap loads: -T 2, -w {MEMCASLAP_WINDOW}, {MEMCASLAP_SECONDS} s each after"
        f" {MEMCASLAP_WARMUP_SECONDS} s unmeasured, one memcached (-t 2); {len(loads)} loads,"
        f" median of {MEMCASLAP_ROUNDS} rounds"
    )
    by_load: dict[str, dict[str, list[CaslapRun]]] = {
        load.label: {t: [] for t in targets} for load in loads
    }
    mc_port = free_port()
    mc = start_memcached(mc_port, work, memory_mb=MEMCASLAP_MEMCACHED_MB)
    try:
        for n in range(MEMCASLAP_ROUNDS):
            order = targets if n % 2 == 0 else targets[::-1]
            round_loads = loads if n % 2 == 0 else loads[::-1]
            for target in order:
                for run in target_runs(target, mc_port, mc.pid, work, round_loads):
                    by_load[run.load][target].append(run)
                    shown = run.note or f"{run.ops_per_s:.0f} ops/s"
                    print(
                        f"  round {n + 1}/{MEMCASLAP_ROUNDS}: {target}: {run.load}: {shown}",
                        flush=True,
                    )
    finally:
        mc.stop(grace_s=10)
    print_caslap(by_load)
    return by_load


def median_run(runs: list[CaslapRun]) -> CaslapRun | None:
    measured = sorted((r for r in runs if not r.note), key=lambda r: r.ops_per_s)
    return measured[(len(measured) - 1) // 2] if measured else None


def per_round_ratios(runs: list[CaslapRun], base: list[CaslapRun]) -> list[float]:
    """ops/s against the base's run of the same round."""
    return [
        r.ops_per_s / b.ops_per_s
        for r, b in zip(runs, base, strict=False)
        if not r.note and not b.note
    ]


def cpu_ratio(runs: list[CaslapRun], base: list[CaslapRun]) -> float | None:
    """Median CPU per request against the base's median."""
    mine = [r.proxy_cpu_us for r in runs if r.proxy_cpu_us is not None]
    theirs = [b.proxy_cpu_us for b in base if b.proxy_cpu_us is not None]
    return median(mine) / median(theirs) if mine and theirs else None


def print_caslap(by_load: dict[str, dict[str, list[CaslapRun]]]) -> None:
    header = (
        f"{'load':<36} {'target':<18} {'ops/s':>9} {'proxy CPU us/req':>17}"
        f" {'memcached CPU us/req':>21} {'proxy / memcached CPU':>22}"
        f" {'ops/s vs twemproxy (rounds)':>34} {'CPU vs twemproxy':>17}"
    )
    print(header)
    print("-" * len(header))
    for label, by_target in by_load.items():
        nut = by_target.get("twemproxy", [])
        for target, runs in by_target.items():
            row = median_run(runs)
            if row is None:
                print(f"{label:<36} {target:<18} {runs[0].note if runs else 'not run'}")
                continue
            ratios = per_round_ratios(runs, nut)
            shown = (
                f"x{median(ratios):.2f} ({' / '.join(f'{x:.2f}' for x in ratios)})"
                if ratios
                else "-"
            )
            proxy = f"{row.proxy_cpu_us:.2f}" if row.proxy_cpu_us is not None else "-"
            own = (
                f"x{row.proxy_cpu_us / row.server_cpu_us:.2f}"
                if row.proxy_cpu_us is not None and row.server_cpu_us > 0
                else "-"
            )
            cpu = cpu_ratio(runs, nut)
            print(
                f"{label:<36} {target:<18} {row.ops_per_s:>9.0f} {proxy:>17}"
                f" {row.server_cpu_us:>21.2f} {own:>22} {shown:>34}"
                f" {(f'x{cpu:.2f}' if cpu else '-'):>17}"
            )
    print(
        "(ops/s: memcaslap's TPS, its window's preload of sets included; proxy and memcached CPU:"
        " utime + stime over the measured run per operation; ops/s vs twemproxy: median of the"
        " per-round ratios; target: the event loops (-t 1 --worker-batch 16 --event-loops 2) at"
        " >= x1.30 twemproxy's ops/s at <= x0.85 its CPU per request)"
    )
