"""`make bench`: throughput, latency and CPU per request, measured side by side in one run.

Part 1 drives one memcached with the cachelab loadgen (2 threads x 16 closed-loop clients,
1 KiB values, --ratio=1:9, preloaded keys) directly, through twemproxy (nutcracker) and through
the cachelab middleware in each variant of BENCH_MIDDLEWARE (workers:worker-batch, or
workers:worker-batch:event-loops; default "8:1,8:16,2:16,1:16:2": the ASL worker, 16-request
batches with 8 and with 2 workers, then one worker behind 2 event loops, the net threads that
serve their clients' single-server requests themselves; rows cachelab-t<W>-b<B>, with -e<L> for
event loops; a malformed variant stops the bench with one error line naming the knob), and prints
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
BENCH_REDIS_REQUESTS (800000) requests per test, random keys) under each load of BENCH_REDIS_LOADS
(value-bytes:pipeline pairs, default "1024:1,3:1,1024:16,3:16": 1 KiB and 3-byte values, with and
without -P 16) against one redis-server directly, through twemproxy's redis mode (`redis: true`)
and through the middleware's RESP front end (`--protocol redis`) in each BENCH_MIDDLEWARE variant
(each followed by the BENCH_BASELINE_JAR's, as in part 1), and prints GET and SET ops/s, p50,
proxy CPU and context switches per request (/proc, all threads) and redis' commands per read event
(its INFO stats: the requests each write to redis carried) with ratios to direct and to twemproxy,
median of BENCH_PROXY_ROUNDS rounds in alternating order, then every round's figures with the
spread of each target's rounds. Each target first gets BENCH_REDIS_WARMUP_RUNS (3) unmeasured
redis-benchmark runs of BENCH_REDIS_WARMUP_REQUESTS (default: as many as the measured run, at
most 100000) requests per test, so the middleware's JIT compilation is not counted. Only part 3:
BENCH_PARTS=3.

At the end the bench prints every target side by side (bench/summary.py): the default worker's
CPU per request against the ASL floor's (<= 1.05x), the event loops (cachelab-t1-b16-e2:
-t 1 --worker-batch 16 --event-loops 2) against twemproxy (>= 1.30x its throughput at <= 0.85x its
CPU per request, in part 1 and per memcaslap load), each proxy's CPU per request against
memcached's own, and per redis load the event loops' GET and SET against twemproxy's redis mode
(>= 1.00x, the median of the per-round ratios), with the load average (the batched worker
without event loops, -t 2 --worker-batch 16, beside them for information, without a bound); a
target met while the load average was above 0.75 per CPU at the start (before the run's own
processes) is not shown as met. A full run of all
four parts rewrites the latest-run section of docs/performance.md (BENCH_DOC=0 or BENCH_QUICK=1:
it does not).

Part 2 compares the loadgen with memcaslap (-T 2 -c 32) against one memcached: ops/s and the
client's own CPU seconds per request (from wait4 rusage), as ratios; then the loadgen's CPU per
request with Zipf keys (--key-pattern=Z:Z) beside uniform ones (R:R).

Part 4 runs memcaslap loads (BENCH_MEMCASLAP_LOADS, connections:get-percent:value-bytes) through
twemproxy and each variant of BENCH_MEMCASLAP_MIDDLEWARE (as BENCH_MIDDLEWARE; default
"2:16,1:16:2") in front of a memcached of its own: ops/s and the proxy's CPU per request against
twemproxy's and against memcached's own.

Part added-latency (bench/added_latency.py) measures the latency a proxy adds, as a tail-latency
study does: each middleware mode of BENCH_LATENCY_MIDDLEWARE (default "8:1,8:1:2,1:16:2": the
default worker pool -t 8, the same with --event-loops 2, and -t 1 --worker-batch 16
--event-loops 2) first gets a closed-loop run of BENCH_LATENCY_SATURATION_SECONDS (5) for its
saturation throughput (part 1's workload: 1 KiB values, 90:10 gets:sets, preloaded keys, one
memcached); then, per round (BENCH_ROUNDS), the loadgen runs in open loop (--open-loop-rate:
Poisson arrivals, latency from each request's intended send time) for BENCH_LATENCY_SECONDS (10,
the first BENCH_LATENCY_RAMP_SECONDS (1) ramping up) at BENCH_LATENCY_LEVELS (10,50,70) percent of
the mode's own saturation, directly to memcached, through twemproxy and through the mode, back to
back. Per level it prints p50, p99 and p99.9 in µs and the latency added (proxy minus direct at
the same rate in the same round; medians over rounds) with its ratio to twemproxy's, then the
event loops' targets at 70 % (at most 100 µs added at p50 and 500 µs at p99, and at most
twemproxy's) as met or missed; the tables are also saved as added-latency.md. Only this part:
BENCH_PARTS=added-latency.

Each target of part 1 is measured in BENCH_PROXY_ROUNDS (3) rounds, every other round in reversed
order; the table shows each target's median round. Other knobs: BENCH_SECONDS (20), BENCH_ROUNDS
(2, parts 2 and added-latency), BENCH_KEYS (100000), BENCH_PARTS ("1,2,3,4,added-latency"),
LOADGEN_JAVA_OPTS, MIDDLEWARE_JAVA_OPTS (default: the local runner's, from cachelab.jvm),
BENCH_RESULTS (where the output is saved: results/bench/<UTC time>/bench.txt and bench.json, and
added-latency.md). BENCH_BASELINE_JAR: a second middleware jar
(e.g. main's, copied aside before a change) measured in every variant right after the current one,
in parts 1, 3 and 4, as rows named base-t<W>-b<B>[-e<L>], for a before/after comparison in the
same run. A quick A/B of the redis path: BENCH_PARTS=3 BENCH_MIDDLEWARE=1:16:2
BENCH_BASELINE_JAR=/tmp/before.jar.
A quick A/B of one variant in part 1 only: BENCH_PARTS=1 BENCH_PROXY_ROUNDS=1 BENCH_SECONDS=10
BENCH_MIDDLEWARE=8:1 BENCH_BASELINE_JAR=/tmp/before.jar (about 2 minutes; add BENCH_PERF=1 for
the system calls per request).

Timing results depend on the machine; this is a benchmark, not a test. Standard library only,
plus cachelab.processes (itself standard library only; found through ops/ on sys.path), which
starts and stops every child as the local runner does.
"""

from __future__ import annotations

import sys
from pathlib import Path

# cachelab.processes (standard library only) starts and stops every child as the local runner does.
_OPS = str(Path(__file__).resolve().parents[2] / "ops")
if _OPS not in sys.path:
    sys.path.insert(0, _OPS)
