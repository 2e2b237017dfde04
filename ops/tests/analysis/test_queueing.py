"""Queueing formulas against textbook values and the ASL reports' own tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cachelab.analysis import queueing as q


def test_mm1_at_half_utilization_has_one_job_in_system() -> None:
    model = q.mm1(arrival_rate_per_s=50.0, service_rate_per_s=100.0)
    assert model.utilization == 0.5
    assert model.mean_jobs_in_system == pytest.approx(1.0)
    assert model.mean_jobs_in_queue == pytest.approx(0.5)
    assert model.mean_response_time_s == pytest.approx(0.02)
    assert model.mean_waiting_time_s == pytest.approx(0.01)


def test_mm1_obeys_littles_law() -> None:
    model = q.mm1(80.0, 100.0)
    assert model.mean_jobs_in_system == pytest.approx(80.0 * model.mean_response_time_s)
    assert model.mean_jobs_in_queue == pytest.approx(80.0 * model.mean_waiting_time_s)


def test_mm1_reproduces_asl2017_table_9_for_8_workers() -> None:
    # lambda = 3621/s per MW, mu = WT / ST = 8 / 2.1597 ms; the report: QWT 11.75 ms,
    # QL 42.54, RT 12.02 ms.
    model = q.mm1(3621.0, 8 / 2.1597e-3)
    assert model.mean_waiting_time_s * 1e3 == pytest.approx(11.75, abs=0.01)
    assert model.mean_jobs_in_queue == pytest.approx(42.54, abs=0.05)
    assert model.mean_response_time_s * 1e3 == pytest.approx(12.02, abs=0.01)


@pytest.mark.parametrize(
    ("workers", "arrivals", "service_ms", "rt_ms"),
    [(16, 6963, 2.24, 5.54), (32, 8988, 3.46, 3.83), (64, 11913, 5.21, 2.69)],
)
def test_mm1_matches_asl2017_table_9_other_rows(
    workers: int, arrivals: float, service_ms: float, rt_ms: float
) -> None:
    model = q.mm1(arrivals, workers / (service_ms * 1e-3))
    assert model.mean_response_time_s * 1e3 == pytest.approx(rt_ms, rel=0.01)


def test_mm1_rejects_unstable_and_bad_rates() -> None:
    with pytest.raises(ValueError, match=r"utilization: 1\.0000"):
        q.mm1(100.0, 100.0)
    with pytest.raises(ValueError, match="arrival_rate_per_s: must be a finite number > 0"):
        q.mm1(0.0, 100.0)
    with pytest.raises(ValueError, match="service_rate_per_s"):
        q.mm1(1.0, math.nan)


def test_erlang_c_known_values() -> None:
    assert q.erlang_c(1, 0.5) == pytest.approx(0.5)  # M/M/1: P(wait) = rho
    assert q.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert q.erlang_c(10, 8.0) == pytest.approx(0.4092, abs=1e-4)  # standard Erlang C table


def test_erlang_b_known_value() -> None:
    assert q.erlang_b(2, 1.0) == pytest.approx(0.2)  # (1/2) / (1 + 1 + 1/2)


def test_mmm_with_one_server_equals_mm1() -> None:
    single = q.mm1(70.0, 100.0)
    multi = q.mmm(70.0, 100.0, 1)
    assert multi.mean_response_time_s == pytest.approx(single.mean_response_time_s)
    assert multi.mean_jobs_in_queue == pytest.approx(single.mean_jobs_in_queue)


def test_mmm_response_time_minus_waiting_time_is_service_time() -> None:
    model = q.mmm(3000.0, 1 / 2.0e-3, 8)
    assert model.mean_response_time_s - model.mean_waiting_time_s == pytest.approx(2.0e-3)
    assert model.mean_jobs_in_system == pytest.approx(3000.0 * model.mean_response_time_s)


@pytest.mark.parametrize(
    ("workers", "arrivals", "service_ms", "qwt_ms"),
    [
        (8, 3621, 2.1597, 11.16),
        (16, 6963, 2.24, 4.91),
        (32, 8988, 3.46, 3.14),
        (64, 11913, 5.21, 1.98),
    ],
)
def test_mmm_reproduces_asl2017_table_10_erlang_c(
    workers: int, arrivals: float, service_ms: float, qwt_ms: float
) -> None:
    model = q.mmm(arrivals, 1 / (service_ms * 1e-3), workers)
    assert model.mean_waiting_time_s * 1e3 == pytest.approx(qwt_ms, rel=0.01)


def test_mmm_reproduces_asl2019_table_13() -> None:
    # m = 8, lambda = 15/ms, S_WT = 0.51 ms: C = 0.863, E[n_q] = 18.86, E[w_q] = 1.26 ms
    model = q.mmm(15.0, 1 / 0.51, 8)
    assert model.probability_of_queueing == pytest.approx(0.863, abs=0.005)
    assert model.mean_jobs_in_queue == pytest.approx(18.86, rel=0.02)
    assert model.mean_waiting_time_s == pytest.approx(1.26, rel=0.02)  # ms here: rates per ms
    model32 = q.mmm(26.5, 1.0, 32)
    assert model32.probability_of_queueing == pytest.approx(0.223, abs=0.001)
    assert model32.mean_jobs_in_queue == pytest.approx(1.07, abs=0.01)


def test_mmm_rejects_overload_and_zero_servers() -> None:
    with pytest.raises(ValueError, match="utilization"):
        q.mmm(1000.0, 100.0, 10)
    with pytest.raises(ValueError, match="servers: must be >= 1, got 0"):
        q.mmm(1.0, 100.0, 0)


def test_mva_single_queue_follows_the_asymptotes() -> None:
    service_s, think_s = 0.002, 0.010
    result = q.mva([service_s], think_s, 200)
    x1, r1 = result.at(1)
    assert x1 == pytest.approx(1 / (service_s + think_s))
    assert r1 == pytest.approx(service_s)
    x_high, _ = result.at(200)
    assert x_high == pytest.approx(1 / service_s, rel=1e-6)
    # never above the asymptotic bounds, and monotone in N
    for n in (1, 5, 6, 7, 50):
        bound = q.asymptotic_bounds([service_s], think_s, n)
        x, r = result.at(n)
        assert x <= bound.throughput_upper_per_s + 1e-9
        assert r >= bound.response_time_lower_s - 1e-12
    assert np.all(np.diff(result.throughput_per_s) >= -1e-9)


def test_mva_interactive_law_holds_at_every_population() -> None:
    result = q.mva([0.001, 0.003], 0.005, 50, servers=[1, 4])
    n = result.populations.astype(float)
    np.testing.assert_allclose(n, result.throughput_per_s * (result.response_time_s + 0.005))
    np.testing.assert_allclose(result.station_jobs.sum(axis=1) + result.throughput_per_s * 0.005, n)


def _convolution_throughput(
    demands: list[float], servers: list[int], think: float, n_max: int
) -> list[float]:
    """X(N) = G(N-1)/G(N) from the product-form normalising constant, for cross-checking MVA."""
    g = np.array([think**n / math.factorial(n) for n in range(n_max + 1)])
    for d, m in zip(demands, servers, strict=True):
        station = np.array(
            [d**n / math.prod(min(j, m) for j in range(1, n + 1)) for n in range(n_max + 1)]
        )
        g = np.array([sum(g[i] * station[n - i] for i in range(n + 1)) for n in range(n_max + 1)])
    return [g[n - 1] / g[n] for n in range(1, n_max + 1)]


def test_mva_matches_the_normalising_constant_solution() -> None:
    demands, servers, think = [0.002, 0.004, 0.001], [1, 3, 2], 0.006
    expected = _convolution_throughput(demands, servers, think, 30)
    result = q.mva(demands, think, 30, servers=servers)
    np.testing.assert_allclose(result.throughput_per_s, expected, rtol=1e-9)


def test_mva_station_with_enough_servers_is_a_delay() -> None:
    result = q.mva([0.004], 0.001, 8, servers=[8])
    for n in range(1, 9):
        x, r = result.at(n)
        assert x == pytest.approx(n / 0.005)
        assert r == pytest.approx(0.004)


def test_mva_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="need at least one station"):
        q.mva([], 0.0, 1)
    with pytest.raises(ValueError, match=r"demands_s\[1\]"):
        q.mva([0.1, 0.0], 0.0, 1)
    with pytest.raises(ValueError, match="max_clients: must be >= 1"):
        q.mva([0.1], 0.0, 0)
    with pytest.raises(ValueError, match="one per station"):
        q.mva([0.1], 0.0, 3, servers=[1, 2])
    with pytest.raises(ValueError, match="population: 4"):
        q.mva([0.1], 0.0, 3).at(4)


def test_operational_laws_and_worker_bound() -> None:
    assert q.utilization(400.0, 0.002) == pytest.approx(0.8)
    assert q.utilization(400.0, 0.002, servers=4) == pytest.approx(0.2)
    assert q.littles_law_jobs(3621.0, 1.28e-3) == pytest.approx(4.63, abs=0.01)  # ASL17 QL Little
    assert q.worker_bound_ops_per_s(1, 8, 2.0) == pytest.approx(4000.0)
    assert q.worker_bound_ops_per_s(2, 64, 4.2) == pytest.approx(30476, rel=1e-3)
    with pytest.raises(ValueError, match="workers: must be >= 1"):
        q.worker_bound_ops_per_s(1, 0, 2.0)


def test_mva_stays_stable_with_many_servers_at_high_load() -> None:
    # 2 MW x 64 WT, ST 5 ms, 2 ms outside: the load-dependent MVA recursion breaks down here
    result = q.mva([5e-3], 2e-3, 300, servers=[128])
    x = result.throughput_per_s
    assert np.all(np.diff(x) >= -1e-9 * x[1:])
    assert x.max() <= 128 / 5e-3 * (1 + 1e-9)
    assert x[-1] == pytest.approx(128 / 5e-3, rel=1e-6)
    np.testing.assert_allclose(result.populations, x * (result.response_time_s + 2e-3))


def test_recursion_and_product_form_agree_on_single_server_networks() -> None:
    demand = np.array([0.002, 0.004, 0.001])
    x_mva, jobs_mva = q._mva_recursion(demand, 0.006, 40)
    jobs_pf = q._product_form_jobs(demand, [1, 1, 1], 0.006, 40)
    np.testing.assert_allclose(jobs_mva, jobs_pf, rtol=1e-9)
    np.testing.assert_allclose(x_mva, q._throughput(demand, [1, 1, 1], 0.006, 40), rtol=1e-9)


def test_mva_with_a_fraction_of_a_server_is_a_slower_single_server() -> None:
    # the host CPU station with 0.5 cores left: rate min(j, 0.5) = 0.5 for every j >= 1, so it
    # is a single server of twice the demand (the Reiser-Lavenberg recursion)
    shared = q.mva([0.002, 0.001], 0.003, 12, [0.5, 1])
    slower = q.mva([0.004, 0.001], 0.003, 12)
    for n in (1, 4, 12):
        assert shared.at(n)[0] == pytest.approx(slower.at(n)[0], rel=1e-9)
        assert shared.at(n)[1] == pytest.approx(slower.at(n)[1], rel=1e-9)
    with pytest.raises(ValueError, match=r"servers\[0\]: must be a finite number > 0"):
        q.mva([0.002], 0.0, 2, [0.0])


def test_mva_throughput_alone_equals_the_full_solution() -> None:
    for demands, servers, think in (
        ([0.002, 0.004], [1.0, 1.0], 0.006),
        ([0.002, 0.004, 0.001], [1.0, 3.0, 0.7], 0.0),
    ):
        for n in (1, 5, 30):
            full = q.mva(demands, think, n, servers=servers).at(n)[0]
            assert q.mva_throughput(demands, think, n, servers) == pytest.approx(full, rel=1e-12)
    with pytest.raises(ValueError, match="clients: must be >= 1"):
        q.mva_throughput([0.001], 0.0, 0, [1.0])
    with pytest.raises(ValueError, match="one entry per station"):
        q.mva_throughput([0.001], 0.0, 3, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"servers\[0\]: must be a finite number > 0"):
        q.mva_throughput([0.001], 0.0, 3, [0.0])
