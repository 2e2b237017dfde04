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
from scipy.special import logsumexp

from cachelab.analysis.bounds import require_non_negative, require_positive

FloatArray = npt.NDArray[np.float64]


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
    require_positive("arrival_rate_per_s", arrival_rate_per_s)
    require_positive("service_rate_per_s", service_rate_per_s)
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
    require_non_negative("offered_load", offered_load)
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
    require_non_negative("offered_load", offered_load)
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
    require_positive("arrival_rate_per_s", arrival_rate_per_s)
    require_positive("service_rate_per_s", service_rate_per_s)
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
    servers: Sequence[float] | None = None,
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
        Number of identical servers per station (default 1 each); the middleware's worker pool
        is one station with m = workers. m may be fractional (the host CPU with the cores
        left to the experiment, e.g. 1.3): the station serves at rate min(j, m) with j jobs.
        Single-server networks are solved with the MVA recursion (Jain §34.2). A station
        with m != 1 servers is load dependent (rate multiplier
        min(j, m)); such networks are solved exactly from the product form with the
        normalising constant computed in log space, because the load-dependent MVA recursion
        (Jain §36.3) loses its marginal probabilities to cancellation at high load.

    Examples
    --------
    >>> r = mva([0.002], think_time_s=0.0, max_clients=1)
    >>> r.at(1)
    (500.0, 0.002)
    """
    _check_closed_network(demands_s, think_time_s, "max_clients", max_clients)
    station_count = len(demands_s)
    server_counts = [1.0] * station_count if servers is None else [float(m) for m in servers]
    if len(server_counts) != station_count:
        raise ValueError(
            f"servers: {len(server_counts)} entries (expected: one per station, {station_count})"
        )
    for k, m in enumerate(server_counts):
        require_positive(f"servers[{k}]", m)

    demand = np.asarray(demands_s, dtype=np.float64)
    if all(m == 1 for m in server_counts):
        throughput, station_jobs = _mva_recursion(demand, think_time_s, max_clients)
    else:
        throughput = _throughput(demand, server_counts, think_time_s, max_clients)
        station_jobs = _product_form_jobs(demand, server_counts, think_time_s, max_clients)
    populations = np.arange(1, max_clients + 1, dtype=np.int64)
    station_response = station_jobs / throughput[:, np.newaxis]  # Little's law per station
    return MVAResult(
        populations=populations,
        throughput_per_s=throughput,
        response_time_s=station_response.sum(axis=1),
        station_response_time_s=station_response,
        station_jobs=station_jobs,
        station_utilization=throughput[:, np.newaxis]
        * demand[np.newaxis, :]
        / np.asarray(server_counts, dtype=np.float64)[np.newaxis, :],
    )


def mva_throughput(
    demands_s: Sequence[float],
    think_time_s: float,
    clients: int,
    servers: Sequence[float],
) -> float:
    """X(N) alone, per second: the throughput of :func:`mva` at one population without the
    per-station means (cheaper; for fixed-point iterations over a station's server count)."""
    if clients < 1:
        raise ValueError(f"clients: must be >= 1, got {clients}")
    if len(servers) != len(demands_s) or not demands_s:
        raise ValueError("servers: need one entry per station")
    for k, (d, m) in enumerate(zip(demands_s, servers, strict=True)):
        require_positive(f"demands_s[{k}]", d)
        require_positive(f"servers[{k}]", m)
    require_non_negative("think_time_s", think_time_s)
    demand = np.asarray(demands_s, dtype=np.float64)
    if all(m == 1 for m in servers):
        return float(_mva_recursion(demand, think_time_s, clients)[0][-1])
    return float(_throughput(demand, [float(m) for m in servers], think_time_s, clients)[-1])


def _mva_recursion(
    demand: FloatArray, think_time_s: float, max_clients: int
) -> tuple[FloatArray, FloatArray]:
    """Reiser-Lavenberg MVA for single-server stations: R_k(n) = D_k (1 + Q_k(n - 1)),
    X(n) = n / (Z + sum_k R_k(n)), Q_k(n) = X(n) R_k(n). Returns X and Q per population."""
    jobs = np.zeros(len(demand))
    throughput = np.zeros(max_clients)
    out = np.zeros((max_clients, len(demand)))
    for n in range(1, max_clients + 1):
        residence = demand * (1.0 + jobs)
        x = n / (think_time_s + float(residence.sum()))
        jobs = x * residence
        throughput[n - 1] = x
        out[n - 1] = jobs
    return throughput, out


def _log_weights(demand: float, servers: float, max_clients: int) -> FloatArray:
    """log of D^n / prod_{j<=n} min(j, m): a station's product-form factor for n jobs."""
    n = np.arange(max_clients + 1, dtype=np.float64)
    rate_multiplier = np.minimum(np.arange(1, max_clients + 1, dtype=np.float64), servers)
    return np.asarray(
        n * math.log(demand) - np.concatenate([[0.0], np.cumsum(np.log(rate_multiplier))]),
        dtype=np.float64,
    )


def _delay_log_weights(think_time_s: float, max_clients: int) -> FloatArray:
    """log of Z^n / n!, the think-time station's factor (n = 0 only when Z = 0)."""
    if think_time_s == 0:
        weights = np.full(max_clients + 1, -np.inf)
        weights[0] = 0.0
        return weights
    n = np.arange(max_clients + 1, dtype=np.float64)
    log_factorial = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, max_clients + 1)))])
    return np.asarray(n * math.log(think_time_s) - log_factorial, dtype=np.float64)


def _log_convolve(a: FloatArray, b: FloatArray) -> FloatArray:
    """c[n] = log sum_{i <= n} exp(a[i] + b[n - i]): the convolution algorithm in log space
    (all n at once: row n of the matrix holds a[i] + b[n - i], -inf where i > n)."""
    index = np.arange(len(a))
    lag = index[:, np.newaxis] - index[np.newaxis, :]  # n - i
    with np.errstate(invalid="ignore"):
        terms = np.where(lag >= 0, a[np.newaxis, :] + b[np.clip(lag, 0, None)], -np.inf)
    return np.asarray(logsumexp(terms, axis=1), dtype=np.float64)


def _throughput(
    demand: FloatArray, servers: Sequence[float], think_time_s: float, max_clients: int
) -> FloatArray:
    """X(n) = G(n - 1) / G(n) from the normalising constant G."""
    log_g = _delay_log_weights(think_time_s, max_clients)
    for d, m in zip(demand, servers, strict=True):
        log_g = _log_convolve(log_g, _log_weights(float(d), m, max_clients))
    return np.asarray(np.exp(log_g[:-1] - log_g[1:]), dtype=np.float64)


def _product_form_jobs(
    demand: FloatArray, servers: Sequence[float], think_time_s: float, max_clients: int
) -> FloatArray:
    """Mean jobs per station for populations 1..N from the product-form solution.

    Exact, like MVA with load-dependent stations, but computed from the normalising constant
    in log space (Buzen's convolution algorithm), which stays stable where the load-dependent
    MVA recursion loses the marginal probabilities to cancellation (many servers, high load).
    """
    station_weights = [
        _log_weights(float(d), m, max_clients) for d, m in zip(demand, servers, strict=True)
    ]
    delay = _delay_log_weights(think_time_s, max_clients)
    log_g = delay
    for weights in station_weights:
        log_g = _log_convolve(log_g, weights)
    jobs = np.zeros((max_clients, len(demand)))
    occupancy = np.arange(max_clients + 1, dtype=np.float64)
    for k, weights in enumerate(station_weights):
        others = delay
        for j, other in enumerate(station_weights):
            if j != k:
                others = _log_convolve(others, other)
        for n in range(1, max_clients + 1):
            # P_k(j | n) = g_k(j) G_{-k}(n - j) / G(n)
            log_p = weights[: n + 1] + others[n::-1] - log_g[n]
            jobs[n - 1, k] = float(np.sum(occupancy[: n + 1] * np.exp(log_p)))
    return jobs


def _check_closed_network(
    demands_s: Sequence[float], think_time_s: float, population_name: str, population: int
) -> None:
    """A closed network's inputs: at least one station, each demand > 0, the think time >= 0
    and a population of at least one client (named `population_name` in the error)."""
    if not demands_s:
        raise ValueError("demands_s: need at least one station")
    for k, d in enumerate(demands_s):
        require_positive(f"demands_s[{k}]", d)
    require_non_negative("think_time_s", think_time_s)
    if population < 1:
        raise ValueError(f"{population_name}: must be >= 1, got {population}")


@dataclass(frozen=True)
class Bounds:
    """Asymptotic bounds of a closed network at one population (Jain §33.6)."""

    throughput_upper_per_s: float
    response_time_lower_s: float
    knee_clients: float


def asymptotic_bounds(demands_s: Sequence[float], think_time_s: float, clients: int) -> Bounds:
    """X <= min(N / (D + Z), 1 / D_max) and R >= max(D, N D_max - Z); knee N* = (D + Z) / D_max."""
    _check_closed_network(demands_s, think_time_s, "clients", clients)
    total = float(sum(demands_s))
    largest = float(max(demands_s))
    return Bounds(
        throughput_upper_per_s=min(clients / (total + think_time_s), 1.0 / largest),
        response_time_lower_s=max(total, clients * largest - think_time_s),
        knee_clients=(total + think_time_s) / largest,
    )


def utilization(throughput_per_s: float, service_time_s: float, servers: int = 1) -> float:
    """Utilization law U = X S / m (m servers sharing the work)."""
    require_non_negative("throughput_per_s", throughput_per_s)
    require_non_negative("service_time_s", service_time_s)
    if servers < 1:
        raise ValueError(f"servers: must be >= 1, got {servers}")
    return throughput_per_s * service_time_s / servers


def littles_law_jobs(throughput_per_s: float, time_s: float) -> float:
    """Little's law N = X R (e.g. queue length = throughput x queue time)."""
    require_non_negative("throughput_per_s", throughput_per_s)
    require_non_negative("time_s", time_s)
    return throughput_per_s * time_s


def worker_bound_ops_per_s(middlewares: int, workers: int, service_time_ms: float) -> float:
    """Throughput ceiling of synchronous workers, #MW x WT / ST (ASL 2017 §3: 8 / 2 ms = 4k)."""
    if middlewares < 1:
        raise ValueError(f"middlewares: must be >= 1, got {middlewares}")
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    require_positive("service_time_ms", service_time_ms)
    return 1000.0 * middlewares * workers / service_time_ms
