"""`make bench`: runs the parts BENCH_PARTS selects and saves their output and figures."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from cachelab.processes import free_port

from bench.added_latency import added_latency, save_table
from bench.clients import (
    client_comparison,
    key_pattern_cost,
)
from bench.config import (
    BASELINE_JAR,
    KEYS,
    LOADGEN_JAR,
    LOADGEN_JAVA_OPTS,
    MIDDLEWARE_JAVA_OPTS,
    OUT_BASE,
    PARTS,
    PROXY_ROUNDS,
    QUICK,
    REDIS_LOADS,
    REDIS_REQUESTS,
    REDIS_WARMUP_REQUESTS,
    ROUNDS,
    SECONDS,
    WARMUP_SECONDS,
)
from bench.memcaslap_loads import caslap_rounds
from bench.proxies import (
    Row,
    print_budget,
    print_per_request,
    print_rows,
    proxy_rounds,
)
from bench.redis_proxies import (
    median_redis_row,
    redis_proxies,
)
from bench.servers import (
    preload,
    start_memcached,
)
from bench.summary import (
    PERFORMANCE_DOC,
    Target,
    caslap_targets,
    memcached_targets,
    redis_targets,
    rewrite_section,
    section,
    targets_table,
)


def memcached_parts(record: dict[str, Any], work: Path) -> list[Row]:
    """Parts 1 and 2 (as BENCH_PARTS selects), on one preloaded memcached; figures into `record`;
    returns part 1's median rows."""
    rows: list[Row] = []
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
    return rows


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
    for tool in (
        "memcached",
        "nutcracker",
        "memcaslap",
        "redis-server",
        "redis-benchmark",
    ):
        if shutil.which(tool) is None:
            print(f"error: {tool} not found (run `make deps`)", file=sys.stderr)
            return 1
    if not LOADGEN_JAR.exists() and {"1", "2", "added-latency"} & set(PARTS):
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
    saved = "bench.txt and bench.json"
    if "added_latency" in record:
        save_table(out_dir, record["added_latency"])
        saved = "bench.txt, bench.json and added-latency.md"
    print(f"saved: {out_dir}/{saved}")
    full = set(PARTS) >= {"1", "2", "3", "4"} and not QUICK
    if full and os.environ.get("BENCH_DOC", "1") != "0":
        output = (out_dir / "bench.txt").read_text(encoding="utf-8")
        loads = [record["load_average_at_start"], record["load_average_at_end"]]
        latest = section(out_dir.name, record["targets_table"], output, loads)
        rewrite_section(PERFORMANCE_DOC, latest)
        print(f"rewritten: {PERFORMANCE_DOC} (its latest-run section)")
    else:
        print(f"{PERFORMANCE_DOC} not rewritten (a partial or quick run, or BENCH_DOC=0)")
    return 0


def run_bench() -> dict[str, Any]:
    """The parts BENCH_PARTS selects; returns what the JSON file records."""
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
        "redis_loads": [f"-d {d} -P {p}" for d, p in REDIS_LOADS],
        "quick": QUICK,
    }
    print(
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
        " (shared machine: numbers are noisy; compare ratios from the same run)"
    )
    print(f"loadgen JVM options: {' '.join(LOADGEN_JAVA_OPTS) or '(none)'}")
    with tempfile.TemporaryDirectory(prefix="cachelab-bench-") as tmp:
        work = Path(tmp)
        targets: list[Target] = []
        if {"1", "2"} & set(PARTS):
            targets += memcached_targets(memcached_parts(record, work))
        if "3" in PARTS:
            loads = redis_proxies(work)
            record["redis_proxies"] = {
                load: [asdict(median_redis_row(r)) for r in runs.values()]
                for load, runs in loads.items()
            }
            record["redis_rounds"] = {
                load: {name: [asdict(r) for r in rs] for name, rs in runs.items()}
                for load, runs in loads.items()
            }
            targets += redis_targets(loads)
        if "4" in PARTS:
            caslap = caslap_rounds(work)
            record["memcaslap_loads"] = {
                load: {name: [asdict(r) for r in runs] for name, runs in by_target.items()}
                for load, by_target in caslap.items()
            }
            targets += caslap_targets(caslap)
        if "added-latency" in PARTS:
            record["added_latency"] = added_latency(work)
    record["load_average_at_end"] = os.getloadavg()[0]
    averages = [record["load_average_at_start"], record["load_average_at_end"]]
    table = targets_table(targets, averages, os.cpu_count() or 1)
    record["targets_table"] = table
    print(
        f"\ntargets side by side (medians over rounds; load average {averages[0]:.2f} at the"
        f" start, {averages[1]:.2f} at the end, {os.cpu_count()} CPUs):\n{table}"
    )
    return record
