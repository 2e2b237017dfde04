"""Local command lines of the loadgen and the middleware for one point of a spec.

Pure functions (no processes), so the flags a spec turns into can be tested on their own. The
loadgen's flags come from cachelab.loadgen_args, shared with the Kubernetes target; this module
adds the JVM, the target and the output files. The middleware takes its ASL flags (§1).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cachelab import jvm
from cachelab.loadgen_args import KEY_MINIMUM, fill_args, key_range, measure_args, verify_args
from cachelab.paths import repo_root
from cachelab.spec import Spec


def _java(java: str, jar: Path) -> list[str]:
    # The image's JVM flags (cachelab.jvm: the pom's jib <jvmFlags>) with local heap sizes.
    flags = jvm.flags(repo_root(), "loadgen")
    return [java, *flags, "-jar", str(jar), "--hide-histogram", "--quiet"]


def loadgen_argv(
    java: str,
    jar: Path,
    spec: Spec,
    host: str,
    port: int,
    json_out: Path,
    hdr_prefix: Path,
    quiet: bool = True,
) -> list[str]:
    """One measuring loadgen instance of a point: the flags every target shares
    (cachelab.loadgen_args.measure_args) plus this instance's target and output files.
    `quiet=False` keeps its per-second progress line in its log (the runner's live line)."""
    head = _java(java, jar)
    if not quiet:
        head.remove("--quiet")
    return [
        *head,
        f"--server={host}",
        f"--port={port}",
        *measure_args(spec),
        f"--json-out-file={json_out}",
        f"--hdr-file-prefix={hdr_prefix}",
    ]


def preload_argv(
    java: str, jar: Path, spec: Spec, host: str, port: int, json_out: Path
) -> list[str]:
    """Write every key once into one server (the shared preload recipe, fill half)."""
    return _every_key_argv(java, jar, spec, host, port, fill_args(spec), json_out)


def verify_argv(
    java: str, jar: Path, spec: Spec, host: str, port: int, json_out: Path
) -> list[str]:
    """Read every key of one server back (the shared preload recipe, verify half)."""
    return _every_key_argv(java, jar, spec, host, port, verify_args(spec), json_out)


def _every_key_argv(
    java: str,
    jar: Path,
    spec: Spec,
    host: str,
    port: int,
    recipe: Sequence[str],
    json_out: Path,
) -> list[str]:
    """A loadgen that runs `recipe` over the whole key range of one server."""
    return [
        *_java(java, jar),
        f"--server={host}",
        f"--port={port}",
        *recipe,
        *key_range(KEY_MINIMUM, spec.workload.key_maximum),
        f"--json-out-file={json_out}",
    ]


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
        *jvm.flags(repo_root(), "middleware"),
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
        "--event-loops",
        str(spec.topology.event_loops),
        "--stats-dir",
        str(stats_dir),
        "--warmup-s",
        str(run.warmup_s),
        "--cooldown-s",
        str(run.cooldown_s),
        "--protocol",
        "redis" if spec.topology.backend == "redis" else "memcached",
    ]
