"""Command lines of the loadgen and the middleware for one point of a spec.

Pure functions (no processes), so the flags a spec turns into can be tested on their own. The
loadgen takes memtier's options (docs/interfaces.md §2); the middleware its ASL flags (§1).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cachelab.spec import Spec

# Small, quick-starting JVMs: the machine runs servers, middleware and clients at once. The
# loadgen stops at the C1 compiler, as in its image: C2's compilations cost more CPU than they save
# in runs of tens of seconds (loadgen/README.md, benchmark).
LOADGEN_JVM = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xms64m", "-Xmx512m"]
SHORT_JVM = LOADGEN_JVM
MIDDLEWARE_JVM = ["-XX:+UseParallelGC", "-Xms256m", "-Xmx1g"]
PERCENTILES = "50,90,99,99.9"
KEY_MINIMUM = 1
VERIFY_REQUESTS_PER_CLIENT = 200


def _workload_flags(spec: Spec, protocol: str) -> list[str]:
    workload = spec.workload
    return [
        f"--protocol={protocol}",
        f"--key-minimum={KEY_MINIMUM}",
        f"--key-maximum={workload.key_maximum}",
        f"--data-size={workload.value_bytes}",
        "--hide-histogram",
        "--quiet",
    ]


def loadgen_argv(
    java: str,
    jar: Path,
    spec: Spec,
    host: str,
    port: int,
    json_out: Path,
    hdr_prefix: Path,
) -> list[str]:
    """One measuring loadgen instance of a point (closed loop, --test-time)."""
    topology, workload = spec.topology, spec.workload
    argv = [
        java,
        *LOADGEN_JVM,
        "-jar",
        str(jar),
        f"--server={host}",
        f"--port={port}",
        *_workload_flags(spec, workload.protocol),
        f"--threads={topology.threads}",
        f"--clients={topology.clients_per_thread}",
        f"--ratio={workload.ratio}",
        f"--key-pattern={workload.key_pattern}",
        f"--test-time={spec.run.duration_s}",
        f"--json-out-file={json_out}",
        f"--hdr-file-prefix={hdr_prefix}",
        f"--print-percentiles={PERCENTILES}",
        "--distinct-client-seed",
        "--randomize",
    ]
    if workload.multi_get > 0:
        argv.append(f"--multi-key-get={workload.multi_get}")
    if workload.think_time_ms > 0:
        argv.append(f"--think-time={workload.think_time_ms:g}")
    return argv


def _one_server_argv(
    java: str, jar: Path, spec: Spec, host: str, port: int, json_out: Path, *flags: str
) -> list[str]:
    """A single-threaded loadgen against one server, with the spec's workload and `flags`."""
    return [
        java,
        *SHORT_JVM,
        "-jar",
        str(jar),
        f"--server={host}",
        f"--port={port}",
        *_workload_flags(spec, spec.workload.protocol),
        "--threads=1",
        *flags,
        f"--json-out-file={json_out}",
    ]


def preload_argv(
    java: str, jar: Path, spec: Spec, host: str, port: int, json_out: Path
) -> list[str]:
    """Write every key once into one server (`-n allkeys --key-pattern=P:P`)."""
    return _one_server_argv(
        java,
        jar,
        spec,
        host,
        port,
        json_out,
        "--clients=4",
        "--ratio=1:0",
        "--key-pattern=P:P",
        "--requests=allkeys",
    )


def verify_argv(
    java: str, jar: Path, spec: Spec, host: str, port: int, json_out: Path
) -> list[str]:
    """A short read-only run against one server, to check its miss ratio after the preload."""
    return _one_server_argv(
        java,
        jar,
        spec,
        host,
        port,
        json_out,
        "--clients=2",
        "--ratio=0:1",
        "--key-pattern=R:R",
        f"--requests={VERIFY_REQUESTS_PER_CLIENT}",
    )


def middleware_argv(
    java: str,
    jar: Path,
    spec: Spec,
    host: str,
    port: int,
    servers: Sequence[str],
    stats_dir: Path,
) -> list[str]:
    """One middleware of a point, writing its statistics to `stats_dir`.

    With `topology.backend: redis` it speaks RESP2 to the loadgen and to redis (`--protocol redis`).
    """
    workload, run = spec.workload, spec.run
    return [
        java,
        *MIDDLEWARE_JVM,
        "-jar",
        str(jar),
        "-l",
        host,
        "-p",
        str(port),
        "-t",
        str(spec.topology.workers),
        "-s",
        "true" if workload.sharded else "false",
        "-m",
        *servers,
        "--routing",
        workload.routing,
        "--replication",
        str(workload.replication),
        "--worker-batch",
        str(spec.topology.worker_batch),
        "--stats-dir",
        str(stats_dir),
        "--warmup-s",
        str(run.warmup_s),
        "--cooldown-s",
        str(run.cooldown_s),
        "--protocol",
        "redis" if spec.topology.backend == "redis" else "memcached",
    ]
