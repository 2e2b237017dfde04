"""Queueing models of the middleware: M/M/1, M/M/m (Erlang C), closed networks (MVA, bounds).

All rates are per second and all times in seconds unless a name says otherwise. The formulas
follow R. Jain, *The Art of Computer Systems Performance Analysis* (1991): M/M/1 in Box 31.1,
M/M/m in Box 31.2, mean value analysis in ch. 34, operational laws in ch. 33. The ASL 2017 report
(§7) modelled the middleware as one M/M/1 station with mu = WT / ST and as an M/M/m station with
m = WT workers of rate 1/ST; the ASL 2019 report did the same and added a closed network solved
with operational laws. Mean value analysis goes one step further: it predicts the whole
throughput curve of a closed system from its service demands and think time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def _require_positive(name: str, value: float) -> None:
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")


def _require_non_negative(name: str, value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")


def _require_stable(utilization: float) -> None:
    if utilization >= 1:
        raise ValueError(
            f"utilization: {utilization:.4f} (expected: < 1; the queue grows without bound)"
        )


# ---------------------------------------------------------------------------------------------
# M/M/1


@dataclass(frozen=True)
class MM1:
    """Steady state of an M/M/1 queue (Jain Box 31.1)."""

    arrival_rate_per_s: float
    service_rate_per_s: float

    @property
    def utilization(self) -> float:
        """rho = lambda / mu."""
        return self.arrival_rate_per_s / self.service_rate_per_s

    @property
    def mean_jobs_in_system(self) -> float:
        """E[n] = rho / (1 - rho)."""
        rho = self.utilization
        return rho / (1 - rho)

    @property
    def mean_jobs_in_queue(self) -> float:
        """E[n_q] = rho^2 / (1 - rho)."""
        rho = self.utilization
        return rho * rho / (1 - rho)

    @property
    def mean_response_time_s(self) -> float:
        """E[r] = 1 / (mu - lambda)."""
        return 1.0 / (self.service_rate_per_s - self.arrival_rate_per_s)

    @property
    def mean_waiting_time_s(self) -> float:
        """E[w] = rho / (mu (1 - rho)), the time spent in the queue before service."""
        rho = self.utilization
        return rho / (self.service_rate_per_s * (1 - rho))


def mm1(arrival_rate_per_s: float, service_rate_per_s: float) -> MM1:
    """An M/M/1 queue with arrival rate lambda and service rate mu.

    Raises
    ------
    ValueError
        If a rate is not positive, or lambda >= mu (no steady state).

    Examples
    --------
    >>> q = mm1(50.0, 100.0)
    >>> q.utilization, q.mean_jobs_in_system
    (0.5, 1.0)
    """
    _require_positive("arrival_rate_per_s", arrival_rate_per_s)
    _require_positive("service_rate_per_s", service_rate_per_s)
    _require_stable(arrival_rate_per_s / service_rate_per_s)
    return MM1(arrival_rate_per_s, service_rate_per_s)


# ---------------------------------------------------------------------------------------------
# M/M/m


def erlang_b(servers: int, offered_load: float) -> float:
    """Erlang B: probability that all ``servers`` are busy in an M/M/m/m loss system.

    Computed with the stable recurrence B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)).
    """
    if servers < 1:
        raise ValueError(f"servers: must be >= 1, got {servers}")
    _require_non_negative("offered_load", offered_load)
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered_load * blocking / (k + offered_load * blocking)
    return blocking


def erlang_c(servers: int, offered_load: float) -> float:
    """Erlang C: probability that an arriving job has to queue in an M/M/m system.

    Parameters
    ----------
    servers
        m, the number of identical servers.
    offered_load
        a = lambda / mu in Erlangs; the utilization is rho = a / m and must be < 1.

    Examples
    --------
    >>> round(erlang_c(2, 1.0), 6)  # rho = 0.5
    0.333333
    """
    if servers < 1:
        raise ValueError(f"servers: must be >= 1, got {servers}")
    _require_non_negative("offered_load", offered_load)
    rho = offered_load / servers
    _require_stable(rho)
    blocking = erlang_b(servers, offered_load)
    return blocking / (1 - rho * (1 - blocking))


@dataclass(frozen=True)
class MMm:
    """Steady state of an M/M/m queue (Jain Box 31.2), m servers each of rate mu."""

    arrival_rate_per_s: float
    service_rate_per_s: float
    servers: int

    @property
    def utilization(self) -> float:
        """rho = lambda / (m mu)."""
        return self.arrival_rate_per_s / (self.servers * self.service_rate_per_s)

    @property
    def probability_of_queueing(self) -> float:
        """Erlang C, the probability that all m servers are busy."""
        return erlang_c(self.servers, self.arrival_rate_per_s / self.service_rate_per_s)

    @property
    def mean_jobs_in_queue(self) -> float:
        """E[n_q] = C rho / (1 - rho)."""
        rho = self.utilization
        return self.probability_of_queueing * rho / (1 - rho)

    @property
    def mean_jobs_in_system(self) -> float:
        """E[n] = E[n_q] + m rho."""
        return self.mean_jobs_in_queue + self.servers * self.utilization

    @property
    def mean_waiting_time_s(self) -> float:
        """E[w] = C / (m mu - lambda) = E[n_q] / lambda."""
        return self.probability_of_queueing / (
            self.servers * self.service_rate_per_s - self.arrival_rate_per_s
        )

    @property
    def mean_response_time_s(self) -> float:
        """E[r] = E[w] + 1/mu."""
        return self.mean_waiting_time_s + 1.0 / self.service_rate_per_s


def mmm(arrival_rate_per_s: float, service_rate_per_s: float, servers: int) -> MMm:
    """An M/M/m queue: m servers of rate mu fed by Poisson arrivals of rate lambda.

    Raises
    ------
    ValueError
        If a rate is not positive, m < 1, or lambda >= m mu.
    """
    _require_positive("arrival_rate_per_s", arrival_rate_per_s)
    _require_positive("service_rate_per_s", service_rate_per_s)
    if servers < 1:
        raise ValueError(f"servers: must be >= 1, got {servers}")
    _require_stable(arrival_rate_per_s / (servers * service_rate_per_s))
    return MMm(arrival_rate_per_s, service_rate_per_s, servers)


# ---------------------------------------------------------------------------------------------
# Closed networks: mean value analysis and operational bounds


@dataclass(frozen=True)
class MVAResult:
    """Solution of a closed network for populations 1..N (index i holds population i + 1).

    ``station_*`` arrays have shape (N, K) for K queueing stations.
    """

    populations: npt.NDArray[np.int64]
    throughput_per_s: FloatArray
    response_time_s: FloatArray
    station_response_time_s: FloatArray
    station_jobs: FloatArray
    station_utilization: FloatArray

    def at(self, population: int) -> tuple[float, float]:
        """(throughput per second, response time in seconds) at one population."""
        if not 1 <= population <= len(self.populations):
            raise ValueError(f"population: {population} (expected: 1..{len(self.populations)})")
        i = population - 1
        return float(self.throughput_per_s[i]), float(self.response_time_s[i])


def mva(
    demands_s: Sequence[float],
    think_time_s: float,
    max_clients: int,
    servers: Sequence[int] | None = None,
) -> MVAResult:
    """Exact mean value analysis of a single-class closed network with a think-time station.

    Parameters
    ----------
    demands_s
        Service demand D_k = V_k S_k of each queueing station, in seconds.
    think_time_s
        Z, the delay (think-time) station; 0 for a batch system.
    max_clients
        Solve for every population 1..N.
    servers
        Number of identical servers per station (default 1 each). A station with m > 1 servers
        is solved as a load-dependent station with rate multiplier min(j, m) (exact MVA with
        marginal queue-length probabilities, Jain §36.3); the middleware's worker pool is such a
        station with m = workers. Large m and high utilization can make the marginal probability
        of an empty station round below zero; it is clamped at 0.

    Examples
    --------
    >>> r = mva([0.002], think_time_s=0.0, max_clients=1)
    >>> r.at(1)
    (500.0, 0.002)
    """
    if not demands_s:
        raise ValueError("demands_s: need at least one station")
    for k, station_demand in enumerate(demands_s):
        _require_positive(f"demands_s[{k}]", station_demand)
    _require_non_negative("think_time_s", think_time_s)
    if max_clients < 1:
        raise ValueError(f"max_clients: must be >= 1, got {max_clients}")
    station_count = len(demands_s)
    server_counts = [1] * station_count if servers is None else list(servers)
    if len(server_counts) != station_count:
        raise ValueError(
            f"servers: {len(server_counts)} entries (expected: one per station, {station_count})"
        )
    for k, m in enumerate(server_counts):
        if m < 1:
            raise ValueError(f"servers[{k}]: must be >= 1, got {m}")

    demand = np.asarray(demands_s, dtype=np.float64)
    jobs: FloatArray = np.zeros(station_count)
    # marginal[k][j] = P(j jobs at station k | current population), for multi-server stations
    marginal = [np.array([1.0]) for _ in range(station_count)]

    throughput = np.zeros(max_clients)
    response = np.zeros(max_clients)
    station_response = np.zeros((max_clients, station_count))
    station_jobs = np.zeros((max_clients, station_count))
    station_util = np.zeros((max_clients, station_count))

    for n in range(1, max_clients + 1):
        residence = np.empty(station_count)
        for k in range(station_count):
            m = server_counts[k]
            if m == 1:
                residence[k] = demand[k] * (1.0 + jobs[k])
            else:
                occupancy = np.arange(1, n + 1, dtype=np.float64)
                rate_multiplier = np.minimum(occupancy, m)
                residence[k] = demand[k] * float(
                    np.sum(occupancy / rate_multiplier * marginal[k][:n])
                )
        x = n / (think_time_s + float(residence.sum()))
        jobs = x * residence
        for k in range(station_count):
            m = server_counts[k]
            if m == 1:
                continue
            previous = marginal[k]
            current = np.zeros(n + 1)
            for busy in range(1, n + 1):
                current[busy] = x * demand[k] / min(busy, m) * previous[busy - 1]
            current[0] = max(0.0, 1.0 - float(current[1:].sum()))
            marginal[k] = current
        throughput[n - 1] = x
        response[n - 1] = float(residence.sum())
        station_response[n - 1] = residence
        station_jobs[n - 1] = jobs
        station_util[n - 1] = x * demand / np.asarray(server_counts, dtype=np.float64)

    return MVAResult(
        populations=np.arange(1, max_clients + 1, dtype=np.int64),
        throughput_per_s=throughput,
        response_time_s=response,
        station_response_time_s=station_response,
        station_jobs=station_jobs,
        station_utilization=station_util,
    )


@dataclass(frozen=True)
class Bounds:
    """Asymptotic bounds of a closed network at one population (Jain §33.6)."""

    throughput_upper_per_s: float
    response_time_lower_s: float
    knee_clients: float


def asymptotic_bounds(demands_s: Sequence[float], think_time_s: float, clients: int) -> Bounds:
    """X <= min(N / (D + Z), 1 / D_max) and R >= max(D, N D_max - Z); knee N* = (D + Z) / D_max."""
    if not demands_s:
        raise ValueError("demands_s: need at least one station")
    for k, d in enumerate(demands_s):
        _require_positive(f"demands_s[{k}]", d)
    _require_non_negative("think_time_s", think_time_s)
    if clients < 1:
        raise ValueError(f"clients: must be >= 1, got {clients}")
    total = float(sum(demands_s))
    largest = float(max(demands_s))
    return Bounds(
        throughput_upper_per_s=min(clients / (total + think_time_s), 1.0 / largest),
        response_time_lower_s=max(total, clients * largest - think_time_s),
        knee_clients=(total + think_time_s) / largest,
    )


def utilization(throughput_per_s: float, service_time_s: float, servers: int = 1) -> float:
    """Utilization law U = X S / m (m servers sharing the work)."""
    _require_non_negative("throughput_per_s", throughput_per_s)
    _require_non_negative("service_time_s", service_time_s)
    if servers < 1:
        raise ValueError(f"servers: must be >= 1, got {servers}")
    return throughput_per_s * service_time_s / servers


def littles_law_jobs(throughput_per_s: float, time_s: float) -> float:
    """Little's law N = X R (e.g. queue length = throughput x queue time)."""
    _require_non_negative("throughput_per_s", throughput_per_s)
    _require_non_negative("time_s", time_s)
    return throughput_per_s * time_s


def worker_bound_ops_per_s(middlewares: int, workers: int, service_time_ms: float) -> float:
    """Throughput ceiling of synchronous workers, #MW x WT / ST (ASL 2017 §3: 8 / 2 ms = 4k)."""
    if middlewares < 1:
        raise ValueError(f"middlewares: must be >= 1, got {middlewares}")
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    _require_positive("service_time_ms", service_time_ms)
    return 1000.0 * middlewares * workers / service_time_ms
