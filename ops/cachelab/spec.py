"""Experiment specs: the YAML model, its validation and the sweep expansion.

A spec (docs/interfaces.md §3) names a base configuration and sweep axes over dotted field paths.
`load_spec` validates it (every error names the field, e.g. ``topology.workers: must be >= 1,
got 0``) and `Spec.points()` expands the cartesian product of the axes into resolved points, each
validated again as a whole (so cross-field rules also hold for every swept value).
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from cachelab import program_options
from cachelab.columns import CONFIG_COLUMNS, TOTAL_CLIENTS, summary_columns
from cachelab.network import LINK_WORDS, LINKS, MAX_RTT_MS, PROFILE_NAMES, PROFILES, Link, links_of
from cachelab.seeds import known_seed

SCHEMA_PATH = Path(__file__).parent / "schemas" / "spec.schema.json"

_NAME_RE = re.compile(r"^[a-z0-9-]+$")
_RATIO_RE = re.compile(r"^(\d+):(\d+)$")
_KEY_PATTERN_RE = re.compile(r"^[SGRPZ]:[SGRPZ]$")


class SpecError(ValueError):
    """A spec that cannot be used; the message names every offending field, one per line."""

    def __init__(self, problems: list[str], source: str | None = None) -> None:
        self.problems = problems
        head = f"invalid spec {source}" if source else "invalid spec"
        super().__init__(head + ":\n" + "\n".join(f"  {p}" for p in problems))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class Hosts(_Model):
    """Node pool of each role (used on Kubernetes; recorded in local runs)."""

    client: str = Field(
        default="a2", pattern=r"^[a-z0-9-]+$", description="pool of the loadgen machines"
    )
    middleware: str = Field(
        default="a4", pattern=r"^[a-z0-9-]+$", description="pool of the middlewares"
    )
    server: str = Field(default="a1", pattern=r"^[a-z0-9-]+$", description="pool of the servers")


# The middleware's bounds, as its options say (schemas/middleware-options.json).
_MW = program_options.middleware()
_WORKERS = _MW.bounds("-t")
_WORKER_BATCH = _MW.bounds("--worker-batch")
_EVENT_LOOPS = _MW.bounds("--event-loops")
_SERVERS = _MW.bounds("-m")
_REPLICATION = _MW.bounds("--replication")
_ZIPF_EXPONENT = program_options.loadgen().bounds("--key-zipf-exp")


class Topology(_Model):
    """Who talks to whom: clients, middlewares, servers."""

    client_machines: int = Field(
        default=1, ge=1, le=64, description="loadgen machines (local: groups)"
    )
    instances_per_machine: int = Field(
        default=1, ge=1, le=16, description="loadgen processes per machine"
    )
    threads: int = Field(
        default=1, ge=1, le=64, description="loadgen threads per instance (memtier -t)"
    )
    clients_per_thread: int = Field(default=1, ge=1, le=1024, description="memtier -c")
    middlewares: int = Field(default=1, ge=0, le=16, description="0 = loadgen talks to the servers")
    workers: int = Field(
        default=8, ge=_WORKERS[0], le=_WORKERS[1], description="middleware worker threads (-t)"
    )
    worker_batch: int = Field(
        default=1,
        ge=_WORKER_BATCH[0],
        le=_WORKER_BATCH[1],
        description="middleware --worker-batch, requests a worker takes at once (1 = ASL worker)",
    )
    event_loops: int = Field(
        default=0,
        ge=_EVENT_LOOPS[0],
        le=_EVENT_LOOPS[1],
        description="middleware --event-loops, net threads that send their clients' single-server "
        "requests to the servers themselves (no queue, no worker wake-up), for throughput; 0 = the "
        "ASL's one net thread and request queue, the queueing model under study",
    )
    servers: int = Field(default=1, ge=_SERVERS[0], le=_SERVERS[1], description="backend servers")
    backend: Literal["memcached", "redis"] = "memcached"
    hosts: Hosts = Field(default_factory=Hosts)

    @property
    def instances(self) -> int:
        return self.client_machines * self.instances_per_machine

    @property
    def total_clients(self) -> int:
        return self.instances * self.threads * self.clients_per_thread


class Workload(_Model):
    """What the clients send."""

    protocol: Literal["memcache_text", "redis"] = "memcache_text"
    ratio: str = Field(default="0:1", description='memtier --ratio "SET:GET"')
    value_bytes: int = Field(default=1024, ge=1, le=1048576)
    key_maximum: int = Field(default=10000, ge=1, le=100_000_000)
    key_pattern: str = Field(
        default="R:R", description="memtier --key-pattern SET:GET (S, G, R, P, Z)"
    )
    key_zipf_exp: float = Field(
        default=1.0,
        gt=_ZIPF_EXPONENT[0],
        lt=_ZIPF_EXPONENT[1],
        description="memtier --key-zipf-exp: key n of the Z pattern is requested with weight "
        "n^-key_zipf_exp (memtier's range (0, 5), default 1); used only when key_pattern has a Z",
    )
    multi_get: int = Field(
        default=0, ge=0, le=1024, description="memtier --multi-key-get (0 = off)"
    )
    sharded: bool = Field(default=False, description="middleware -s")
    routing: Literal["round-robin", "hash"] = "round-robin"
    replication: int = Field(
        default=1,
        ge=_REPLICATION[0],
        le=_REPLICATION[1],
        description="replicas per key in hash mode",
    )
    think_time_ms: float = Field(default=0, ge=0, le=60_000, description="loadgen --think-time (Z)")
    rate_ops: float = Field(
        default=0,
        ge=0,
        le=100_000_000,
        description="open loop: total offered requests/s (Poisson arrivals), split evenly over "
        "the loadgen instances, their threads and connections, reached by a linear ramp over "
        "run.warmup_s; 0 = closed loop",
    )

    @property
    def open_loop(self) -> bool:
        return self.rate_ops > 0

    @field_validator("ratio")
    @classmethod
    def _check_ratio(cls, value: str) -> str:
        match = _RATIO_RE.match(value)
        if not match:
            raise ValueError(f'must look like "SET:GET" with whole numbers, got {value!r}')
        if int(match.group(1)) == 0 and int(match.group(2)) == 0:
            raise ValueError(f"SET and GET cannot both be 0, got {value!r}")
        return value

    @field_validator("key_pattern")
    @classmethod
    def _check_key_pattern(cls, value: str) -> str:
        if not _KEY_PATTERN_RE.match(value):
            raise ValueError(f'must be "X:Y" with X, Y in S, G, R, P, Z, got {value!r}')
        return value

    @property
    def set_ratio(self) -> int:
        return int(self.ratio.split(":")[0])

    @property
    def get_ratio(self) -> int:
        return int(self.ratio.split(":")[1])

    @property
    def writes(self) -> bool:
        return self.set_ratio > 0


class Preload(_Model):
    """Fill every key before measuring, then check the miss ratio of a short read run."""

    enabled: bool = True
    expected_miss_ratio: float = Field(default=0.0, ge=0.0, le=1.0)


class UntilCertain(_Model):
    """Repeat a point beyond `run.repetitions` (its minimum) until the 95 % interval of its mean
    throughput and of its mean response time are each within ±ci_pct of the mean, or `max`."""

    max: int = Field(ge=2, le=100, description="most repetitions of a point")
    ci_pct: float = Field(gt=0, lt=100, description="target half-width, % of the mean")


class Run(_Model):
    """How long and how often each point runs."""

    repetitions: int = Field(
        default=1,
        ge=1,
        le=100,
        description="repetitions of each point; {min, max, ci_pct} repeats until certain",
    )
    until_certain: UntilCertain | None = Field(
        default=None, description="set by repetitions: {min, max, ci_pct}"
    )
    duration_s: int = Field(default=10, ge=1, le=86_400)
    warmup_s: int = Field(default=0, ge=0)
    cooldown_s: int = Field(default=0, ge=0)
    restart_servers: bool = Field(
        default=False,
        description="start fresh, preloaded servers for every run; false reuses them while "
        "their configuration is unchanged and no run wrote to them",
    )

    @model_validator(mode="before")
    @classmethod
    def _adaptive_repetitions(cls, data: Any) -> Any:
        """`repetitions: {min: 3, max: 10, ci_pct: 5}` -> repetitions 3, until_certain."""
        if not isinstance(data, dict) or not isinstance(data.get("repetitions"), dict):
            return data
        given = dict(data["repetitions"])
        unknown = sorted(set(given) - {"min", "max", "ci_pct"})
        if unknown or not {"min", "max", "ci_pct"} <= set(given):
            raise _FieldError(
                "run.repetitions",
                f"a number, or {{min, max, ci_pct}} with all three, got {given!r}",
            )
        low, high = given["min"], given["max"]
        if not isinstance(low, int) or not isinstance(high, int) or not 2 <= low <= high:
            raise _FieldError(
                "run.repetitions",
                f"needs whole numbers 2 <= min <= max (an interval needs two runs), got "
                f"min {low!r}, max {high!r}",
            )
        ci_pct = given["ci_pct"]
        if high > 100 or not isinstance(ci_pct, int | float) or not 0 < ci_pct < 100:
            raise _FieldError(
                "run.repetitions",
                f"needs max <= 100 and 0 < ci_pct < 100, got max {high!r}, ci_pct {ci_pct!r}",
            )
        return {
            **data,
            "repetitions": low,
            "until_certain": {"max": high, "ci_pct": given["ci_pct"]},
        }

    @property
    def max_repetitions(self) -> int:
        """The most repetitions a point can get (`repetitions` when fixed)."""
        return self.until_certain.max if self.until_certain else self.repetitions

    @model_validator(mode="after")
    def _check_trim(self) -> Run:
        if self.warmup_s + self.cooldown_s >= self.duration_s:
            raise ValueError(
                f"warmup_s + cooldown_s must be < duration_s, got "
                f"{self.warmup_s} + {self.cooldown_s} >= {self.duration_s}"
            )
        return self

    @property
    def measured_s(self) -> int:
        return self.duration_s - self.warmup_s - self.cooldown_s


class MemcachedSettings(_Model):
    """How each memcached server is started (local: its flags; Kubernetes: chart values)."""

    threads: int = Field(default=1, ge=1, le=64, description="memcached -t, worker threads")
    memory_mib: int = Field(
        default=512, ge=64, le=65536, description="memcached -m, item memory in MiB"
    )


RedisPolicy = Literal[
    "noeviction",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
]


class RedisSettings(_Model):
    """How each redis server is started (local: its flags; Kubernetes: chart values)."""

    persistence: Literal["stock", "off"] = Field(
        default="off",
        description="stock: redis-server's defaults, which are the stock redis.conf's (RDB "
        "snapshots on, AOF off); off: --save '' --appendonly no",
    )
    maxmemory_mib: int = Field(
        default=0, ge=0, le=1_048_576, description="--maxmemory in MiB (0 = no limit)"
    )
    maxmemory_policy: RedisPolicy = Field(default="noeviction", description="--maxmemory-policy")


class ServerSettings(_Model):
    """Settings of the backend servers; only the section of topology.backend is used."""

    memcached: MemcachedSettings = Field(default_factory=MemcachedSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)


class Report(_Model):
    """Axes of the report's figures."""

    x: str = Field(default=TOTAL_CLIENTS, description="a summary.csv column")
    series: str | None = Field(
        default=None, description="one line per value of this column (optional)"
    )


class Fault(_Model):
    """One fault injected while a run measures, at `at_s` seconds after the loadgens start."""

    at_s: float = Field(ge=0, description="seconds after the loadgens start")
    action: Literal["stop", "kill", "restart", "slow"] = Field(
        description="stop: SIGSTOP, SIGCONT after for_s; kill: SIGKILL for good; restart: "
        "SIGKILL, started again after for_s; slow: its traffic cut to rate_mbit for for_s"
    )
    target: str = Field(
        pattern=r"^(server|middleware)-[0-9]+$", description="server-<i> or middleware-<j>"
    )
    for_s: float = Field(default=0, ge=0, description="how long (not for kill)")
    rate_mbit: float = Field(default=1, gt=0, le=100_000, description="slow: Mbit/s each way")

    @property
    def role(self) -> str:
        return self.target.split("-")[0]

    @property
    def index(self) -> int:
        return int(self.target.split("-")[1])

    @property
    def end_s(self) -> float:
        return self.at_s + self.for_s


def _link_field(what: str) -> Any:
    return Field(default=None, ge=0, le=MAX_RTT_MS, description=what)


class LinkTimes(_Model):
    """Milliseconds per link; unset takes the profile's value (no delay without a profile)."""

    client_mw: float | None = _link_field(LINK_WORDS["client_mw"])
    mw_server: float | None = _link_field(LINK_WORDS["mw_server"])
    client_server: float | None = _link_field(LINK_WORDS["client_server"])


class Network(_Model):
    """Round-trip times between the roles (cachelab.network), emulated with toxiproxy locally."""

    profile: str = Field(
        default="off",
        description="RTTs of a seed report's own measurements, ms ("
        + "; ".join(
            f"{name}: "
            + ", ".join(
                f"{k} {v.rtt_ms:g}" + (f" ± {v.jitter_ms:g}" if v.jitter_ms else "")
                for k, v in links.items()
            )
            for name, links in PROFILES.items()
        )
        + "); off = none",
        json_schema_extra={"enum": list(PROFILE_NAMES)},
    )
    rtt_ms: LinkTimes = Field(
        default_factory=LinkTimes, description="round-trip time per link, ms (overrides profile)"
    )
    jitter_ms: LinkTimes = Field(
        default_factory=LinkTimes,
        description="RTT jitter per link, ms: each direction waits half the RTT +- half this, "
        "uniform (overrides the profile)",
    )

    @field_validator("profile", mode="before")
    @classmethod
    def _off_is_text(cls, value: Any) -> Any:
        """YAML 1.1 reads an unquoted `off` as false."""
        return "off" if value is False else value

    @field_validator("profile")
    @classmethod
    def _check_profile(cls, value: str) -> str:
        if value not in PROFILE_NAMES:
            raise ValueError(f"must be one of {', '.join(PROFILE_NAMES)}, got {value!r}")
        return value

    def links(self, middlewares: int) -> list[Link]:
        """The emulated links of a topology with `middlewares`, in LINKS order; ValueError
        (starting with the offending field) when the section does not fit the topology."""
        present = links_of(middlewares)
        profile = PROFILES.get(self.profile, {})
        where = f"topology.middlewares {middlewares}: its links are {', '.join(present)}"
        for field, times in (("rtt_ms", self.rtt_ms), ("jitter_ms", self.jitter_ms)):
            for name in LINKS:
                if getattr(times, name) is not None and name not in present:
                    raise _FieldError(
                        f"network.{field}.{name}", f"no such link in this topology ({where})"
                    )
        found = []
        for name in present:
            seeded = profile.get(name)
            given = getattr(self.rtt_ms, name)
            jitter = getattr(self.jitter_ms, name)
            if given is None and seeded is None:
                if self.profile != "off":
                    raise _FieldError(
                        "network.profile",
                        f"{self.profile} states no {name} RTT; set network.rtt_ms.{name}",
                    )
                if jitter is not None:
                    raise _FieldError(
                        f"network.jitter_ms.{name}", f"needs network.rtt_ms.{name} (a link's RTT)"
                    )
                continue
            if given is not None:
                rtt, source = given, f"spec: network.rtt_ms.{name}"
                jitter = jitter if jitter is not None else 0.0
            else:
                assert seeded is not None
                rtt, source = seeded.rtt_ms, seeded.source
                jitter = jitter if jitter is not None else seeded.jitter_ms
            if jitter > rtt:
                raise _FieldError(
                    f"network.jitter_ms.{name}",
                    f"must be <= the link's RTT ({rtt:g} ms), got {jitter:g}",
                )
            found.append(Link(name, rtt, jitter, source))
        return found


SweepValue = Annotated[list[Any], Field(min_length=1)]


class Spec(_Model):
    """One experiment: a base configuration, sweep axes, repetitions and trimming."""

    name: str = Field(description="[a-z0-9-]+, names the results folder")
    description: str = ""
    seeds: list[str] = Field(
        default_factory=list, description="seed experiment ids reproduced (docs/experiments.md)"
    )
    topology: Topology = Field(default_factory=Topology)
    workload: Workload = Field(default_factory=Workload)
    preload: Preload = Field(default_factory=Preload)
    server: ServerSettings = Field(default_factory=ServerSettings)
    network: Network = Field(default_factory=Network)
    sweep: dict[str, SweepValue] = Field(
        default_factory=dict, description="dotted field path -> values (cartesian product)"
    )
    run: Run = Field(default_factory=Run)
    faults: list[Fault] = Field(
        default_factory=list, description="faults injected into every run while it measures"
    )
    report: Report = Field(default_factory=Report)

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME_RE.match(value):
            raise ValueError(f"must match [a-z0-9-]+, got {value!r}")
        return value

    @model_validator(mode="after")
    def _check_cross_fields(self) -> Spec:
        expected_protocol = "redis" if self.topology.backend == "redis" else "memcache_text"
        if self.workload.protocol != expected_protocol:
            raise _FieldError(
                "workload.protocol",
                f"must be {expected_protocol!r} for backend {self.topology.backend!r}, "
                f"got {self.workload.protocol!r}",
            )
        if self.workload.replication > self.topology.servers:
            raise _FieldError(
                "workload.replication",
                f"must be <= topology.servers ({self.topology.servers}), "
                f"got {self.workload.replication}",
            )
        if self.workload.multi_get > 0 and self.workload.get_ratio == 0:
            raise _FieldError("workload.multi_get", "needs GETs in workload.ratio, got SET-only")
        if self.workload.open_loop:
            problem = open_loop_problem(self)
            if problem:
                raise _FieldError("workload.rate_ops", problem)
        for index, seed in enumerate(self.seeds):
            problem = known_seed(seed)
            if problem:
                raise _FieldError(f"seeds.{index}", problem)
        for index, fault in enumerate(self.faults):
            problem = fault_problem(self, fault)
            if problem:
                raise _FieldError(f"faults.{index}", problem)
        self.network.links(self.topology.middlewares)
        return self

    def links(self) -> list[Link]:
        """The links whose RTT a run emulates (empty: none)."""
        return self.network.links(self.topology.middlewares)

    def with_values(self, values: dict[str, Any]) -> Spec:
        """This spec with the given dotted paths set (and `sweep` emptied), validated again."""
        data = self.model_dump(mode="json")
        data["sweep"] = {}
        for path, value in values.items():
            _set_path(data, path, value)
        return Spec.model_validate(data)

    def points(self) -> list[Point]:
        """The cartesian product of the sweep axes, in axis order (the last axis varies fastest)."""
        axes = list(self.sweep)
        points = []
        for index, combo in enumerate(itertools.product(*(self.sweep[a] for a in axes))):
            values = dict(zip(axes, combo, strict=True))
            try:
                resolved = self.with_values(values)
            except ValidationError as error:
                label = ", ".join(f"{k}={v!r}" for k, v in values.items())
                raise SpecError(
                    [f"sweep point {index} ({label}): {p}" for p in _problems(error)]
                ) from None
            points.append(Point(index=index, values=values, spec=resolved))
        return points


# The most one loadgen thread is asked to offer: the loadgen's own bench measured about 69,000
# requests/s per thread closed loop on the 2-core development machine (loadgen/README.md,
# benchmark); arrivals scheduled well beyond that only queue inside the loadgen.
LOADGEN_MAX_RATE_PER_THREAD = 100_000.0


def open_loop_problem(spec: Spec) -> str | None:
    """Why the loadgen cannot offer `workload.rate_ops` with this topology, or None."""
    workload, topology = spec.workload, spec.topology
    rate = workload.rate_ops
    if workload.think_time_ms > 0:
        return (
            f"{rate:g} (open loop) cannot be combined with workload.think_time_ms "
            f"{workload.think_time_ms:g} (open loop sets the send times itself)"
        )
    threads = topology.instances * topology.threads
    if rate > threads * LOADGEN_MAX_RATE_PER_THREAD:
        return (
            f"{rate:g} requests/s is more than {threads} loadgen threads can offer "
            f"({LOADGEN_MAX_RATE_PER_THREAD:g} per thread); add topology.threads or instances"
        )
    connections = topology.total_clients
    if rate * spec.run.measured_s < connections:
        return (
            f"{rate:g} requests/s gives the {connections} connections fewer than one request "
            f"each in the {spec.run.measured_s} measured seconds"
        )
    return None


def fault_problem(spec: Spec, fault: Fault) -> str | None:
    """Why `fault` cannot happen in a run of `spec`, or None."""
    count = spec.topology.servers if fault.role == "server" else spec.topology.middlewares
    if fault.index >= count:
        names = ", ".join(f"{fault.role}-{i}" for i in range(count)) or "none"
        return f"target {fault.target!r} does not exist (the {fault.role}s: {names})"
    if fault.action == "kill" and fault.for_s > 0:
        return "kill does not bring the target back; use action restart with for_s"
    if fault.action != "kill" and fault.for_s <= 0:
        return f"{fault.action} needs for_s > 0 (how long the fault lasts)"
    if fault.end_s >= spec.run.duration_s:
        return (
            f"at_s + for_s must be < run.duration_s, got {fault.at_s:g} + {fault.for_s:g} >= "
            f"{spec.run.duration_s}"
        )
    return None


class _FieldError(ValueError):
    """A cross-field rule broken at `path` (raised inside a model validator)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")


@dataclass(frozen=True)
class Point:
    """One resolved configuration of a sweep: its index, the swept values and the full spec."""

    index: int
    values: dict[str, Any]
    spec: Spec

    def label(self) -> str:
        if not self.values:
            return f"p{self.index}"
        short = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in self.values.items())
        return f"p{self.index} ({short})"


def _set_path(data: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value


def _leaf_paths(model: type[BaseModel], prefix: str = "") -> set[str]:
    paths: set[str] = set()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        full = f"{prefix}{name}"
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths |= _leaf_paths(annotation, full + ".")
        else:
            paths.add(full)
    return paths


SWEEPABLE_SECTIONS = frozenset({"topology", "workload", "preload", "server", "network", "run"})
SWEEPABLE_PATHS = frozenset(p for p in _leaf_paths(Spec) if p.split(".")[0] in SWEEPABLE_SECTIONS)


def _describe(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value, default=str)


def _format_error(error: ErrorDetails) -> str:
    loc = ".".join(str(part) for part in error["loc"])
    kind = error["type"]
    ctx = error.get("ctx", {})
    got = error.get("input")
    if kind == "value_error":
        message = str(ctx.get("error", error["msg"]))
        if isinstance(ctx.get("error"), _FieldError):
            return message
        return f"{loc}: {message}" if loc else message
    if kind == "extra_forbidden":
        if error["loc"][:1] == ("network",) and len(error["loc"]) == 3:
            return f"{loc}: unknown link (one of {', '.join(LINKS)})"
        return f"{loc}: unknown field"
    if kind == "missing":
        return f"{loc}: required field is missing"
    bounds = {
        "greater_than_equal": (">=", "ge"),
        "greater_than": (">", "gt"),
        "less_than_equal": ("<=", "le"),
        "less_than": ("<", "lt"),
    }
    if kind in bounds:
        op, key = bounds[kind]
        bound = ctx[key]
        if isinstance(bound, float) and bound.is_integer():
            bound = int(bound)
        return f"{loc}: must be {op} {bound}, got {_describe(got)}"
    if kind == "literal_error":
        return f"{loc}: must be one of {ctx.get('expected')}, got {_describe(got)}"
    if kind == "string_pattern_mismatch":
        return f"{loc}: must match {ctx.get('pattern')}, got {_describe(got)}"
    return f"{loc}: {error['msg'][0].lower()}{error['msg'][1:]}, got {_describe(got)}"


def _problems(error: ValidationError) -> list[str]:
    return [_format_error(e) for e in error.errors()]


def _check_sweep(raw: dict[str, Any]) -> list[str]:
    sweep = raw.get("sweep")
    if sweep is None:
        return []
    if not isinstance(sweep, dict):
        return [f"sweep: must be a mapping of field path to a list of values, got {sweep!r}"]
    problems = []
    for path, values in sweep.items():
        if path not in SWEEPABLE_PATHS:
            problems.append(
                f"sweep.{path}: not a field that can be swept "
                f"(one of topology.*, workload.*, preload.*, server.*, network.*, run.*)"
            )
        elif not isinstance(values, list) or not values:
            problems.append(f"sweep.{path}: must be a non-empty list of values, got {values!r}")
        elif len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
            problems.append(f"sweep.{path}: values must be distinct, got {values!r}")
    return problems


def parse_spec(raw: Any, source: str | None = None) -> Spec:
    """Validate a spec given as parsed YAML; raise SpecError naming every bad field."""
    if not isinstance(raw, dict):
        raise SpecError([f"top level must be a mapping, got {type(raw).__name__}"], source)
    problems = _check_sweep(raw)
    if problems:
        raise SpecError(problems, source)
    try:
        spec = Spec.model_validate(raw)
    except ValidationError as error:
        raise SpecError(_problems(error), source) from None
    series = spec.report.series
    if series is not None and series not in spec.sweep:  # the report draws one line per value
        swept = ", ".join(spec.sweep) or "nothing is swept"
        raise SpecError(
            [f"report.series: {series!r} is not a swept field (sweep: {swept})"], source
        )
    if spec.report.x not in summary_columns(list(spec.sweep)):  # else the report fails after
        axes = ", ".join(spec.sweep) or "none"  # the runs, not before them
        raise SpecError(
            [
                f"report.x: {spec.report.x!r} is not a summary.csv column (a sweep axis: {axes};"
                f" or one of {', '.join(CONFIG_COLUMNS)}; or a metric such as"
                " throughput_ops_per_s)"
            ],
            source,
        )
    try:
        spec.points()
    except SpecError as error:
        raise SpecError(error.problems, source) from None
    return spec


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that digits joined by colons stay text. YAML 1.1 reads an
    unquoted 1:10 as the base-60 number 70, so `ratio: 1:10` was rejected as "got 70" (and
    `duration_s: 1:30` silently meant 90); YAML 1.2 has no base-60 numbers either."""


_BASE_60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
_SpecLoader.yaml_implicit_resolvers = {
    first: [("tag:yaml.org,2002:str", _BASE_60)] * (first in "+-0123456789") + list(resolvers)
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _yaml_problem(error: yaml.YAMLError) -> str:
    """The parser's complaint and where, on one line (line and column counted from 1)."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: {error.problem}"
    return " ".join(str(error).split())


def apply_overrides(raw: Any, overrides: Sequence[str], source: str | None = None) -> Any:
    """RAW with each `FIELD=VALUE` of OVERRIDES set, in order (`run.duration_s=10`,
    `sweep.topology.workers=[8, 32]`); VALUE is read as YAML, as in a spec file. The result is
    validated like any spec, so a misspelt field is named there."""
    if not overrides or not isinstance(raw, dict):
        return raw
    problems = []
    for term in overrides:
        path, sep, text = term.partition("=")
        path = path.strip()
        if not sep or not path or any(not part for part in path.split(".")):
            problems.append(f"--set {term!r}: expected FIELD=VALUE, e.g. run.duration_s=10")
            continue
        try:
            value = yaml.load(text, Loader=_SpecLoader)
        except yaml.YAMLError as error:
            problems.append(f"--set {path}: not valid YAML: {_yaml_problem(error)}")
            continue
        section, _, rest = path.partition(".")
        keys = [section, rest] if section == "sweep" and rest else path.split(".")
        node = raw
        for key in keys[:-1]:
            child = node.get(key)
            if child is None:
                child = node[key] = {}
            if not isinstance(child, dict):
                problems.append(f"--set {path}: {key} is not a section")
                break
            node = child
        else:
            node[keys[-1]] = value
    if problems:
        raise SpecError(problems, source)
    return raw


def load_spec(path: Path, overrides: Sequence[str] = ()) -> Spec:
    """Read and validate a YAML spec file, with OVERRIDES (`FIELD=VALUE`) applied first."""
    try:
        text = path.read_text()
    except OSError as error:
        raise SpecError([f"cannot read: {error.strerror}"], str(path)) from None
    try:
        raw = yaml.load(text, Loader=_SpecLoader)  # a SafeLoader: builds only plain data
    except yaml.YAMLError as error:
        raise SpecError([f"not valid YAML: {_yaml_problem(error)}"], str(path)) from None
    return parse_spec(apply_overrides(raw, overrides, str(path)), str(path))


def save_spec(spec: Spec, source: Path, dest: Path) -> None:
    """Write the spec a run used to DEST: a copy of SOURCE (comments kept) when the file is that
    spec, else (overrides applied) the spec itself as YAML."""
    try:
        unchanged = load_spec(source) == spec
    except SpecError:
        unchanged = False
    if unchanged:
        shutil.copyfile(source, dest)
    else:
        dest.write_text(yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False))


def json_schema() -> dict[str, Any]:
    """The JSON schema of the spec format (exported to schemas/spec.schema.json)."""
    schema = Spec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "cachelab experiment spec"
    schema["properties"]["sweep"]["propertyNames"] = {"enum": sorted(SWEEPABLE_PATHS)}
    run = schema["$defs"]["Run"]["properties"]
    fixed = run["repetitions"]
    run["repetitions"] = {
        "description": fixed.pop("description"),
        "default": fixed.pop("default"),
        "anyOf": [
            fixed,
            {
                "type": "object",
                "properties": {
                    "min": {"type": "integer", "minimum": 2},
                    "max": {"type": "integer", "maximum": 100},
                    "ci_pct": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100},
                },
                "required": ["min", "max", "ci_pct"],
                "additionalProperties": False,
            },
        ],
    }
    return schema


def write_json_schema(path: Path = SCHEMA_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json_schema(), indent=2, sort_keys=True) + "\n")
    return path
