"""Open-loop points: workload.rate_ops in the spec, the loadgen flags, the summary columns."""

from __future__ import annotations

import math
import shlex
from typing import Any

import pytest

from cachelab.k8s import plan
from cachelab.loadgen_args import LoadgenArgsError, instance_rate_ops, measure_args
from cachelab.openloop import (
    VERDICT_LOADGEN,
    VERDICT_OK,
    VERDICT_SYSTEM,
    counting_tolerance_frac,
    open_loop_columns,
    verdict,
)
from cachelab.spec import SpecError, parse_spec

BASE: dict[str, Any] = {
    "name": "open",
    "topology": {"client_machines": 2, "instances_per_machine": 1, "threads": 2},
    "workload": {"rate_ops": 20000},
    "run": {"duration_s": 10, "warmup_s": 2, "cooldown_s": 2},
}


def _spec(**workload: Any) -> Any:
    raw = {**BASE, "workload": {**BASE["workload"], **workload}}
    return parse_spec(raw)


def test_the_rate_is_split_over_the_loadgen_instances() -> None:
    spec = _spec()
    assert instance_rate_ops(spec) == 10000
    assert "--open-loop-rate=10000" in measure_args(spec)


def test_the_rate_ramps_up_over_the_warmup_only() -> None:
    assert "--open-loop-ramp-s=2" in measure_args(_spec())
    cold = parse_spec({**BASE, "run": {"duration_s": 10, "warmup_s": 0, "cooldown_s": 2}})
    assert not any(a.startswith("--open-loop-ramp-s") for a in measure_args(cold))


def test_closed_loop_has_no_open_loop_flag() -> None:
    spec = _spec(rate_ops=0)
    assert not any(a.startswith("--open-loop") for a in measure_args(spec))


def test_kubernetes_gets_the_same_open_loop_flag() -> None:
    config = plan.job_config(_spec(), plan.Target(loadgen="cachelab"))
    args = shlex.split(config["LOADGEN_ARGS"])
    assert "--open-loop-rate=10000" in args and "--open-loop-ramp-s=2" in args


def test_memtier_cannot_run_open_loop() -> None:
    with pytest.raises(LoadgenArgsError, match=r"workload.rate_ops: .*cachelab loadgen"):
        measure_args(_spec(), loadgen="memtier")


def test_rate_is_sweepable() -> None:
    raw = {**BASE, "sweep": {"workload.rate_ops": [1000, 2000]}}
    points = parse_spec(raw).points()
    assert [instance_rate_ops(p.spec) for p in points] == [500, 1000]


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ({"think_time_ms": 1}, "cannot be combined with workload.think_time_ms"),
        ({"rate_ops": 10_000_000}, "more than 4 loadgen threads can offer"),
        ({"rate_ops": 0.1}, "fewer than one request each"),
        ({"rate_ops": -5}, "workload.rate_ops: must be >= 0"),
    ],
)
def test_a_rate_the_loadgen_cannot_offer_is_one_clear_line(
    workload: dict[str, Any], message: str
) -> None:
    with pytest.raises(SpecError) as caught:
        _spec(**workload)
    assert len(caught.value.problems) == 1
    assert message in caught.value.problems[0]
    assert caught.value.problems[0].startswith("workload.rate_ops:")


def test_verdicts() -> None:
    assert verdict(0.99, 3.9, 0.0, 4) == VERDICT_OK
    assert verdict(0.80, 3.8, 0.0, 4) == VERDICT_LOADGEN  # its threads ran flat out
    assert verdict(0.80, 1.0, 1.5, 4) == VERDICT_LOADGEN  # its threads waited for a core
    assert verdict(0.80, 1.0, 0.1, 4) == VERDICT_SYSTEM
    assert verdict(0.80, math.nan, math.nan, 4) == VERDICT_SYSTEM


def test_a_shortfall_within_the_counting_noise_is_no_verdict() -> None:
    # 1,000 requests expected: sqrt(1000) = 31.6, two of them 6.3 %; 94.5 % achieved is noise
    assert counting_tolerance_frac(1000) == pytest.approx(2 / math.sqrt(1000))
    assert verdict(0.945, 0.03, 0.0, 1, expected_requests=1000) == VERDICT_OK
    assert verdict(0.92, 0.03, 0.0, 1, expected_requests=1000) == VERDICT_SYSTEM
    # a long run: the flag's own 5 % holds
    assert counting_tolerance_frac(1_000_000) == pytest.approx(0.05)
    assert verdict(0.945, 0.03, 0.0, 1, expected_requests=1_000_000) == VERDICT_SYSTEM


def test_summary_columns_of_an_open_loop_point() -> None:
    spec = _spec().model_dump(mode="json")
    columns = open_loop_columns(spec, 15000.0, 0.5, 0.1)
    assert columns == {
        "offered_ops_per_s": 20000.0,
        "achieved_frac": 0.75,
        "rate_verdict": VERDICT_SYSTEM,
    }
    closed = _spec(rate_ops=0).model_dump(mode="json")
    assert open_loop_columns(closed, 15000.0, 0.5, 0.1) == {}
