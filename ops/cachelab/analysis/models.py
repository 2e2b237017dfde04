"""Queueing models of one measured point, each set beside the measurement with its error.

- **MVA, calibrated per point**: a closed network with the point's own measured demands
  (operational.py says how each is measured):
  - the **host CPU**, a load-dependent station of m = the cores left to the experiment's
    request-path threads (cores minus everything else's CPU, /proc/stat) minus those the pool
    threads and backends use; its demand D_cpu is the rest of the request-path CPU seconds per
    completed request (the loadgens' event loops, the net thread; /proc/<pid>/task/*/stat);
  - the **worker pool**, m = WT x MW servers whose demand is a worker's holding time (dequeued
    to written, R_mw - Q: its own CPU work, the backends' and their CPU waits, the round trip);
  - a **delay** for what neither holds: Z' = (R_client - R_mw) - D_cpu - W_cpu + Z, where
    W_cpu is the measured run-queue wait (schedstat) of the CPU station's threads per request;
    without a middleware Z' = R_client - D_cpu - W_cpu + Z and the CPU station holds all of the
    experiment's CPU.
  Nothing is fitted to the throughput being predicted: every input is a CPU counter, a
  schedstat counter or a middleware timestamp of the point itself. Without schedstat and
  worker-thread samples (older results, Kubernetes) the CPU station is left out and the delay
  is R_client - R_mw + Z, the model before the CPU station. Solved exactly at the point's N, per
  repetition, then averaged over the repetitions; predicted throughput, response time, the
  wait for a worker and the wait for a CPU (against the measured schedstat wait).
- **MVA out of sample**: the same network calibrated at one point (the line's lowest load)
  predicting every other point's throughput, response time and per-station waits; the
  per-point calibration takes Z' from the point's own response time, so its throughput agrees
  largely by construction, while this one earns trust by predicting what it was not
  calibrated on.
- **The links' RTTs** (cachelab.analysis.links; spec `network`): the client's link is a delay
  station, part of the delay Z' + Z; the middleware -> server link is inside the worker pool's
  demand (a worker is held for the round trip). A calibrated model's measured times already
  hold them, so its numbers do not change: it records how much of each measured time is the
  link's RTT (the RTT, or all of the time when less was measured: a run whose RTT was not
  emulated), so that `with_links` can put other RTTs in their place
  (cachelab.analysis.prediction). A run without RTTs has the model without links.
- **Asymptotic bounds** per line (`line_bounds`): X <= min(N / (D + Z), 1 / D_max), from the
  least cycle time and the highest ceiling over the line's points, so that they bound every
  measured point.
- **M/M/1** (the ASL 2017 §7 model: the pool as one server of rate WT / S) and **M/M/m**
  (m = WT servers of rate 1 / S), fed by the measured per-middleware arrival rate: predicted
  queue time, queue length and middleware response time (queue + service).

`model_rows` gives the rows of `report/models.csv`; `explain` writes one sentence per model
saying where and why it departs from the measurement.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from cachelab.analysis import queueing
from cachelab.analysis.bounds import require_non_negative
from cachelab.analysis.links import NO_LINKS, LinkDelays
from cachelab.analysis.operational import (
    OperationalAnalysis,
    PointMeasurement,
    server_side_link,
)
from cachelab.columns import MW_RESPONSE_TIME_MS, RESPONSE_TIME_MS, THROUGHPUT_OPS_PER_S

MVA_TARGET_PCT = 15.0
OOS_THROUGHPUT_TARGET_PCT = 15.0
OOS_RESPONSE_TIME_TARGET_PCT = 20.0
MVA_SMALL_PCT = 5.0  # the sentence says why the model departs beyond this
STAGING_SMALL = 0.1  # staging under this share of the queue time is "a small part"
CPU, POOL = "host CPU", "worker pool"
MODELS = ("MVA", "M/M/1", "M/M/m")


@dataclass(frozen=True)
class ModelRow:
    """One line of models.csv."""

    point: int
    model: str
    metric: str
    measured: float
    predicted: float
    calibrated_at: int | None = None  # the point whose demands the model took (None: its own)

    @property
    def error_pct(self) -> float:
        """(predicted - measured) / measured, in percent."""
        if not (math.isfinite(self.measured) and math.isfinite(self.predicted)):
            return math.nan
        if self.measured == 0:
            return math.nan
        return 100.0 * (self.predicted - self.measured) / self.measured


FIXED_POINT_STEPS = 40  # bisection steps: the fixed point to 2^-40 of the CPU's ceiling


@dataclass(frozen=True)
class ClosedModel:
    """The calibrated closed network of one point.

    With a host CPU station whose cores are shared with the threads inside a worker's holding
    (`cpu_held_ms` > 0), the station's server count depends on the throughput the model runs at:
    m_cpu(X) = available - X x held (the pool threads and backends take held CPU ms per
    request, at the predicted X, not at the measured one). The model is solved at the fixed
    point X = MVA(m_cpu(X)), found by bisection (MVA's X falls as m_cpu falls, so there is
    exactly one).

    The links' RTTs (cachelab.analysis.links) are parts of the stations already there: the
    client's link's RTT is part of `delay_ms` (a delay station), the middleware -> server
    link's is part of the worker pool's demand (a worker is held through the round trip, so
    the pool's ceiling is m / (RTT + the server's service + the worker's CPU))."""

    names: list[str]
    demands_ms: list[float]
    servers: list[float]  # the host CPU's at the measured throughput
    delay_ms: float  # Z' + Z: time outside the stations, think time included
    clients: int
    think_time_ms: float = 0.0
    # how far the CPU station's measured CPU and wait exceed the time they are taken from
    # (CPU off any request's path); the delay Z' is 0 then, and this says by how much
    overlap_ms: float = 0.0
    cpu_available_cores: float = math.nan
    cpu_held_ms: float = 0.0
    client_rtt_ms: float = 0.0  # the client's link's RTT, inside delay_ms
    server_rtt_ms: float = 0.0  # the middleware -> server RTT, inside the pool's demand
    links: LinkDelays = NO_LINKS  # where those RTTs come from

    def __post_init__(self) -> None:
        for name in ("client_rtt_ms", "server_rtt_ms"):
            require_non_negative(name, getattr(self, name))
        if self.client_rtt_ms > self.delay_ms:
            raise ValueError(
                f"client_rtt_ms: {self.client_rtt_ms!r} (expected: <= delay_ms, "
                f"{self.delay_ms!r}, the delay it is part of)"
            )
        if self.server_rtt_ms > 0:
            k = self.station(POOL)
            if k is None:
                raise ValueError("server_rtt_ms: needs a worker pool station to hold it")
            if self.server_rtt_ms > self.demands_ms[k]:
                raise ValueError(
                    f"server_rtt_ms: {self.server_rtt_ms!r} (expected: <= the worker pool's "
                    f"demand, {self.demands_ms[k]!r}, the holding time it is part of)"
                )

    @property
    def _shared_cpu(self) -> int | None:
        k = self.station(CPU)
        if k is None or not self.cpu_held_ms > 0 or not math.isfinite(self.cpu_available_cores):
            return None
        return k

    def servers_at(self, throughput_ops_per_s: float) -> list[float]:
        """Each station's servers when the network runs at this throughput."""
        servers = list(self.servers)
        k = self._shared_cpu
        if k is not None:
            held_cores = throughput_ops_per_s * self.cpu_held_ms / 1000.0
            servers[k] = self.cpu_available_cores - held_cores
        return servers

    def _demands_s(self) -> list[float]:
        return [d / 1000.0 for d in self.demands_ms]

    def throughput_ops_per_s(self, clients: int) -> float:
        """X at the fixed point for `clients` (plain MVA without a shared CPU station)."""
        k = self._shared_cpu
        if k is None:
            return queueing.mva_throughput(
                self._demands_s(), self.delay_ms / 1000.0, clients, self.servers
            )
        low, high = 0.0, 1000.0 * self.cpu_available_cores / self.cpu_held_ms
        for _ in range(FIXED_POINT_STEPS):
            middle = (low + high) / 2.0
            servers = self.servers_at(middle)
            x = (
                queueing.mva_throughput(self._demands_s(), self.delay_ms / 1000.0, clients, servers)
                if servers[k] > 0
                else 0.0
            )
            low, high = (middle, high) if x > middle else (low, middle)
        return low

    def solve(self, clients: int | None = None) -> queueing.MVAResult:
        """MVA at the fixed point of `clients` (the point's N by default); the result's row
        N - 1 is that population's, the rows below it share its server counts."""
        n = clients or self.clients
        servers = self.servers_at(self.throughput_ops_per_s(n)) if self._shared_cpu else None
        return queueing.mva(self._demands_s(), self.delay_ms / 1000.0, n, servers or self.servers)

    def throughput_curve(self, max_clients: int) -> list[float]:
        """X (ops/s) for 1..max_clients clients, each at its own fixed point."""
        return [self.throughput_ops_per_s(n) for n in range(1, max_clients + 1)]

    def ceilings_ops_per_s(self) -> list[float]:
        """Each station's throughput ceiling m_k / D_k (inf for no demand); the host CPU's
        counts the held CPU too: X (D_cpu + held) <= available."""
        ceilings = [
            1000.0 * m / d if d > 0 else math.inf
            for d, m in zip(self.demands_ms, self.servers, strict=True)
        ]
        k = self._shared_cpu
        if k is not None:
            held_ms = self.demands_ms[k] + self.cpu_held_ms
            ceilings[k] = 1000.0 * self.cpu_available_cores / held_ms
        return ceilings

    def bottleneck(self) -> str:
        """The station with the lowest ceiling."""
        ceilings = self.ceilings_ops_per_s()
        return self.names[min(range(len(ceilings)), key=ceilings.__getitem__)]

    def throughput_bound_ops_per_s(self, clients: int) -> float:
        """min(N / (D + Z), min_k m_k / D_k)."""
        cycle_ms = sum(self.demands_ms) + self.delay_ms
        return min([1000.0 * clients / cycle_ms, *self.ceilings_ops_per_s()])

    def station(self, name: str) -> int | None:
        return self.names.index(name) if name in self.names else None


def closed_model(
    m: PointMeasurement, analysis: OperationalAnalysis, *, link_stations: bool = True
) -> ClosedModel | None:
    """The point's closed network from its own demands (None when it has no station with a
    positive demand). When the CPU station's measured CPU and run-queue wait per request exceed
    the time outside the middleware (threads off the request's path: JVM background threads,
    the net thread's selector rounds for other requests), Z' is 0 and `overlap_ms` says by how
    much they exceed it.

    With `link_stations`, each shaped link the point measured (operational.py's "link <name>"
    stages) is a station of one server whose demand is its transmission time per request
    (bytes x 8 / rate), its ceiling the link's rate. That time is taken out of the time that
    held it, so that the cycle at the calibration point stays as measured (a token bucket, htb
    or a cloud's egress limit, adds next to no latency below its rate; the station is there for
    its ceiling and the queueing near it): a link that carries the middleware's requests to the
    servers or the servers' replies out of a worker's holding time, any other link (every link
    without a middleware) out of the delay, neither below its RTT. Only the transmission time
    is moved: a request's measured wait for a busy link stays where it was measured, so a model
    calibrated where a link is busy counts that wait twice. Calibrate such a model at low load
    (the out-of-sample model, the bounds' ceiling, a search's probe) and solve a point at its
    own N without them."""
    names: list[str] = []
    demands: list[float] = []
    servers: list[float] = []
    pool = analysis.stage(POOL)
    server_rtt = 0.0
    if m.has_middleware and pool is not None and pool.demand_ms > 0:
        names.append(POOL)
        demands.append(pool.demand_ms)
        servers.append(float(m.workers * m.middlewares))
        server_rtt = min(m.links.server_rtt_ms(m.middlewares), pool.demand_ms)
    elif m.has_middleware:
        return None
    delay = analysis.outside_ms()
    cpu = analysis.cpu_station()
    available, held = math.nan, 0.0
    if cpu is not None and cpu.demand_ms > 0 and cpu.servers > 0:
        names.append(CPU)
        demands.append(cpu.demand_ms)
        servers.append(cpu.servers)
        delay -= cpu.demand_ms + cpu.wait_ms
        if POOL in names and math.isfinite(cpu.held_demand_ms):
            available, held = cpu.available_cores, cpu.held_demand_ms
    if not math.isfinite(delay):
        return None
    overlap = max(0.0, -delay)
    client_rtt = min(m.links.client_rtt_ms(m.middlewares), delay + overlap)
    if link_stations:
        k = names.index(POOL) if POOL in names else None
        in_pool = outside = 0.0  # the links' transmission times per request, by where they lie
        for link in analysis.link_stations():
            names.append(link.name)
            demands.append(link.demand_ms)
            servers.append(1.0)
            if k is not None and server_side_link(link.name):
                in_pool += link.demand_ms
            else:
                outside += link.demand_ms
        if k is not None:
            demands[k] -= min(in_pool, max(demands[k] - server_rtt, 0.0))
        delay -= min(outside, max(delay + overlap - client_rtt, 0.0))
    if not names:
        return None
    return ClosedModel(
        names,
        demands,
        servers,
        delay + overlap + m.think_time_ms,
        m.clients,
        m.think_time_ms,
        overlap,
        available,
        held,
        client_rtt,
        server_rtt,
        m.links,
    )


def with_links(closed: ClosedModel, links: LinkDelays) -> ClosedModel:
    """The same network with other links' RTTs: the model's own client RTT is taken out of
    the delay and the new one put in, and likewise the middleware -> server RTT in the worker
    pool's demand (D_pool = D_pool - RTT_old + RTT_new); everything else (the servers' and
    the workers' service, the CPU station, the think time) stays as calibrated.

    Raises
    ------
    ValueError
        If the worker pool would be left without demand (its whole holding time was the old
        RTT and the new one is 0).
    """
    k = closed.station(POOL)
    middlewares = 1 if k is not None else 0
    client, server = links.client_rtt_ms(middlewares), links.server_rtt_ms(middlewares)
    demands = list(closed.demands_ms)
    if k is not None:
        demands[k] = max(demands[k] - closed.server_rtt_ms, 0.0) + server
        if not demands[k] > 0:
            raise ValueError(
                f"worker pool demand: {demands[k]!r} ms with the RTTs {links.describe()} "
                "(expected: > 0; the calibration's holding time was all round trip)"
            )
    return dataclasses.replace(
        closed,
        demands_ms=demands,
        delay_ms=max(closed.delay_ms - closed.client_rtt_ms, 0.0) + client,
        client_rtt_ms=client,
        server_rtt_ms=server,
        links=links,
    )


def without_host_cpu(closed: ClosedModel) -> ClosedModel:
    """The same network with its host CPU station's residence at the calibration point (its
    demand and the wait MVA gives it at the model's N) made a delay: the cycle at that point
    stays as calibrated, but the cores shared by every role of this machine no longer queue or
    cap the throughput. The network of roles on machines of their own, as the seeds ran them,
    where the CPU left over is the seed's and not this machine's (the emulator's included).
    Unchanged without a CPU station."""
    k = closed.station(CPU)
    if k is None:
        return closed
    solved = closed.solve()
    residence_ms = 1000.0 * float(solved.station_response_time_s[closed.clients - 1, k])
    keep = [i for i in range(len(closed.names)) if i != k]
    return dataclasses.replace(
        closed,
        names=[closed.names[i] for i in keep],
        demands_ms=[closed.demands_ms[i] for i in keep],
        servers=[closed.servers[i] for i in keep],
        delay_ms=closed.delay_ms + residence_ms,
        cpu_available_cores=math.nan,
        cpu_held_ms=0.0,
    )


@dataclass(frozen=True)
class Prediction:
    """What a closed model predicts at one population: throughput, the client's response time
    and each station's wait (residence minus demand)."""

    clients: int
    throughput_ops_per_s: float
    response_time_ms: float
    waits_ms: dict[str, float]


def predict(closed: ClosedModel, clients: int) -> Prediction:
    """Solve the model at `clients` (its fixed point when the CPU is shared)."""
    solved = closed.solve(clients)
    x, r_s = solved.at(clients)
    waits = {}
    for k, name in enumerate(closed.names):
        wait = 1000.0 * float(solved.station_response_time_s[clients - 1, k]) - closed.demands_ms[k]
        waits[name] = 0.0 if abs(wait) < 1e-9 else wait
    return Prediction(clients, x, 1000.0 * r_s + closed.delay_ms - closed.think_time_ms, waits)


OUT_OF_SAMPLE = "MVA out of sample"


def out_of_sample_rows(
    calibrated: ClosedModel,
    calibrated_at: int,
    targets: Sequence[tuple[PointMeasurement, OperationalAnalysis]],
) -> list[ModelRow]:
    """The model calibrated at one point (the line's lowest load) predicting every point of
    the line: throughput, response time, the wait for a worker (against the middleware's queue
    time) and the wait for a CPU (against the schedstat run-queue wait)."""
    rows = []
    for m, analysis in targets:
        if m.clients < 1:
            continue
        p = predict(calibrated, m.clients)
        found = [
            (THROUGHPUT_OPS_PER_S, m.throughput_ops_per_s, p.throughput_ops_per_s),
            (RESPONSE_TIME_MS, m.response_time_ms, p.response_time_ms),
        ]
        if POOL in p.waits_ms:
            found.append(("queue_time_ms", m.mw_queue_time_ms, p.waits_ms[POOL]))
        cpu = analysis.cpu_station()
        if CPU in p.waits_ms and cpu is not None:
            found.append(("cpu_wait_ms", cpu.wait_ms, p.waits_ms[CPU]))
        rows += [
            ModelRow(m.point, OUT_OF_SAMPLE, metric, measured, predicted, calibrated_at)
            for metric, measured, predicted in found
        ]
    return rows


@dataclass(frozen=True)
class LineBounds:
    """Asymptotic bounds of one line of points (Jain §33.6) that bound every measured point:
    the cycle-time floor is the least of the points' modelled ΣD + Z' + Z, measured R + Z and
    N/X (the cycle each point's throughput implies), so no point's N/X lies below it; the
    throughput ceiling is the largest of the points' min_k m_k/D_k (each point's own ceiling
    is above its throughput when its utilisations are at most 1)."""

    cycle_floor_ms: float
    ceiling_ops_per_s: float
    think_time_ms: float

    def throughput_ops_per_s(self, clients: float) -> float:
        return min(1000.0 * clients / self.cycle_floor_ms, self.ceiling_ops_per_s)

    def response_time_ms(self, clients: float) -> float:
        return max(
            self.cycle_floor_ms - self.think_time_ms,
            1000.0 * clients / self.ceiling_ops_per_s - self.think_time_ms,
        )


def line_bounds(points: Sequence[tuple[PointMeasurement, ClosedModel | None]]) -> LineBounds | None:
    """The bounds of one line from its points' measurements and calibrated models (None when
    no point has a model: measurements alone bound nothing they did not measure)."""
    if all(closed is None for _, closed in points):
        return None
    floors, ceilings, think = [], [], 0.0
    for m, closed in points:
        think = m.think_time_ms
        if m.throughput_ops_per_s > 0:
            floors.append(1000.0 * m.clients / m.throughput_ops_per_s)
            ceilings.append(m.throughput_ops_per_s)
        if math.isfinite(m.response_time_ms):
            floors.append(m.response_time_ms + m.think_time_ms)
        if closed is not None:
            floors.append(sum(closed.demands_ms) + closed.delay_ms)
            ceilings.append(closed.throughput_bound_ops_per_s(10**9))
    floors = [f for f in floors if math.isfinite(f) and f > 0]
    ceilings = [c for c in ceilings if math.isfinite(c) and c > 0]
    if not floors or not ceilings:
        return None
    return LineBounds(min(floors), max(ceilings), think)


def model_rows(m: PointMeasurement, analysis: OperationalAnalysis) -> list[ModelRow]:
    """MVA, bounds, M/M/1 and M/M/m of one point beside its measurement."""
    rows: list[ModelRow] = []
    # at its own N, a point's measured times already hold its queueing for a busy link
    closed = closed_model(m, analysis, link_stations=False)
    if closed is None:
        return rows
    solved = closed.solve()
    x_pred, r_pred_s = solved.at(m.clients)  # at the fixed point (tests/analysis/test_closed_model)

    def wait_ms(name: str) -> float:
        k = closed.station(name)
        if k is None:
            return math.nan
        residence = 1000.0 * float(solved.station_response_time_s[m.clients - 1, k])
        wait = residence - closed.demands_ms[k]
        return 0.0 if abs(wait) < 1e-9 else wait  # no wait: what is left is rounding

    # the delay holds Z' and Z; the client's response time excludes only Z
    r_client_pred = 1000.0 * r_pred_s + closed.delay_ms - closed.think_time_ms
    rows += [
        ModelRow(m.point, "MVA", THROUGHPUT_OPS_PER_S, m.throughput_ops_per_s, x_pred),
        ModelRow(m.point, "MVA", RESPONSE_TIME_MS, m.response_time_ms, r_client_pred),
    ]
    if closed.station(POOL) is not None:
        rows.append(ModelRow(m.point, "MVA", "queue_time_ms", m.mw_queue_time_ms, wait_ms(POOL)))
    cpu = analysis.cpu_station()
    if closed.station(CPU) is not None and cpu is not None:
        rows.append(ModelRow(m.point, "MVA", "cpu_wait_ms", cpu.wait_ms, wait_ms(CPU)))
        if closed.station(POOL) is not None:
            # all the waiting, wherever the model and the measurement put it
            rows.append(
                ModelRow(
                    m.point,
                    "MVA",
                    "wait_ms",
                    cpu.wait_ms + m.mw_queue_time_ms,
                    wait_ms(CPU) + wait_ms(POOL),
                )
            )
    if closed.station(POOL) is not None and math.isfinite(m.mw_staging_time_ms):
        # the queue time after publishing against a woken worker's wait for a CPU (schedstat,
        # per time a worker thread was put on a CPU) plus the model's wait for a worker
        rows.append(
            ModelRow(
                m.point,
                "wake-up",
                "publish_wait_ms",
                m.mw_queue_time_ms - m.mw_staging_time_ms,
                m.worker_wakeup_wait_ms + wait_ms(POOL),
            )
        )
    if not m.has_middleware:
        return rows
    x_mw = m.mw_throughput_ops_per_s if math.isfinite(m.mw_throughput_ops_per_s) else math.nan
    arrivals = x_mw / m.middlewares
    service_s = m.mw_service_time_ms / 1000.0
    measured = {
        "queue_time_ms": m.mw_queue_time_ms,
        "queue_length": m.mw_queue_length,
        MW_RESPONSE_TIME_MS: m.mw_queue_time_ms + m.mw_service_time_ms,
    }
    for model in ("M/M/1", "M/M/m"):
        predicted = dict.fromkeys(measured, math.nan)
        stable = math.isfinite(arrivals) and arrivals > 0 and arrivals * service_s < m.workers
        if stable and model == "M/M/1":
            q1 = queueing.mm1(arrivals, m.workers / service_s)
            predicted = {
                "queue_time_ms": 1000.0 * q1.mean_waiting_time_s,
                "queue_length": q1.mean_jobs_in_queue,
                MW_RESPONSE_TIME_MS: 1000.0 * q1.mean_response_time_s,
            }
        elif stable:
            qm = queueing.mmm(arrivals, 1.0 / service_s, m.workers)
            predicted = {
                "queue_time_ms": 1000.0 * qm.mean_waiting_time_s,
                "queue_length": qm.mean_jobs_in_queue,
                MW_RESPONSE_TIME_MS: 1000.0 * qm.mean_response_time_s,
            }
        rows += [
            ModelRow(m.point, model, metric, measured[metric], predicted[metric])
            for metric in measured
        ]
    return rows


def explain_out_of_sample(
    rows: Sequence[ModelRow],
    analyses: dict[int, OperationalAnalysis],
    labels: dict[int, str],
) -> str:
    """The out-of-sample verdict against its target (throughput within ±15 %, response time
    within ±20 % at every predicted point) and, where it misses, which measured demand moved
    with load between the calibration point and the worst point."""
    oos = [r for r in rows if r.model == OUT_OF_SAMPLE and r.point != r.calibrated_at]
    parts = []
    misses: list[ModelRow] = []
    for metric, target, name in (
        (THROUGHPUT_OPS_PER_S, OOS_THROUGHPUT_TARGET_PCT, "throughput"),
        (RESPONSE_TIME_MS, OOS_RESPONSE_TIME_TARGET_PCT, "response time"),
    ):
        found = [r for r in oos if r.metric == metric and math.isfinite(r.error_pct)]
        if not found:
            continue
        inside = [r for r in found if abs(r.error_pct) <= target]
        worst = max(found, key=lambda r: abs(r.error_pct))
        parts.append(
            f"{name} within ±{target:.0f} % at {len(inside)} of {len(found)} points "
            f"(worst {worst.error_pct:+.1f} % at {labels.get(worst.point, worst.point)})"
        )
        if len(inside) < len(found):
            misses.append(worst)
    if not parts:
        return ""
    text = (
        "Out of sample (the model calibrated at each line's lowest load predicting the other "
        "points): " + "; ".join(parts) + "."
    )
    if not misses:
        return text + " The target is met at every point."
    worst = max(misses, key=lambda r: abs(r.error_pct))
    moved = _moved_demand(analyses, worst.calibrated_at, worst.point)
    text += " The target is missed"
    if moved:
        text += (
            f": between the calibration point and {labels.get(worst.point, worst.point)}, {moved}"
        )
    return text + "."


def _moved_demand(analyses: dict[int, OperationalAnalysis], at: int | None, point: int) -> str:
    """How each measured demand per request (and the time outside the stations) changed from
    the calibration point to `point`, the largest change first."""
    base, other = analyses.get(at) if at is not None else None, analyses.get(point)
    if base is None or other is None:
        return ""
    changes = []
    for stage in other.stages:
        own = base.stage(stage.name)
        if stage.kind == "cpu" or own is None or not own.demand_ms > 0:
            continue
        if math.isfinite(stage.demand_ms):
            changes.append((stage.demand_ms / own.demand_ms - 1.0, stage, own))
    if not changes:
        return ""
    changes.sort(key=lambda c: -abs(c[0]))
    said = ", ".join(
        f"the {stage.name}'s {'time outside the middleware' if stage.kind == 'delay' else 'demand'}"
        f" {own.demand_ms:.3f} -> {stage.demand_ms:.3f} ms ({100 * change:+.0f} %)"
        for change, stage, own in changes[:3]
    )
    return (
        f"the measured demands per request moved with load ({said}), and a model calibrated at "
        "one load holds them fixed"
    )


def _worst(rows: Sequence[ModelRow], model: str, metric: str) -> ModelRow | None:
    found = [
        r for r in rows if r.model == model and r.metric == metric and math.isfinite(r.error_pct)
    ]
    return max(found, key=lambda r: abs(r.error_pct)) if found else None


def explain(
    rows: Sequence[ModelRow],
    analyses: dict[int, OperationalAnalysis],
    labels: dict[int, str],
) -> dict[str, str]:
    """One sentence per model: how close it is and, where it departs most, why."""
    sentences: dict[str, str] = {}
    out_of_sample = explain_out_of_sample(rows, analyses, labels)
    if out_of_sample:
        sentences[OUT_OF_SAMPLE] = out_of_sample
    worst = _worst(rows, "MVA", THROUGHPUT_OPS_PER_S)
    if worst is not None:
        errors = [
            abs(r.error_pct)
            for r in rows
            if r.model == "MVA" and r.metric == THROUGHPUT_OPS_PER_S and math.isfinite(r.error_pct)
        ]
        inside = sum(e <= MVA_TARGET_PCT for e in errors)
        analysis = analyses.get(worst.point)
        where = labels.get(worst.point, f"point {worst.point}")
        text = (
            "In sample (calibrated at each point: its delay Z' comes from that point's own "
            "response time, so its throughput agrees largely by construction), MVA throughput "
            f"is within ±{MVA_TARGET_PCT:.0f} % of the measured at "
            f"{inside} of {len(errors)} points; it departs most at {where} "
            f"({worst.predicted:,.0f} predicted against {worst.measured:,.0f} ops/s, "
            f"{worst.error_pct:+.1f} %)"
        )
        if abs(worst.error_pct) <= MVA_SMALL_PCT or analysis is None:
            text += ", where the product-form assumptions (exponential service, stations that "
            text += "do not hold each other) cost little."
        else:
            text += ": " + _mva_departure(rows, worst, analysis)
        sentences["MVA"] = text
        waits = _wait_placement(rows, analyses)
        if waits:
            sentences["MVA waits"] = waits
    for model, assumption in (
        ("M/M/1", "one fast server of rate WT/S"),
        ("M/M/m", "WT servers of rate 1/S"),
    ):
        worst = _worst(rows, model, "queue_time_ms")
        if worst is None:
            continue
        analysis = analyses.get(worst.point)
        where = labels.get(worst.point, f"point {worst.point}")
        pool = analysis.stage("worker pool") if analysis else None
        text = (
            f"{model} ({assumption}, Poisson arrivals) predicts a queue time of "
            f"{worst.predicted:.3f} ms against {worst.measured:.3f} ms measured at {where} "
            f"({worst.error_pct:+.0f} %)"
        )
        if pool is not None and pool.utilisation < 0.5 and worst.measured > worst.predicted:
            text += (
                f": the pool is only {100 * pool.utilisation:.0f} % busy, so the measured wait "
                "is not for a worker but for a CPU or a scheduler wake-up (the bottleneck is "
                f"the {analysis.bottleneck if analysis else '?'}), which no open model of the "
                "pool can see."
            )
        elif pool is not None and worst.measured > worst.predicted:
            text += (
                ": it takes the service time S as a worker's busy time, but a worker holds a "
                f"request from dequeued to written (R_MW - Q; the pool is "
                f"{100 * pool.utilisation:.0f} % busy on that count), so the real pool is busier "
                "than the model's and its queue builds earlier."
            )
        elif worst.measured < worst.predicted:
            text += (
                ": the clients are a closed population, so arrivals slow down as the queue grows "
                "and the queue stays shorter than an open Poisson stream would build."
            )
        else:
            text += "."
        sentences[model] = text
    return sentences


def _wait_placement(rows: Sequence[ModelRow], analyses: dict[int, OperationalAnalysis]) -> str:
    """Where the model puts the waiting against where it was measured, summed over points, and
    where the middleware's queue time comes from (staging, then a woken worker's wait)."""
    cpu = [r for r in rows if (r.model, r.metric) == ("MVA", "cpu_wait_ms")]
    pool = [r for r in rows if (r.model, r.metric) == ("MVA", "queue_time_ms")]
    points = {r.point for r in cpu} & {r.point for r in pool}
    cpu = [r for r in cpu if r.point in points and math.isfinite(r.measured + r.predicted)]
    pool = [r for r in pool if r.point in points and math.isfinite(r.measured + r.predicted)]
    if not cpu or not pool:
        return ""
    cpu_miss = sum(r.predicted - r.measured for r in cpu)
    pool_miss = sum(r.predicted - r.measured for r in pool)
    measured = sum(r.measured for r in cpu + pool)
    text = (
        f"Summed over the {len(points)} points, the model's wait for a CPU is {cpu_miss:+.3f} ms "
        f"off the schedstat run-queue wait and its wait for a worker {pool_miss:+.3f} ms off "
        f"the middleware's queue time: together {cpu_miss + pool_miss:+.3f} ms of the "
        f"{measured:.3f} ms of waiting measured"
    )
    if cpu_miss > 0 > pool_miss and abs(cpu_miss + pool_miss) < 0.5 * abs(pool_miss):
        text += ", about the same waiting in another place"
    text += "."
    wake = [r for r in rows if (r.model, r.metric) == ("wake-up", "publish_wait_ms")]
    wake = [r for r in wake if r.point in points and math.isfinite(r.measured + r.predicted)]
    queue = sum(r.measured for r in pool if r.point in {w.point for w in wake})
    if not wake or queue <= 0:
        return text + (
            " The middleware's queue time holds CPU waits too (an idle worker woken by the net "
            "thread waits for a CPU before it dequeues; where N <= WT no request can wait for a "
            "worker, yet Q > 0), which the model counts at its CPU station."
        )
    after = sum(r.measured for r in wake)
    staging = queue - after
    woken = sum(r.predicted for r in wake)
    idle = [
        p
        for p in points
        if (a := analyses.get(p)) is not None
        and (s := a.stage(POOL)) is not None
        and s.servers >= _clients(a)
    ]
    batch = (
        "a small part: the requests of a selector round are published soon after they are "
        "decoded, so the round's batch release is not where they wait"
        if staging < STAGING_SMALL * queue
        else "a batch-release delay: requests wait for the rest of the net thread's round, "
        "which no station of the model holds"
    )
    text += (
        f" Where the queue time comes from: of its {queue:.3f} ms, {staging:.3f} ms "
        f"({100 * staging / queue:.0f} %) is staging, from the net thread's decode to the end "
        f"of its selector round ({batch}), and {after:.3f} ms the wait after publishing, "
        f"against {woken:.3f} ms that a woken worker waits for a CPU (the worker threads' "
        "schedstat wait per time they were put on a CPU) plus the model's wait for a worker"
    )
    if after > 0:
        text += f" ({woken / after:.0%} of it)"
    if idle:
        text += (
            f"; at the {len(idle)} points with at least as many workers as clients no request "
            "can wait for a worker, so there the queue time is the woken worker's wait for a "
            "core, the waiting the model has at its CPU station"
        )
    return text + "."


def _clients(analysis: OperationalAnalysis) -> float:
    """The point's clients (the clients+network delay has one server per client)."""
    found = analysis.stage("clients+network")
    return found.servers if found is not None else math.inf


def _row(rows: Sequence[ModelRow], point: int, metric: str) -> ModelRow | None:
    return next((r for r in rows if (r.point, r.model, r.metric) == (point, "MVA", metric)), None)


def _mva_departure(rows: Sequence[ModelRow], worst: ModelRow, analysis: OperationalAnalysis) -> str:
    """Which of the model's terms misses most at its worst point: the wait for a CPU, the wait
    for a worker (each against its measurement), or the rest of the predicted response time
    (the stations' demands and the delay, taken from the measurement and fixed)."""
    terms = []
    for metric, label in (("cpu_wait_ms", "a CPU"), ("queue_time_ms", "a worker")):
        row = _row(rows, worst.point, metric)
        if row is not None and math.isfinite(row.measured) and math.isfinite(row.predicted):
            terms.append((row.predicted - row.measured, f"the wait for {label}", row))
    bottleneck = (
        f"The bottleneck is the {analysis.bottleneck or 'unmeasured stage'}"
        f"{_stage_u(analysis, analysis.bottleneck)}"
    )
    response = _row(rows, worst.point, RESPONSE_TIME_MS)
    if not terms or response is None:
        return f"{bottleneck}, a station the model does not hold."
    said = "; ".join(
        f"it predicts {r.predicted:.3f} ms of {label.removeprefix('the ')} where "
        f"{r.measured:.3f} ms was measured"
        + (" (schedstat run-queue wait)" if label.endswith("CPU") else "")
        for _, label, r in terms
    )
    rest = (response.predicted - response.measured) - sum(t[0] for t in terms)
    miss, label = max([(t[0], t[1]) for t in terms] + [(rest, "rest")], key=lambda t: abs(t[0]))
    text = f"{said}. {bottleneck}. "
    if label == "rest":
        text += (
            f"The waits are not where it misses: its response time is {rest:+.3f} ms off "
            f"beyond them (of {response.measured:.3f} ms measured), in the demands and the delay "
            "it takes from the measurement"
        )
        if rest > 0:
            return text + (
                ": the CPU seconds per request of the threads a request passes through (loadgen "
                "event loops, net thread, workers, memcached's workers) and their run-queue waits "
                "add up to more than the time they are taken from, so part of that CPU runs off "
                "the request's path (a thread's work between requests, or every thread when "
                "the run has no request-path samples) and the model, which puts all of it on "
                "the path, is too slow."
            )
        return text + ": time is spent outside the stations and the measured CPU."
    text += f"It misses most in {label} ({miss:+.3f} ms of the {response.measured:.3f} ms "
    text += "response time)"
    if analysis.cpu_station() is None:
        return text + (
            ", and it holds no CPU station (the run has no schedstat samples), so waiting for a "
            "busy CPU is not predicted."
        )
    if label.endswith("CPU"):
        return text + (
            ": the CPU station is a fluid share of the cores left to the experiment (cores "
            "minus other processes' use), while the scheduler shares them with other people's "
            "processes in time slices."
        )
    return text + "."


def _stage_u(analysis: OperationalAnalysis, name: str | None) -> str:
    stage = analysis.stage(name) if name else None
    return f" ({100 * stage.utilisation:.0f} % busy)" if stage else ""


def combine_rows(per_repetition: Sequence[Sequence[ModelRow]]) -> list[ModelRow]:
    """One point's rows from its repetitions' (each model calibrated and solved per repetition):
    measured and predicted averaged per (model, metric), in the first repetition's order."""
    order: list[tuple[str, str]] = []
    values: dict[tuple[str, str], list[ModelRow]] = {}
    for rows in per_repetition:
        for r in rows:
            key = (r.model, r.metric)
            if key not in values:
                order.append(key)
            values.setdefault(key, []).append(r)
    combined = []
    for key in order:
        found = values[key]
        measured = [r.measured for r in found if math.isfinite(r.measured)]
        predicted = [r.predicted for r in found if math.isfinite(r.predicted)]
        combined.append(
            ModelRow(
                found[0].point,
                key[0],
                key[1],
                sum(measured) / len(measured) if measured else math.nan,
                sum(predicted) / len(predicted) if len(predicted) == len(found) else math.nan,
            )
        )
    return combined
