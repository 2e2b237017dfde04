"""The one place where a spec point becomes loadgen flags, for every target.

`measure_args` are the flags of a measuring loadgen instance; `fill_args` and `verify_args` are
the preload recipe (write every key of a key range once, then read every one of them back). A
target adds only where the load goes and where the output goes (`--server`, `--port`,
`--json-out-file`, `--hdr-file-prefix`, the key range of a preload slice): the local runner to a
java command line (cachelab.local.commands), the Kubernetes plan to the Job's ConfigMap as
`LOADGEN_ARGS`, `PRELOAD_FILL_ARGS`, `PRELOAD_VERIFY_ARGS`, which manifests/base/scripts pass to
the loadgen unchanged. The flags are memtier_benchmark's (docs/interfaces.md §2), so memtier and the
cachelab loadgen take the same list. Pure functions; no flag contains whitespace, so a
space-joined list survives the shell's word splitting.
"""

from __future__ import annotations

from cachelab.spec import Spec

PERCENTILES = "50,90,99,99.9"
KEY_MINIMUM = 1
PRELOAD_CLIENTS = 4  # connections of the one preload thread per target


class LoadgenArgsError(ValueError):
    """A spec field the chosen loadgen cannot express (names the field)."""


def _workload(spec: Spec) -> list[str]:
    workload = spec.workload
    return [f"--protocol={workload.protocol}", f"--data-size={workload.value_bytes}"]


def measure_args(spec: Spec, loadgen: str = "cachelab") -> list[str]:
    """Flags of one measuring instance of a point for run.duration_s (closed loop, or open loop
    at its share of workload.rate_ops, reached by a linear ramp over run.warmup_s): the spec's
    workload, HDR percentiles, a distinct seed per client and randomized data, as memtier shows
    them. `loadgen` is `cachelab` or `memtier` (which has no think time and no open loop)."""
    topology, workload = spec.topology, spec.workload
    args = [
        *_workload(spec),
        f"--key-minimum={KEY_MINIMUM}",
        f"--key-maximum={workload.key_maximum}",
        f"--threads={topology.threads}",
        f"--clients={topology.clients_per_thread}",
        f"--ratio={workload.ratio}",
        f"--key-pattern={workload.key_pattern}",
        f"--test-time={spec.run.duration_s}",
        f"--print-percentiles={PERCENTILES}",
        "--distinct-client-seed",
        "--randomize",
    ]
    if "Z" in workload.key_pattern:
        args.append(f"--key-zipf-exp={workload.key_zipf_exp:g}")
    if workload.multi_get > 0:
        args.append(f"--multi-key-get={workload.multi_get}")
    if workload.think_time_ms > 0:
        if loadgen != "cachelab":
            raise LoadgenArgsError(
                f"workload.think_time_ms: {workload.think_time_ms} needs the cachelab loadgen "
                f"({loadgen} has no think time)"
            )
        args.append(f"--think-time={workload.think_time_ms:g}")
    if workload.open_loop:
        if loadgen != "cachelab":
            raise LoadgenArgsError(
                f"workload.rate_ops: {workload.rate_ops:g} (open loop) needs the cachelab loadgen "
                f"({loadgen} has no Poisson arrivals)"
            )
        args.append(f"--open-loop-rate={instance_rate_ops(spec):.6g}")
        if spec.run.warmup_s > 0:
            # the rate rises over the unmeasured warm-up: processes still cold from start-up
            # build no backlog that drains through the measured seconds
            args.append(f"--open-loop-ramp-s={spec.run.warmup_s:g}")
    return args


def instance_rate_ops(spec: Spec) -> float:
    """The open-loop rate of one loadgen instance: `workload.rate_ops` split evenly over the
    instances (the loadgen's --open-loop-rate is its total over all its connections)."""
    return spec.workload.rate_ops / spec.topology.instances


def fill_args(spec: Spec) -> list[str]:
    """Preload, first half: write every key of the range once (add --key-minimum/-maximum)."""
    return _every_key_once(spec, "1:0")


def verify_args(spec: Spec) -> list[str]:
    """Preload, second half: read every key of the range back (its misses are the check)."""
    return _every_key_once(spec, "0:1")


def _every_key_once(spec: Spec, ratio: str) -> list[str]:
    """One pass over the key range in order (`P:P`), sets:gets as `ratio`, on one thread."""
    return [
        *_workload(spec),
        "--threads=1",
        f"--clients={PRELOAD_CLIENTS}",
        f"--ratio={ratio}",
        "--key-pattern=P:P",
        "--requests=allkeys",
    ]


def key_range(low: int, high: int) -> list[str]:
    """The key range flags of one preload slice."""
    return [f"--key-minimum={low}", f"--key-maximum={high}"]


def joined(args: list[str]) -> str:
    """A flag list as one ConfigMap literal (the scripts let the shell split it)."""
    for arg in args:
        if not arg or any(c.isspace() for c in arg):
            raise LoadgenArgsError(f"loadgen flag {arg!r} is empty or holds whitespace")
    return " ".join(args)
