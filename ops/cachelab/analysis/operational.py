"""Operational analysis of one measured point: the demand and utilisation of every stage, and
the bottleneck named (Jain ch. 33; the seeds found it by hand).

Stages of a request, from the middleware's six timestamps (middleware/README.md §Statistics)
and the per-process CPU samples:

- **clients and network**: everything outside the middleware, R_client - R_mw per request (the
  loadgen, the kernel, loopback). A delay: each client spends that time there on its own, so its
  "utilisation" is the fraction of a client's cycle spent there, X D / N, and it is never the
  bottleneck.
- **net thread** (one per middleware, single server): what the stamps leave outside queue and
  service, D = R_mw - Q - S. It holds the net thread's read, parse and enqueue but also the
  worker's reply building and writing, so U = (X / MW) D is an upper bound.
- **worker pool** (an m-server station, m = WT per middleware): a worker holds a request from
  dequeued to written, D = R_mw - Q (its round trip to the servers, S, plus the reply; the net
  thread's received-to-enqueued share is left in, it is one selector round at most);
  U = (X / MW) D / WT. An open-loop point's clients pipeline: a request read by the net thread
  waits on its connection behind the earlier ones, and R_mw - Q holds that wait too (tens of ms
  near the knee), so there D = S, the part a worker surely holds, and the net thread's demand
  is not shown.
- **backend servers**: each server's CPU seconds per second over its threads (CPU samples);
  without samples they are not shown. Their work is CPU work inside a worker's holding time.
- **host CPU** (the experiment's share of the machine, a load-dependent station): the cores left
  to the experiment, c = cores - (machine busy - experiment), from /proc/stat and the processes'
  /proc samples over the point's measured interval (c = cores when the samples have no `host`
  row). "The experiment" is the threads a request passes through (the loadgens' event loops, the
  middleware's net thread and workers, memcached's workers, redis's main thread: the `path_*`
  columns of `cpu.csv`); the processes' other threads (JIT compilers, GC, stats reporters,
  memcached's LRU maintainer) take cores away like other people's processes. Without the path
  columns every thread of the processes counts. With a middleware, a worker holds its request
  through its own CPU work and the backends' (synchronous workers), and that time is already in
  the pool's demand; the CPU station holds the rest of the experiment's CPU (the loadgens, the
  net thread), D_cpu = (experiment - pool threads - backends) CPU seconds
  per completed request, on m = c - (pool threads + backends) cores; its measured wait is the
  run-queue wait (schedstat) of the same threads per request. Without a middleware D_cpu is all
  of the experiment's CPU per request on m = c cores. U = X D_cpu / m. The station needs the
  schedstat and worker-thread columns of `cpu.csv`; without them it is not modelled and the row
  shows the experiment's CPU over c.
- **shaped links** (a local run under `--bandwidth`): each link direction's htb class, one
  server at the link's rate C: D = the bytes it carried per loadgen request x 8 / C (its class's
  byte counter over the whole shaped run, divided by the loadgens' requests over the same run),
  U = X D. A link near 1 is the seeds' "server link" or "client link" bound (ASL 2017 §2.1: a
  memcached VM's ~100 Mbit/s caps read-only load at ~11,000 1 KB values per second). A link at
  U >= 0.9 is named the bottleneck before the worker pool, whose holding time includes the wait
  for the link (every worker busy waiting for a saturated link).
- **each process's CPU**: its CPU seconds per second over the machine's cores (shown, not a
  station of its own).
- **Kubernetes pods** (a run whose pods' CPU caps were recorded, `process_cpu_limit`): each pod
  runs on its own node under its own cap, not on one shared host, so there is no host CPU
  station. A backend's servers are its threads or its cap in cores, whichever is fewer; each
  pod's CPU row is over its cap; and the load generators' and the middlewares' pods are
  stations `pod CPU loadgen` / `pod CPU middleware` (m = the cap of the busiest pod of the role,
  U = its CPU over its cap, D its CPU seconds per request it served): a pod at its cap is as
  saturated as a full machine.

The bottleneck is the model's station (worker pool, host CPU) with the highest utilisation,
the same station whose queue the calibrated MVA predicts. The net thread and the backends are
shown but not candidates when the host CPU station is modelled (their work is CPU work, held
in the host CPU and the pool); without it they are candidates as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from cachelab.analysis.links import NO_LINKS, LinkDelays

MEMCACHED_DEFAULT_THREADS = 4
# a shaped link this busy is the bottleneck of whatever holds requests through it
LINK_SATURATED = 0.9
LINK_PREFIX = "link "  # a shaped link's station: "link server-0 out"


def server_egress(name: str) -> bool:
    """Whether a shaped link (cachelab.local.shaping's names, with or without LINK_PREFIX) is a
    server's egress: `server-<i> out`."""
    link = name.removeprefix(LINK_PREFIX)
    return link.startswith("server-") and link.endswith(" out")


def server_side_link(name: str) -> bool:
    """Whether a shaped link carries a middleware's requests to the servers or the servers'
    replies: the links a worker is held through."""
    return server_egress(name) or name.removeprefix(LINK_PREFIX) == "middlewares -> servers"


@dataclass(frozen=True)
class PointMeasurement:
    """What one point measured, means over its repetitions (times in ms, rates per second)."""

    point: int
    clients: int
    think_time_ms: float
    throughput_ops_per_s: float
    response_time_ms: float
    middlewares: int = 0
    workers: int = 0
    servers: int = 0
    mw_throughput_ops_per_s: float = math.nan
    mw_response_time_ms: float = math.nan
    mw_queue_time_ms: float = math.nan
    mw_service_time_ms: float = math.nan
    mw_queue_length: float = math.nan
    host_cores: int = 0
    # process name -> (role, CPU seconds per second)
    process_cpu: Mapping[str, tuple[str, float]] = field(default_factory=dict)
    server_threads: int = MEMCACHED_DEFAULT_THREADS
    # process name -> run-queue wait seconds per second of its threads (NaN: not measured)
    process_wait: Mapping[str, float] = field(default_factory=dict)
    # the middlewares' worker-pool threads: CPU and run-queue wait seconds per second
    pool_cores: float = math.nan
    pool_wait_cores: float = math.nan
    # process name -> (CPU, run-queue wait) seconds per second of its request-path threads
    process_path: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    # the queue time's part before the net thread published the request (NaN: not recorded)
    mw_staging_time_ms: float = math.nan
    # times per second the worker-pool threads were put on a CPU (schedstat; NaN: not measured)
    pool_slices_per_s: float = math.nan
    # Kubernetes: pod name -> its CPU cap in cores (empty: processes on one host)
    process_cpu_limit: Mapping[str, float] = field(default_factory=dict)
    # open loop: the clients pipeline, so a request read by the net thread may wait on its
    # connection behind the ones before it, and R_mw - Q holds that wait as well
    pipelined: bool = False
    # --event-loops of each middleware (0: the ASL design, a net thread and a worker pool)
    event_loops: int = 0
    # the links' RTTs the models put on the request's path (achieved, else the spec's), and
    # the spec's alone (configured or profile: what an a-priori prediction takes)
    links: LinkDelays = NO_LINKS
    spec_links: LinkDelays = NO_LINKS
    # shaped link name -> (bytes it carried per request, its rate in Mbit/s); empty: unshaped
    link_loads: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def worker_wakeup_wait_ms(self) -> float:
        """The worker threads' mean run-queue wait each time they were put on a CPU."""
        if not (self.pool_slices_per_s > 0 and math.isfinite(self.pool_wait_cores)):
            return math.nan
        return 1000.0 * self.pool_wait_cores / self.pool_slices_per_s

    @property
    def has_middleware(self) -> bool:
        return self.middlewares > 0 and all(
            math.isfinite(v)
            for v in (self.mw_response_time_ms, self.mw_queue_time_ms, self.mw_service_time_ms)
        )


@dataclass(frozen=True)
class Stage:
    """One stage of the point: demand per request (ms), servers, utilisation, kind."""

    name: str
    demand_ms: float
    servers: float
    utilisation: float
    kind: str  # "delay", "queue" (a station), "work" (shown, not a station) or "cpu"
    wait_ms: float = math.nan  # measured wait per request (host CPU: run-queue wait)
    # host CPU only: the cores left to the experiment, and the CPU ms per request of the threads
    # inside a worker's holding (pool threads, backends), which take held_demand_ms x X of them
    available_cores: float = math.nan
    held_demand_ms: float = 0.0

    @property
    def is_station(self) -> bool:
        return self.kind == "queue"


@dataclass(frozen=True)
class OperationalAnalysis:
    """Stages of one point and the bottleneck among them."""

    point: int
    stages: list[Stage]
    bottleneck: str | None

    def stage(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)

    def outside_ms(self) -> float:
        """Time outside the middleware per request (R - R_mw; R without a middleware)."""
        found = self.stage("clients+network")
        return found.demand_ms if found else math.nan

    def link_stations(self) -> list[Stage]:
        """The shaped links with a positive demand, as stations (none when unshaped)."""
        return [
            s
            for s in self.stages
            if s.name.startswith(LINK_PREFIX) and s.demand_ms > 0 and math.isfinite(s.demand_ms)
        ]

    def cpu_station(self) -> Stage | None:
        """The host CPU as a modelled station (None when its split was not measured)."""
        found = self.stage("host CPU")
        return found if found is not None and math.isfinite(found.wait_ms) else None


@dataclass(frozen=True)
class CpuShare:
    """The experiment's CPU at one point (cores = CPU seconds per second)."""

    available_cores: float  # cores - other processes' CPU
    experiment_cores: float
    held_cores: float  # used while a worker holds the request (pool threads, backends)
    wait_cores: float  # run-queue wait of every experiment thread
    held_wait_cores: float  # run-queue wait of the pool threads and backends


def cpu_share(m: PointMeasurement) -> CpuShare | None:
    """The split of the experiment's CPU (None without CPU samples). With the request-path
    columns, only the threads a request passes through are the experiment's; its other threads
    (JIT compilers, GC, stats reporters, memcached's LRU maintainer) take cores away like other
    people's processes."""
    rows = {n: v for n, v in m.process_cpu.items() if v[0] != "host"}
    if not m.host_cores or not rows or m.process_cpu_limit:
        return None
    whole = sum(cores for _, cores in rows.values())
    host_busy = next((c for r, c in m.process_cpu.values() if r == "host"), None)
    busy = host_busy if host_busy is not None else whole
    servers = [n for n, (role, _) in rows.items() if role == "server"]
    paths = [m.process_path.get(name, (math.nan, math.nan)) for name in rows]
    if all(math.isfinite(c) and math.isfinite(w) for c, w in paths):
        path = {name: m.process_path[name] for name in rows}
        experiment = sum(c for c, _ in path.values())
        wait = sum(w for _, w in path.values())
        held, held_wait = 0.0, 0.0
        if m.has_middleware:
            held = m.pool_cores + sum(path[n][0] for n in servers)
            held_wait = m.pool_wait_cores + sum(path[n][1] for n in servers)
        return CpuShare(m.host_cores - (busy - experiment), experiment, held, wait, held_wait)
    waits = [m.process_wait.get(name, math.nan) for name in rows]
    wait = sum(waits)  # NaN when any process's wait was not measured
    held, held_wait = 0.0, 0.0
    if m.has_middleware:
        held = m.pool_cores + sum(rows[n][1] for n in servers)
        held_wait = m.pool_wait_cores + sum(m.process_wait.get(n, math.nan) for n in servers)
    return CpuShare(m.host_cores - (busy - whole), whole, held, wait, held_wait)


def analyse(m: PointMeasurement) -> OperationalAnalysis:
    """Stages, utilisations and bottleneck of one point (see the module docstring)."""
    stages: list[Stage] = []
    x = m.throughput_ops_per_s
    share = cpu_share(m)
    cpu_modelled = share is not None and math.isfinite(share.wait_cores - share.held_wait_cores)
    cpu_modelled = cpu_modelled and share is not None and math.isfinite(share.held_cores)
    part = "work" if cpu_modelled else "queue"
    if m.has_middleware:
        outside_ms = max(0.0, m.response_time_ms - m.mw_response_time_ms)
        x_mw = m.mw_throughput_ops_per_s if math.isfinite(m.mw_throughput_ops_per_s) else x
        per_mw = x_mw / m.middlewares
        net_ms = max(0.0, m.mw_response_time_ms - m.mw_queue_time_ms - m.mw_service_time_ms)
        stages.append(
            Stage(
                "clients+network",
                outside_ms,
                m.clients,
                x * outside_ms / 1000.0 / m.clients,
                "delay",
            )
        )
        if m.event_loops > 0:
            # no net thread or worker holds a request through the server's round trip
            stages.append(_event_loops(m, x_mw))
        holding_ms = max(0.0, m.mw_response_time_ms - m.mw_queue_time_ms)
        if m.pipelined:
            # R_mw - Q - S holds the wait behind a connection's earlier requests: the net
            # thread's demand is not separable, and the pool's holding is at least S
            net_ms, holding_ms = math.nan, m.mw_service_time_ms
        if m.event_loops == 0:
            stages.append(Stage("net thread", net_ms, 1, per_mw * net_ms / 1000.0, part))
            stages.append(
                Stage(
                    "worker pool",
                    holding_ms,
                    m.workers * m.middlewares,
                    per_mw * holding_ms / 1000.0 / max(1, m.workers),
                    "queue",
                )
            )
    else:
        stages.append(
            Stage(
                "clients+network",
                m.response_time_ms,
                m.clients,
                x * m.response_time_ms / 1000.0 / max(1, m.clients),
                "delay",
            )
        )
    for name, (role, cores) in sorted(m.process_cpu.items()):
        if role == "server":
            demand = 1000.0 * cores / (x / max(1, m.servers)) if x > 0 else math.nan
            servers = min(m.server_threads, m.process_cpu_limit.get(name, math.inf))
            stages.append(Stage(f"backend {name}", demand, servers, cores / servers, part))
    stages += [_link(name, load, x) for name, load in sorted(m.link_loads.items())]
    if m.process_cpu_limit:
        stages += _pod_stages(m, x)
    if share is not None:
        for name, (role, cores) in sorted(m.process_cpu.items()):
            if role == "host":
                continue
            stages.append(
                Stage(
                    f"cpu {name}",
                    1000.0 * cores / x if x > 0 else math.nan,
                    1,
                    cores / m.host_cores,
                    "cpu",
                )
            )
        stages.append(_host_cpu(share, x, cpu_modelled))
    return OperationalAnalysis(m.point, stages, bottleneck_of(stages))


def _event_loops(m: PointMeasurement, x_mw: float) -> Stage:
    """The middlewares' event loops as one station: a loop does a request's work (read, decode,
    send, reply) but does not wait for the server, so its demand is the middlewares' CPU per
    request (NaN, no station, when not measured), over every middleware's loops."""
    loops = m.event_loops * m.middlewares
    cores = sum(c for role, c in m.process_cpu.values() if role == "middleware")
    demand_ms = 1000.0 * cores / x_mw if x_mw > 0 and cores > 0 else math.nan
    return Stage("event loops", demand_ms, loops, x_mw * demand_ms / 1000.0 / loops, "queue")


def _link(name: str, load: tuple[float, float], x: float) -> Stage:
    """A shaped link as a station of one server: its demand is the time its rate takes to send
    one request's bytes (D = bytes x 8 / rate), its utilisation X x D."""
    bytes_per_request, mbit = load
    demand_ms = bytes_per_request * 8.0 / (mbit * 1000.0)
    return Stage(f"{LINK_PREFIX}{name}", demand_ms, 1, x * demand_ms / 1000.0, "queue")


def _pod_stages(m: PointMeasurement, x: float) -> list[Stage]:
    """Kubernetes: each pod's CPU over its cap (shown), and a station per role of the load
    generators and middlewares, its busiest pod's."""
    stages = []
    for role in ("loadgen", "middleware"):
        pods = [
            (cores / limit, limit, cores)
            for name, (r, cores) in m.process_cpu.items()
            if r == role and (limit := m.process_cpu_limit.get(name, 0.0)) > 0
        ]
        if pods:
            utilisation, limit, cores = max(pods)
            demand = 1000.0 * cores / (x / len(pods)) if x > 0 else math.nan
            stages.append(Stage(f"pod CPU {role}", demand, limit, utilisation, "queue"))
    for name, (role, cores) in sorted(m.process_cpu.items()):
        limit = m.process_cpu_limit.get(name, 0.0)
        if role != "host" and limit > 0:
            demand = 1000.0 * cores / x if x > 0 else math.nan
            stages.append(Stage(f"cpu {name}", demand, limit, cores / limit, "cpu"))
    return stages


def _host_cpu(share: CpuShare, x: float, modelled: bool) -> Stage:
    """The host CPU station: the experiment's CPU outside a worker's holding on the cores left
    to it (see the module docstring); without the split, all of it over the available cores."""
    if not modelled:
        return Stage(
            "host CPU",
            1000.0 * share.experiment_cores / x if x > 0 else math.nan,
            share.available_cores,
            share.experiment_cores / share.available_cores,
            "queue",
        )
    cores = share.experiment_cores - share.held_cores
    servers = share.available_cores - share.held_cores
    return Stage(
        "host CPU",
        1000.0 * cores / x if x > 0 else math.nan,
        servers,
        cores / servers if servers > 0 else math.inf,
        "queue",
        1000.0 * (share.wait_cores - share.held_wait_cores) / x if x > 0 else math.nan,
        share.available_cores,
        1000.0 * share.held_cores / x if x > 0 else math.nan,
    )


def combine(analyses: list[OperationalAnalysis]) -> OperationalAnalysis:
    """One point's analysis from its repetitions' (each calibrated on its own): demands and
    utilisations averaged per stage, the bottleneck the station busiest on average."""
    if not analyses:
        raise ValueError("analyses: need at least one repetition")
    names: list[str] = []
    for analysis in analyses:
        names += [s.name for s in analysis.stages if s.name not in names]
    stages = []
    for name in names:
        found = [s for a in analyses if (s := a.stage(name)) is not None]
        stages.append(
            Stage(
                name,
                sum(s.demand_ms for s in found) / len(found),
                sum(s.servers for s in found) / len(found),
                sum(s.utilisation for s in found) / len(found),
                found[0].kind,
                sum(s.wait_ms for s in found) / len(found),
                sum(s.available_cores for s in found) / len(found),
                sum(s.held_demand_ms for s in found) / len(found),
            )
        )
    return OperationalAnalysis(analyses[0].point, stages, bottleneck_of(stages))


def bottleneck_of(stages: list[Stage]) -> str | None:
    """The busiest station; a saturated shaped link (U >= LINK_SATURATED) before any other. A
    link's demand is pure service (bytes over its rate), while the worker pool's is a holding
    time that includes the wait for the link downstream: with the link saturated every worker
    is busy waiting for it, and the pool's utilisation reaches 1 because of the link."""
    stations = [s for s in stages if s.is_station and math.isfinite(s.utilisation)]
    links = [
        s for s in stations if s.name.startswith(LINK_PREFIX) and s.utilisation >= LINK_SATURATED
    ]
    busiest = max(links or stations, key=lambda s: s.utilisation, default=None)
    return busiest.name if busiest is not None else None
