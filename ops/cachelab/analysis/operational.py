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
  U = (X / MW) D / WT.
- **backend servers**: each server's CPU seconds per second over its threads (CPU samples);
  without samples they are not shown.
- **host CPU** (m = cores): the whole machine's busy CPU seconds per second over the cores (every
  process, also other people's, when the samples have the `host` row), else the sum of the run's
  processes.
- **each process's CPU**: its CPU seconds per second over the machine's cores (shown, not a
  station of its own).

The bottleneck is the queueing station (net thread, worker pool, a backend, the host CPU) with
the highest utilisation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

MEMCACHED_DEFAULT_THREADS = 4


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
    servers: int
    utilisation: float
    kind: str  # "delay", "queue" or "cpu"

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
        """The delay outside the modelled stations, per request: clients and network plus Z."""
        found = self.stage("clients+network")
        return found.demand_ms if found else math.nan


def analyse(m: PointMeasurement) -> OperationalAnalysis:
    """Stages, utilisations and bottleneck of one point (see the module docstring)."""
    stages: list[Stage] = []
    x = m.throughput_ops_per_s
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
        stages.append(Stage("net thread", net_ms, 1, per_mw * net_ms / 1000.0, "queue"))
        holding_ms = max(0.0, m.mw_response_time_ms - m.mw_queue_time_ms)
        stages.append(
            Stage(
                "worker pool",
                holding_ms,
                m.workers,
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
    total_cores = 0.0
    host_busy = next((c for r, c in m.process_cpu.values() if r == "host"), None)
    for name, (role, cores) in sorted(m.process_cpu.items()):
        if role == "host":
            continue
        total_cores += cores
        if role == "server":
            demand = 1000.0 * cores / (x / max(1, m.servers)) if x > 0 else math.nan
            stages.append(
                Stage(
                    f"backend {name}", demand, m.server_threads, cores / m.server_threads, "queue"
                )
            )
    if m.host_cores and m.process_cpu:
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
        busy = host_busy if host_busy is not None else total_cores
        stages.append(
            Stage(
                "host CPU",
                1000.0 * busy / x if x > 0 else math.nan,
                m.host_cores,
                busy / m.host_cores,
                "queue",
            )
        )
    stations = [s for s in stages if s.is_station and math.isfinite(s.utilisation)]
    bottleneck = max(stations, key=lambda s: s.utilisation).name if stations else None
    return OperationalAnalysis(m.point, stages, bottleneck)


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
                found[0].servers,
                sum(s.utilisation for s in found) / len(found),
                found[0].kind,
            )
        )
    stations = [s for s in stages if s.is_station and math.isfinite(s.utilisation)]
    bottleneck = max(stations, key=lambda s: s.utilisation).name if stations else None
    return OperationalAnalysis(analyses[0].point, stages, bottleneck)
