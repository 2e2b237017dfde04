"""An a-priori prediction of a whole throughput and response-time curve from the links' RTTs.

The closed network of cachelab.analysis.models, calibrated at a line's lowest load (its service
demands: the worker's holding time without the middleware -> server RTT, the CPU station, the
time outside the stations without the client's RTT), is given the RTTs of a profile or a spec
(`with_links`) and solved with MVA for every population 1..N, beside its asymptotic bounds:

    X(N) <= min(N / (D + Z), m / D_pool, 1 / D_link, ...),
    D_pool = RTT_mw_server + S_server + S_worker,  D_link = bytes per request x 8 / rate,
    Z = RTT_client + the rest of the time outside the stations + think time,
    R(N) = N / X(N) - think time,  R(N) >= max(D + Z - think, N / X_max - think),

and the knee N* = (D + Z) X_max where the two bounds meet. Without a measurement,
`network_model` builds the same network from a worker's service time and the RTTs alone (the
seeds' back-of-envelope numbers: ASL 2017 §3.1.1, 8 workers / 2 ms = 4,000 req/s).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cachelab.analysis import queueing
from cachelab.analysis.bounds import require_non_negative
from cachelab.analysis.links import NO_LINKS, LinkDelays
from cachelab.analysis.models import POOL, ClosedModel, closed_model, with_links, without_host_cpu
from cachelab.analysis.operational import OperationalAnalysis, PointMeasurement
from cachelab.columns import THINK_TIME_MS

SATURATION_FRAC = 0.95  # the MVA knee: the least N reaching this share of the ceiling


@dataclass(frozen=True)
class CurvePrediction:
    """A predicted curve over clients 1..N: MVA and its asymptotic bounds, with the RTTs it
    used and those taken out of its calibration."""

    clients: tuple[int, ...]
    throughput_ops_per_s: tuple[float, ...]
    response_time_ms: tuple[float, ...]
    bound_throughput_ops_per_s: tuple[float, ...]
    bound_response_time_ms: tuple[float, ...]
    ceiling_ops_per_s: float  # min_k m_k / D_k
    knee_clients: float  # N* = (D + Z) X_max, where the two bounds meet
    workers: float  # the worker pool's servers (NaN without a middleware)
    holding_ms: float  # a worker's holding time per request, RTT included (NaN: no pool)
    client_rtt_ms: float
    server_rtt_ms: float
    links: LinkDelays  # the RTTs the prediction used
    calibration_links: LinkDelays = NO_LINKS  # the RTTs taken out of the calibration
    calibrated_at: int | None = None  # the point whose demands it took (None: not measured)
    bottleneck: str = POOL  # the station whose ceiling is the lowest

    def saturation_clients(self, fraction: float = SATURATION_FRAC) -> int | None:
        """The MVA knee: the least N whose predicted throughput reaches `fraction` of the
        ceiling (None when the curve stops before)."""
        if not 0 < fraction <= 1:
            raise ValueError(f"fraction: {fraction!r} (expected: 0 < fraction <= 1)")
        target = fraction * self.ceiling_ops_per_s
        return next(
            (
                n
                for n, x in zip(self.clients, self.throughput_ops_per_s, strict=True)
                if x >= target
            ),
            None,
        )

    @property
    def max_throughput_ops_per_s(self) -> float:
        return max(self.throughput_ops_per_s)


def network_model(
    workers: int,
    worker_service_ms: float,
    links: LinkDelays = NO_LINKS,
    middlewares: int = 1,
    other_delay_ms: float = 0.0,
    think_time_ms: float = 0.0,
) -> ClosedModel:
    """The closed network from first principles: a worker pool of workers x middlewares
    servers holding each request for the middleware -> server RTT plus `worker_service_ms`
    (the server's service and the worker's CPU), and a delay of the client's RTT plus
    `other_delay_ms` plus the think time.

    Raises
    ------
    ValueError
        If workers or middlewares < 1, a time is negative, or the pool would hold a request
        for no time at all.
    """
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    if middlewares < 1:
        raise ValueError(f"middlewares: must be >= 1, got {middlewares}")
    for name, value in (
        ("worker_service_ms", worker_service_ms),
        ("other_delay_ms", other_delay_ms),
        (THINK_TIME_MS, think_time_ms),
    ):
        require_non_negative(name, value)
    client, server = links.client_rtt_ms(middlewares), links.server_rtt_ms(middlewares)
    holding = worker_service_ms + server
    if not holding > 0:
        raise ValueError(
            "worker_service_ms: 0 with no middleware -> server RTT (expected: a worker holds "
            "each request for some time)"
        )
    return ClosedModel(
        [POOL],
        [holding],
        [float(workers * middlewares)],
        client + other_delay_ms + think_time_ms,
        1,
        think_time_ms,
        client_rtt_ms=client,
        server_rtt_ms=server,
        links=links,
    )


def predict_curve(
    calibration: ClosedModel,
    max_clients: int,
    links: LinkDelays | None = None,
    calibrated_at: int | None = None,
) -> CurvePrediction:
    """MVA and the asymptotic bounds for 1..max_clients clients of `calibration` with the
    links' RTTs replaced by `links` (None: its own).

    Raises
    ------
    ValueError
        If max_clients < 1, or the new RTTs leave the worker pool without demand.

    Examples
    --------
    >>> from cachelab.analysis.links import LinkDelays
    >>> model = network_model(8, 0.0, LinkDelays.of(mw_server=2.0))
    >>> round(predict_curve(model, 16).ceiling_ops_per_s)
    4000
    """
    if max_clients < 1:
        raise ValueError(f"max_clients: must be >= 1, got {max_clients}")
    model = calibration if links is None else with_links(calibration, links)
    ns = tuple(range(1, max_clients + 1))
    xs = _throughputs(model, max_clients)
    think = model.think_time_ms
    cycle_floor_ms = sum(model.demands_ms) + model.delay_ms
    ceiling = model.throughput_bound_ops_per_s(10**9)
    k = model.station(POOL)
    return CurvePrediction(
        clients=ns,
        throughput_ops_per_s=tuple(xs),
        response_time_ms=tuple(1000.0 * n / x - think for n, x in zip(ns, xs, strict=True)),
        bound_throughput_ops_per_s=tuple(model.throughput_bound_ops_per_s(n) for n in ns),
        bound_response_time_ms=tuple(max(cycle_floor_ms, 1000.0 * n / ceiling) - think for n in ns),
        ceiling_ops_per_s=ceiling,
        knee_clients=cycle_floor_ms * ceiling / 1000.0,
        workers=model.servers[k] if k is not None else math.nan,
        holding_ms=model.demands_ms[k] if k is not None else math.nan,
        client_rtt_ms=model.client_rtt_ms,
        server_rtt_ms=model.server_rtt_ms,
        links=model.links,
        calibration_links=calibration.links if links is not None else NO_LINKS,
        calibrated_at=calibrated_at,
        bottleneck=model.bottleneck(),
    )


def _throughputs(model: ClosedModel, max_clients: int) -> Sequence[float]:
    """X(N) for 1..max_clients: one MVA solution for all N, or each N's fixed point when the
    host CPU station shares its cores with the pool."""
    if model.cpu_held_ms > 0 and math.isfinite(model.cpu_available_cores):
        return model.throughput_curve(max_clients)
    solved = queueing.mva(
        [d / 1000.0 for d in model.demands_ms], model.delay_ms / 1000.0, max_clients, model.servers
    )
    return [float(x) for x in solved.throughput_per_s]


def seed_machines(closed: ClosedModel) -> ClosedModel | None:
    """A calibrated network on machines of its own per role (`without_host_cpu`); None when the
    host CPU was its only station (a baseline without shaped links: nothing but delays left)."""
    model = without_host_cpu(closed)
    return model if model.names else None


def seed_ceiling(m: PointMeasurement, analysis: OperationalAnalysis) -> tuple[float, str] | None:
    """The a-priori ceiling of a point's network on the seed's machines and links: the model
    calibrated at this point (`closed_model`, shaped links as stations), its host CPU a delay
    (`without_host_cpu`), the spec's RTTs put in place of the point's own (`with_links`);
    the ceiling min_k m_k / D_k in ops/s and the station it comes from. None when the point has
    no model, no station but the host CPU, or the RTTs would leave its worker pool without
    demand."""
    closed = closed_model(m, analysis)
    model = seed_machines(closed) if closed is not None else None
    if model is None:
        return None
    if m.spec_links:
        try:
            model = with_links(model, m.spec_links)
        except ValueError:
            return None
    return model.throughput_bound_ops_per_s(10**9), model.bottleneck()
