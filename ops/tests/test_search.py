"""`cachelab search`: SLO parsing, the bisection on a fake system with a known knee, the step
checks, search.csv, resuming, the figure and the bad-input lines."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.cli import main
from cachelab.report.search_plots import SEARCH_FIGURE, write_search_figure
from cachelab.search import (
    Bisection,
    SearchDriver,
    SearchError,
    SearchSettings,
    choose_point,
    settings_for,
)
from cachelab.search.steps import FAIL, PASS, REPEAT, Measurement, judge
from cachelab.slo import SloError, parse_slo
from cachelab.spec import parse_spec

KNEE_OPS = 37_000.0


# --- SLOs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "statistic", "limit_ms"),
    [
        ("p99<=2ms", "p99", 2.0),
        ("p99.9 <= 500us", "p99.9", 0.5),
        ("p50<=0.3ms", "p50", 0.3),
        ("mean<=1ms", "mean", 1.0),
        ("p90<=250µs", "p90", 0.25),
    ],
)
def test_slos_parse(text: str, statistic: str, limit_ms: float) -> None:
    slo = parse_slo(text)
    assert slo.statistic == statistic
    assert slo.limit_ms == pytest.approx(limit_ms)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p99 < 2ms", "not an SLO"),
        ("p99<=2s", "not an SLO"),
        ("latency<=2ms", "not an SLO"),
        ("p95<=2ms", "the loadgen does not record p95; it records p50, p90, p99, p99.9, mean"),
        ("p99<=0ms", "the limit must be > 0"),
    ],
)
def test_bad_slos_say_why(text: str, message: str) -> None:
    with pytest.raises(SloError, match=message) as caught:
        parse_slo(text)
    assert "\n" not in str(caught.value)


# --- the bisection on a fake system --------------------------------------------------------------


def fake_p99_ms(rate: float) -> float:
    """A system whose p99 stays flat below its knee and climbs steeply after it."""
    return 0.5 if rate <= KNEE_OPS else 0.5 + (rate - KNEE_OPS) / 1000.0


@pytest.mark.parametrize("start", [1_000.0, 20_000.0, 90_000.0, 400_000.0])
@pytest.mark.parametrize("tolerance", [0.05, 0.01])
def test_bisection_finds_a_known_knee_within_the_tolerance(start: float, tolerance: float) -> None:
    search = Bisection(start, tolerance, lowest=10.0, highest=1_000_000.0)
    steps = 0
    while (rate := search.next_value()) is not None:
        steps += 1
        search.record(rate, fake_p99_ms(rate) <= 1.0)  # SLO p99 <= 1 ms: met up to 37,500
    answer = search.answer()
    assert answer is not None
    assert answer <= 37_500.0
    assert (37_500.0 - answer) / answer <= tolerance
    assert steps <= 20


def test_bisection_on_whole_numbers_stops_at_neighbours() -> None:
    search = Bisection(4, 0.05, lowest=1, highest=1024, whole=True)
    while (clients := search.next_value()) is not None:
        assert clients == int(clients)
        search.record(clients, clients <= 13)
    assert search.answer() == 13


def test_bisection_says_when_nothing_passes_or_nothing_fails() -> None:
    nothing = Bisection(100.0, 0.05, lowest=10.0, highest=1000.0)
    while (rate := nothing.next_value()) is not None:
        nothing.record(rate, False)
    assert nothing.answer() is None
    everything = Bisection(100.0, 0.05, lowest=10.0, highest=1000.0)
    while (rate := everything.next_value()) is not None:
        everything.record(rate, True)
    assert everything.answer() == 1000.0


def queue_p99_ms(rate: float, capacity: float = 45_000.0, service_ms: float = 0.2) -> float:
    """A queue's p99: it grows as 1 / (1 - utilisation) and is unbounded past the capacity."""
    return service_ms / (1 - rate / capacity) if rate < capacity else 1000.0


@pytest.mark.parametrize("limit_ms", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("capacity", [None, 41_000.0, 45_000.0])
def test_the_guided_search_finds_a_queues_knee_in_few_steps(
    limit_ms: float, capacity: float | None
) -> None:
    """Knees at 15,000, 36,000 and 42,750 requests/s; with the probe's capacity (exact, or 9 %
    low, as a closed loop of few clients measures it) or without one (from the spec's start)."""
    knee = 45_000.0 * (1 - 0.2 / limit_ms)
    search = Bisection(20_000.0, 0.05, lowest=10.0, highest=1_000_000.0)
    search.guide(limit_ms, capacity)
    steps = 0
    while (rate := search.next_value()) is not None:
        steps += 1
        p99 = queue_p99_ms(rate)
        search.record(rate, p99 <= limit_ms, p99)
    answer = search.answer()
    assert answer is not None
    assert answer <= knee and (knee - answer) / answer <= 0.05
    assert steps <= (4 if capacity else 5)
    plain = Bisection(20_000.0, 0.05, lowest=10.0, highest=1_000_000.0)
    plain_steps = 0
    while (rate := plain.next_value()) is not None:
        plain_steps += 1
        plain.record(rate, queue_p99_ms(rate) <= limit_ms)
    assert steps < plain_steps


@pytest.mark.parametrize("start", [1_000.0, 20_000.0, 90_000.0, 400_000.0])
def test_the_guided_search_survives_a_knee_no_queue_has(start: float) -> None:
    """The flat-then-steep system fits no 1 / (1 - x / c): the guard bisects to the knee."""
    search = Bisection(start, 0.05, lowest=10.0, highest=1_000_000.0)
    search.guide(1.0, 60_000.0)
    steps = 0
    while (rate := search.next_value()) is not None:
        steps += 1
        search.record(rate, fake_p99_ms(rate) <= 1.0, fake_p99_ms(rate))
    answer = search.answer()
    assert answer is not None
    assert answer <= 37_500.0 and (37_500.0 - answer) / answer <= 0.05
    assert steps <= 20


PROBE_OPS = 24_600.0  # a closed loop of 8 clients on the quickstart's shape carried this


def cliff_p50_ms(rate: float, knee: float) -> float:
    """A middleware's open-loop p50 as measured: flat (0.3 ms, rising 10 % up to the knee),
    then a backlog that never drains (hundreds of ms)."""
    return 0.3 * (1 + 0.1 * rate / knee) if rate <= knee else 300.0


def sweep_runs(capacity: float, tolerance: float = 0.05) -> int:
    """An exhaustive sweep at the tolerance's resolution from 0.6 to 1.75 times the probe's
    capacity (where a cliff below or above the closed loop's throughput lies)."""
    return math.floor(math.log(1.75 / 0.6) / math.log(1 + tolerance)) + 1


@pytest.mark.parametrize("knee", [20_000.0, 24_000.0, 28_000.0, 32_500.0, 36_000.0])
def test_a_cliff_near_the_probes_capacity_is_found_in_a_third_of_a_sweeps_runs(
    knee: float,
) -> None:
    """Saturated steps carry no shape: the search bounds its jumps and halves geometrically
    instead of creeping down from above the cliff. Knees from 0.8 to 1.5 times the capacity;
    runs count the probe."""
    search = Bisection(2_000.0, 0.05, lowest=10.0, highest=1_000_000.0)
    search.guide(2.0, PROBE_OPS, 0.297)  # p50 <= 2 ms; the probe's own p50
    runs = 1
    while (rate := search.next_value()) is not None:
        runs += 1
        p50 = cliff_p50_ms(rate, knee)
        search.record(rate, p50 <= 2.0, p50)
    answer = search.answer()
    assert answer is not None
    assert answer <= knee and (knee - answer) / answer <= 0.05
    assert runs <= sweep_runs(PROBE_OPS) / 3, (runs, sweep_runs(PROBE_OPS))


def test_a_probe_near_the_limit_starts_the_search_below_its_capacity() -> None:
    near = Bisection(2_000.0, 0.05, lowest=10.0, highest=1_000_000.0)
    near.guide(1.0, PROBE_OPS, 0.8)  # the closed loop itself came within 80 % of the limit
    assert near.next_value() == PROBE_OPS / 2
    quiet = Bisection(2_000.0, 0.05, lowest=10.0, highest=1_000_000.0)
    quiet.guide(1.0, PROBE_OPS, 0.3)
    assert quiet.next_value() == PROBE_OPS


# --- steps judged as Lancet does -----------------------------------------------------------------


def measurement(
    offered: float, achieved: float, p99_ms: float, verdict: str = "", mw: float | None = None
) -> Measurement:
    return Measurement(
        run="p0-r0",
        status="ok",
        offered_ops_per_s=offered,
        total_clients=4,
        throughput_ops_per_s=achieved,
        mw_throughput_ops_per_s=achieved if mw is None else mw,
        p99_ms=p99_ms,
        slo_low_ms=p99_ms * 0.9,
        slo_high_ms=p99_ms * 1.1,
        rate_verdict=verdict,
    )


SLO = parse_slo("p99<=1ms")


def test_judge() -> None:
    assert judge(measurement(1000, 1000, 0.5), SLO, True)[0] == PASS
    assert judge(measurement(1000, 1000, 1.5), SLO, True)[0] == FAIL
    assert judge(measurement(1000, 1200, 0.5), SLO, True)[0] == REPEAT  # above +5 %
    assert judge(measurement(1000, 1400, 900), SLO, True)[0] == FAIL  # a backlog drained
    loadgen = measurement(1000, 800, 0.5, "loadgen-bound")
    assert judge(loadgen, SLO, True) == (REPEAT, "loadgen-bound: achieved 80% of the offered rate")
    saturated = measurement(1000, 800, 0.5, "system-saturated")
    assert judge(saturated, SLO, True)[0] == FAIL
    assert judge(measurement(1000, 1000, 0.5, mw=700), SLO, True)[0] == REPEAT
    failed = measurement(1000, 1000, 0.5)
    failed.status = "partial"
    assert judge(failed, SLO, True)[0] == REPEAT
    # closed loop: no offered rate to reach
    assert judge(measurement(math.nan, 900, 0.5), SLO, False)[0] == PASS


# --- the driver: search.csv, repeats, resume -----------------------------------------------------


class FakeSystem:
    """A StepExecutor over `fake_p99_ms`; the first attempt of `noisy_steps` comes back noisy,
    and the run numbered `interrupt_at` is interrupted."""

    def __init__(self, noisy_steps: set[int] = frozenset(), interrupt_at: int | None = None):  # type: ignore[assignment]
        self.noisy_steps = noisy_steps
        self.interrupt_at = interrupt_at
        self.runs = 0
        self.closed = False

    def measure(self, step: int, attempt: int, load: float) -> Measurement:
        self.runs += 1
        if self.interrupt_at is not None and self.runs == self.interrupt_at:
            raise KeyboardInterrupt
        if load == 0:  # the closed-loop probe: its clients carry the capacity
            m = measurement(math.nan, CAPACITY_OPS, 5.0)
            m.run = f"p{step}-r{attempt}"
            return m
        achieved = load * (1.3 if step in self.noisy_steps and attempt == 0 else 1.0)
        m = measurement(load, achieved, fake_p99_ms(load))
        m.run = f"p{step}-r{attempt}"
        return m

    def close(self) -> None:
        self.closed = True


def settings(**changes: Any) -> SearchSettings:
    base = dict(slo="p99<=1ms", axis="workload.rate_ops", start=20_000.0, lowest=10.0, highest=1e6)
    return SearchSettings(**{**base, **changes})  # type: ignore[arg-type]


def rows(folder: Path) -> list[dict[str, str]]:
    with (folder / "search.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_a_search_writes_every_attempt_and_repeats_the_untrusted(tmp_path: Path) -> None:
    system = FakeSystem(noisy_steps={0})
    answer = SearchDriver(settings(), tmp_path, system).run()
    assert answer.load is not None
    assert (37_500 - answer.load) / answer.load <= 0.05
    assert system.closed
    written = rows(tmp_path)
    assert len(written) == answer.runs == system.runs
    # step 0 (20,000/s, below the knee) first came back 30 % above its rate: measured again
    assert [r["verdict"] for r in written if r["step"] == "0"] == [REPEAT, PASS]
    assert [r["attempt"] for r in written if r["step"] == "0"] == ["0", "1"]
    assert written[0]["offered_ops_per_s"] == "20000"
    assert float(written[0]["slo_value_ms"]) == pytest.approx(0.5)
    assert "meets p99<=1ms" in answer.text(SLO, "requests/s")


def test_an_interrupted_search_resumes_with_nothing_lost(tmp_path: Path) -> None:
    (tmp_path / "whole").mkdir()
    (tmp_path / "cut").mkdir()
    whole = SearchDriver(settings(), tmp_path / "whole", FakeSystem()).run()
    with pytest.raises(KeyboardInterrupt):
        SearchDriver(settings(), tmp_path / "cut", FakeSystem(interrupt_at=4)).run()
    assert len(rows(tmp_path / "cut")) == 3  # the three measured before the interrupt
    second = FakeSystem()
    resumed = SearchDriver(settings(), tmp_path / "cut", second).run()
    assert resumed.load == whole.load
    assert second.runs == whole.runs - 3
    loads = [r["load"] for r in rows(tmp_path / "cut")]
    assert loads == [r["load"] for r in rows(tmp_path / "whole")]


CAPACITY_OPS = 40_000.0


def test_a_probed_search_starts_from_the_capacity_and_resumes_without_probing_again(
    tmp_path: Path,
) -> None:
    system = FakeSystem()
    answer = SearchDriver(settings(probe=True), tmp_path, system).run()
    written = rows(tmp_path)
    assert written[0]["verdict"] == "probe"
    assert (written[0]["step"], written[0]["load"]) == ("0", "0")
    assert "capacity probe: 40,000 ops/s" in written[0]["note"]
    assert float(written[1]["load"]) == CAPACITY_OPS / 2  # the first open-loop step
    assert answer.load is not None and (37_500 - answer.load) / answer.load <= 0.05
    assert answer.runs == len(written) == system.runs
    again = FakeSystem()
    resumed = SearchDriver(settings(probe=True), tmp_path, again).run()
    assert again.runs == 0 and resumed.load == answer.load
    cut = tmp_path / "cut"
    cut.mkdir()
    with pytest.raises(KeyboardInterrupt):
        SearchDriver(settings(probe=True), cut, FakeSystem(interrupt_at=2)).run()
    third = FakeSystem()
    SearchDriver(settings(probe=True), cut, third).run()
    assert [r["verdict"] for r in rows(cut)].count("probe") == 1
    assert third.runs == system.runs - 1


def test_the_figure_is_written(tmp_path: Path) -> None:
    driver = SearchDriver(settings(), tmp_path, FakeSystem(noisy_steps={2}))
    answer = driver.run()
    path = write_search_figure(tmp_path, driver.steps, SLO, answer.load, "offered load")
    assert path == tmp_path / SEARCH_FIGURE
    assert path.stat().st_size > 10_000


# --- settings and bad input ----------------------------------------------------------------------

OPEN = {
    "name": "open",
    "topology": {"threads": 2, "clients_per_thread": 4, "middlewares": 1, "servers": 1},
    "workload": {"rate_ops": 5000},
    "run": {"duration_s": 6, "warmup_s": 1, "cooldown_s": 1},
}


def test_open_loop_searches_rate_and_closed_loop_clients() -> None:
    found = settings_for(parse_spec(OPEN), "p99<=2ms")
    assert (found.axis, found.start, found.highest) == ("workload.rate_ops", 5000, 200_000)
    closed = parse_spec({**OPEN, "workload": {}})
    assert settings_for(closed, "p99<=2ms").axis == "topology.clients_per_thread"


def test_a_swept_spec_needs_a_point() -> None:
    swept = parse_spec({**OPEN, "sweep": {"topology.workers": [4, 8]}})
    with pytest.raises(SearchError, match=r"choose one with --point 0..1"):
        choose_point(swept, None)
    assert choose_point(swept, 1).topology.workers == 8
    with pytest.raises(SearchError, match=r"--point 2: the spec's points are numbered 0..1"):
        choose_point(swept, 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--slo", "p99 2ms"], "not an SLO"),
        (["--slo", "p95<=2ms"], "does not record p95"),
        (["--slo", "p99<=2ms", "--tolerance", "0"], "--tolerance 0: must be between"),
    ],
)
def test_cli_bad_input_is_one_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    spec = tmp_path / "open.yaml"
    spec.write_text(yaml.safe_dump(OPEN))
    code = main(["search", str(spec), "--results", str(tmp_path / "results"), *args])
    out = capsys.readouterr().out
    assert code == 2
    assert message in out
    assert out.strip().startswith("error:")
    assert len(out.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()
