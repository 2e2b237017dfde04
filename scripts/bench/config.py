"""The bench's knobs (BENCH_* environment variables), paths and the JDK it runs with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cachelab import jvm

from bench.variants import parse_variants

ROOT = Path(__file__).resolve().parents[2]
LOADGEN_JAR = ROOT / "loadgen" / "target" / "loadgen.jar"
MIDDLEWARE_JAR = ROOT / "middleware" / "target" / "middleware.jar"
# BENCH_QUICK=1: shorter runs and fewer rounds (about a third of the full run's time), for a
# first look; the docs' section is rewritten only by a full run.
QUICK = os.environ.get("BENCH_QUICK", "0") == "1"
SECONDS = int(os.environ.get("BENCH_SECONDS", "6" if QUICK else "20"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1" if QUICK else "2"))
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
# Middleware variants (workers:worker-batch[:event-loops]): 8:1 is the ASL worker, 8:16 and 2:16
# batch up to 16 requests per worker wake-up, 1:16:2 adds two event loops.
MIDDLEWARE_VARIANTS = parse_variants(
    "BENCH_MIDDLEWARE", os.environ.get("BENCH_MIDDLEWARE", "8:1,8:16,2:16,1:16:2")
)
# A second jar measured in every variant after the current one (before/after in one run).
_BASELINE = os.environ.get("BENCH_BASELINE_JAR", "")
BASELINE_JAR = Path(_BASELINE) if _BASELINE else None
# Where each run's printed output (bench.txt) and figures (bench.json) are saved.
OUT_BASE = Path(os.environ.get("BENCH_RESULTS", ROOT / "results" / "bench"))
PROXY_ROUNDS = int(os.environ.get("BENCH_PROXY_ROUNDS", "2" if QUICK else "3"))
# The ASL floor: the ASL worker's design in C (scripts/asl-floor/), measured in part 1 unless 0.
FLOOR = os.environ.get("BENCH_FLOOR", "1") != "0"
FLOOR_SOURCE = ROOT / "scripts" / "asl-floor" / "asl-floor.c"
FLOOR_BINARY = ROOT / "target" / "asl-floor" / "asl-floor"
FLOOR_WORKERS = 8  # as the ASL worker's row (-t 8)
# BENCH_PERF=1: one more run per proxy under perf stat, for its system calls per request.
PERF = os.environ.get("BENCH_PERF", "0") == "1"
PERF_SECONDS = int(os.environ.get("BENCH_PERF_SECONDS", "5"))
PARTS = os.environ.get("BENCH_PARTS", "1,2,3,4,added-latency").split(",")
REDIS_CLIENTS = int(os.environ.get("BENCH_REDIS_CLIENTS", "50"))
# Part 3's loads, as value-bytes:pipeline pairs (redis-benchmark -d and -P): 3-byte and 1 KiB
# values, one request in flight per connection and 16.
REDIS_LOADS = [
    (int(d), int(p))
    for d, p in (
        v.split(":")
        for v in os.environ.get("BENCH_REDIS_LOADS", "1024:1,3:1,1024:16,3:16").split(",")
    )
]
# 800,000 per test (about 9.5 s here): the rounds spread 1.01-1.20x against 1.05-1.48x at 100,000
# (docs/performance.md, "How it is measured").
REDIS_REQUESTS = int(os.environ.get("BENCH_REDIS_REQUESTS", "200000" if QUICK else "800000"))
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
REDIS_WARMUP_RUNS = int(os.environ.get("BENCH_REDIS_WARMUP_RUNS", "1" if QUICK else "3"))
# Part 4's memcaslap loads, as connections:get-percent:value-bytes (32 and 256 connections over
# memcaslap's 2 threads; 90:10 and read-only; 1 KiB and 16 KiB values), through twemproxy and the
# middleware variants BENCH_MEMCASLAP_MIDDLEWARE (workers:worker-batch[:event-loops]).
MEMCASLAP_LOADS = os.environ.get(
    "BENCH_MEMCASLAP_LOADS",
    "32:90:1024,32:100:1024,32:90:16384,32:100:16384,"
    "256:90:1024,256:100:1024,256:90:16384,256:100:16384",
)
MEMCASLAP_VARIANTS = parse_variants(
    "BENCH_MEMCASLAP_MIDDLEWARE", os.environ.get("BENCH_MEMCASLAP_MIDDLEWARE", "2:16,1:16:2")
)
MEMCASLAP_SECONDS = int(os.environ.get("BENCH_MEMCASLAP_SECONDS", "4" if QUICK else "8"))
MEMCASLAP_WARMUP_SECONDS = int(
    os.environ.get("BENCH_MEMCASLAP_WARMUP_SECONDS", "2" if QUICK else "3")
)
MEMCASLAP_ROUNDS = int(os.environ.get("BENCH_MEMCASLAP_ROUNDS", "2" if QUICK else "3"))
# memcaslap's window (-w, in thousands: 1k is its least): keys per connection, set before its
# gets; 1k keys of 16 KiB for 256 connections are 4 GiB, which part 4's memcached (-m 4608) holds,
# so that read-only gets hit.
MEMCASLAP_WINDOW = os.environ.get("BENCH_MEMCASLAP_WINDOW", "1k")
MEMCASLAP_MEMCACHED_MB = int(os.environ.get("BENCH_MEMCASLAP_MEMCACHED_MB", "4608"))
# The added-latency part: the middleware's three modes (workers:worker-batch[:event-loops]): the
# default net thread + queue + worker pool (-t 8), the same with two event loops, and one worker
# batching 16 requests behind two event loops.
LATENCY_VARIANTS = parse_variants(
    "BENCH_LATENCY_MIDDLEWARE", os.environ.get("BENCH_LATENCY_MIDDLEWARE", "8:1,8:1:2,1:16:2")
)
# Open-loop rates as percentages of each mode's own saturation throughput.
LATENCY_LEVELS_PERCENT = [
    int(p) for p in os.environ.get("BENCH_LATENCY_LEVELS", "10,50,70").split(",")
]
# Each open-loop run's length, and the closed-loop run that finds a target's saturation.
LATENCY_SECONDS = int(os.environ.get("BENCH_LATENCY_SECONDS", "5" if QUICK else "10"))
LATENCY_SATURATION_SECONDS = int(
    os.environ.get("BENCH_LATENCY_SATURATION_SECONDS", "3" if QUICK else "5")
)
# The open-loop runs' first second ramps from 0 to the rate (--open-loop-ramp-s), so the
# loadgen's own start-up builds no backlog that drains through the measured seconds.
LATENCY_RAMP_SECONDS = float(os.environ.get("BENCH_LATENCY_RAMP_SECONDS", "1"))
CLK_TCK = os.sysconf("SC_CLK_TCK")


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
