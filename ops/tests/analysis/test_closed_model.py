"""The calibrated closed network's fixed point: the host CPU station's cores are what the CPU
held inside a worker's holding leaves at the throughput the model itself runs at."""

from __future__ import annotations

import pytest

from cachelab.analysis import queueing as q
from cachelab.analysis.models import CPU, POOL, ClosedModel


def test_the_model_runs_at_the_throughput_its_cpu_cores_allow() -> None:
    # pool: 8 workers holding 0.2 ms; CPU: 0.03 ms per request of the loadgens and net thread
    # on the 1.8 cores left to the experiment minus 0.06 ms per request held by the workers
    # and memcached; delay 0.05 ms; 16 clients
    model = ClosedModel(
        [POOL, CPU], [0.2, 0.03], [8.0, 0.7], 0.05, 16, cpu_available_cores=1.8, cpu_held_ms=0.06
    )
    x = model.throughput_ops_per_s(16)
    servers = model.servers_at(x)
    assert servers[0] == 8.0
    assert servers[1] == pytest.approx(1.8 - x * 0.06 / 1000.0)
    # a fixed point: MVA with those cores gives back the same throughput
    assert q.mva_throughput([0.2e-3, 0.03e-3], 0.05e-3, 16, servers) == pytest.approx(x, rel=1e-9)
    solved = model.solve()
    assert solved.at(16)[0] == pytest.approx(x, rel=1e-9)
    assert model.throughput_curve(16)[-1] == pytest.approx(x, rel=1e-12)
    # the host CPU's ceiling counts the held CPU: X (D_cpu + held) <= available
    ceiling = 1000.0 * 1.8 / (0.03 + 0.06)
    assert x < ceiling
    assert model.throughput_bound_ops_per_s(16) == pytest.approx(
        1000.0 * min(16 / (0.2 + 0.03 + 0.05), 8 / 0.2, 1.8 / 0.09)
    )
    # with the held cores fixed at their measured value (0.7 cores) the model runs faster than
    # the cores allow once the held CPU grows with it
    fixed_cores = ClosedModel([POOL, CPU], [0.2, 0.03], [8.0, 0.7], 0.05, 16)
    plain = q.mva([0.2e-3, 0.03e-3], 0.05e-3, 16, [8.0, 0.7]).at(16)[0]
    assert fixed_cores.throughput_ops_per_s(16) == pytest.approx(plain, rel=1e-12)


def test_more_held_cpu_per_request_leaves_fewer_cores_and_less_throughput() -> None:
    found = [
        ClosedModel(
            [POOL, CPU], [0.2, 0.03], [8.0, 1.0], 0.05, 16, cpu_available_cores=1.8, cpu_held_ms=h
        ).throughput_ops_per_s(16)
        for h in (0.02, 0.04, 0.08)
    ]
    assert found[0] > found[1] > found[2] > 0


def test_without_the_host_cpu_the_calibration_cycle_stays_and_the_pool_caps() -> None:
    """ASL 2017 §3.1 at 8 workers calibrated at 2 clients on 2 shared cores, where the low-load
    CPU per request (0.66 ms: background and the emulator's wake-ups over few requests) caps
    the model at ~2,700 ops/s: made a delay, the CPU keeps the calibrated cycle time and the
    ceiling is the workers' 8 / 2.2 ms, as on the seed's machines."""
    from cachelab.analysis.models import without_host_cpu

    model = ClosedModel(
        [POOL, CPU], [2.2, 0.66], [8.0, 1.95], 2.36, 2, cpu_available_cores=1.95, cpu_held_ms=0.06
    )
    assert model.bottleneck() == CPU
    assert model.throughput_bound_ops_per_s(10**9) == pytest.approx(1950 / 0.72)
    own = without_host_cpu(model)
    assert (own.names, own.demands_ms, own.servers) == ([POOL], [2.2], [8.0])
    # the cycle at the calibration point, 2 clients, is the one the full model gives
    assert 2 * 1000.0 / own.throughput_ops_per_s(2) == pytest.approx(
        2 * 1000.0 / model.throughput_ops_per_s(2), rel=1e-6
    )
    assert own.bottleneck() == POOL
    assert own.throughput_bound_ops_per_s(10**9) == pytest.approx(8000 / 2.2)
    plain = ClosedModel([POOL], [2.2], [8.0], 2.36, 2)
    assert without_host_cpu(plain) is plain


def test_a_baseline_whose_only_station_is_the_host_cpu_predicts_no_seed_ceiling() -> None:
    """ASL 2016's baseline, unshaped: without this machine's CPU nothing bounds it."""
    from cachelab.analysis.models import without_host_cpu
    from cachelab.analysis.operational import PointMeasurement, analyse
    from cachelab.analysis.prediction import seed_ceiling

    alone = without_host_cpu(ClosedModel([CPU], [0.03], [1.9], 0.5, 8))
    assert alone.names == [] and alone.delay_ms > 0.5 + 0.03  # the CPU's time, its wait too
    assert alone.throughput_bound_ops_per_s(8) == pytest.approx(8000 / alone.delay_ms)
    point = PointMeasurement(
        point=0, clients=8, think_time_ms=0.0, throughput_ops_per_s=16_000.0,
        response_time_ms=0.5, servers=1,
    )  # fmt: skip
    assert seed_ceiling(point, analyse(point)) is None
    # and the report draws no prediction from the RTTs for it (predict_curve needs a station)
    from cachelab.analysis.prediction import seed_machines

    assert seed_machines(ClosedModel([CPU], [0.03], [1.9], 0.5, 8)) is None
    pool = ClosedModel([POOL, CPU], [2.2, 0.05], [8.0, 1.9], 2.4, 4)
    assert (own := seed_machines(pool)) is not None and own.names == [POOL]
