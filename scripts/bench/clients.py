"""Part 2: the cachelab loadgen against memcaslap on one memcached (ops/s, client CPU)."""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.config import (
    ROUNDS,
    SECONDS,
)
from bench.measure import (
    MEASURE,
    ClientRun,
    client_us,
    combine,
    loadgen,
    measure,
    ratio,
    run_client,
)


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
