"""Part added-latency: the latency a proxy adds to each request, measured in open loop.

Each middleware mode's saturation throughput is measured first (closed loop: the loadgen's
2 threads x 16 clients, one request in flight each, 1 KiB values, --ratio=1:9 = 90:10
gets:sets on preloaded keys). Then the loadgen runs in open loop (--open-loop-rate: Poisson
arrivals, each request's latency measured from its intended send time) at LATENCY_LEVELS_PERCENT
of that mode's own saturation, through the mode, through twemproxy and directly to memcached at
the same absolute rates, back to back. The latency a proxy adds is its p50, p99 and p99.9 minus
direct's at the same rate, per round, and the median over ROUNDS rounds. An open loop keeps
sending on schedule while a reply is late, so a stall shows as the latency of every request
scheduled during it; a closed loop would wait and send fewer (coordinated omission).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import median
from typing import Any

from cachelab.openloop import counting_tolerance_frac
from cachelab.processes import ManagedProcess, ProcessError, free_port

from bench.config import (
    LATENCY_LEVELS_PERCENT,
    LATENCY_RAMP_SECONDS,
    LATENCY_SATURATION_SECONDS,
    LATENCY_SECONDS,
    LATENCY_VARIANTS,
    MIDDLEWARE_JAR,
    ROUNDS,
    WARMUP_SECONDS,
)
from bench.measure import MEASURE, loadgen
from bench.servers import middleware_command, preload, start_memcached, start_nutcracker
from bench.summary import quiet
from bench.variants import Variant

DIRECT = "direct"
TWEMPROXY = "twemproxy"
# The project's targets for the event loops at 70 % of their own saturation: added latency at
# most 100 µs at p50 and 500 µs at p99, and at most twemproxy's at the same rate.
CHECK_LEVEL_PERCENT = 70
ADDED_P50_BOUND_US = 100.0
ADDED_P99_BOUND_US = 500.0


@dataclass(frozen=True)
class Tail:
    """p50, p99 and p99.9 latency in µs (of one run, a difference of runs or a median)."""

    p50_us: float
    p99_us: float
    p999_us: float

    def values(self) -> tuple[float, float, float]:
        return (self.p50_us, self.p99_us, self.p999_us)

    def minus(self, other: Tail) -> Tail:
        return Tail(*(a - b for a, b in zip(self.values(), other.values(), strict=True)))


def median_tail(tails: list[Tail]) -> Tail:
    """Each percentile's median over `tails` (at least one)."""
    return Tail(*(median(column) for column in zip(*(t.values() for t in tails), strict=True)))


@dataclass(frozen=True)
class Point:
    """One open-loop run: `target` at `level_percent` of `mode`'s saturation, in round `round_index`
    (latency None and a note if it failed)."""

    level_percent: int
    mode: str
    target: str
    rate_ops_per_s: float
    round_index: int
    latency: Tail | None
    completed_ops_per_s: float | None
    note: str = ""

    @property
    def completed_share(self) -> float | None:
        """The replies per second as a share of the offered rate (the ramp's half-rate second
        counted as such)."""
        if self.completed_ops_per_s is None or self.rate_ops_per_s <= 0:
            return None
        return self.completed_ops_per_s / (self.rate_ops_per_s * ramped_share())

    @property
    def kept_up(self) -> bool:
        """Whether the run completed the offered rate (within the counting noise of Poisson
        arrivals, cachelab.openloop's rule): a run that fell behind measured a backlog."""
        share = self.completed_share
        if share is None:
            return False
        expected = self.rate_ops_per_s * LATENCY_SECONDS * ramped_share()
        return share >= 1.0 - float(counting_tolerance_frac(expected))


def ramped_share() -> float:
    """The share of a run's requests that the offered rate gives when the first
    LATENCY_RAMP_SECONDS ramp up from zero."""
    ramp = min(LATENCY_RAMP_SECONDS, float(LATENCY_SECONDS))
    return (LATENCY_SECONDS - ramp / 2) / LATENCY_SECONDS if LATENCY_SECONDS > 0 else 1.0


@dataclass(frozen=True)
class TableRow:
    """One target at one rate: medians over rounds; `added` (target minus direct, per round) and
    its ratio to twemproxy's are None for direct."""

    level_percent: int
    mode: str
    target: str
    rate_ops_per_s: float
    completed_share: float | None
    behind_rounds: int
    latency: Tail | None
    added: Tail | None
    added_vs_twemproxy: tuple[float | None, float | None, float | None] | None
    rounds: int


@dataclass(frozen=True)
class Check:
    """One of the project's targets for a mode with event loops at CHECK_LEVEL_PERCENT."""

    mode: str
    rate_ops_per_s: float
    what: str
    measured_us: float | None
    bound_us: float | None
    bound_name: str

    def met(self) -> bool | None:
        if self.measured_us is None or self.bound_us is None:
            return None
        return self.measured_us <= self.bound_us

    def line(self) -> str:
        if self.measured_us is None:
            verdict = f"not measured ({self.mode} or direct fell behind in every round)"
        elif self.bound_us is None:
            verdict = "not measured (twemproxy or direct fell behind in every round)"
        else:
            verdict = "met" if self.met() else "missed"
        measured = f"{self.measured_us:.0f} µs" if self.measured_us is not None else "-"
        bound = f"{self.bound_us:.0f} µs" if self.bound_us is not None else "-"
        return (
            f"{self.mode} at {CHECK_LEVEL_PERCENT} % ({self.rate_ops_per_s:.0f} ops/s): added"
            f" {self.what} {measured}, at most {self.bound_name}{' ' if self.bound_name else ''}"
            f"{bound}: {verdict}"
        )


def open_loop_args(rate_ops_per_s: float, seconds: int, ramp_s: float) -> list[str]:
    """The loadgen's options for one open-loop run (the closed loop's workload, Poisson arrivals
    at `rate_ops_per_s` in total, the first `ramp_s` ramping up to it)."""
    ramp = min(ramp_s, float(seconds))
    return [
        *MEASURE,
        f"--open-loop-rate={rate_ops_per_s:.0f}",
        *([f"--open-loop-ramp-s={ramp:g}"] if ramp > 0 else []),
        f"--test-time={seconds}",
    ]


def open_loop_point(
    port: int, work: Path, level: int, mode: str, target: str, rate: float, round_index: int
) -> Point:
    name = f"latency-{mode}-{level}-{target}-r{round_index}"
    try:
        run = loadgen(port, work, name, open_loop_args(rate, LATENCY_SECONDS, LATENCY_RAMP_SECONDS))
    except RuntimeError as e:
        note = str(e).splitlines()[0]
        return Point(level, mode, target, rate, round_index, None, None, note)
    p999_ms = run.p999_ms if run.p999_ms is not None else math.nan
    tail = Tail(run.p50_ms * 1000, run.p99_ms * 1000, p999_ms * 1000)
    return Point(level, mode, target, rate, round_index, tail, run.ops_per_s)


def saturation(port: int, work: Path, name: str) -> float:
    """A closed-loop run of LATENCY_SATURATION_SECONDS: the target's throughput in ops/s."""
    run = loadgen(
        port, work, f"saturation-{name}", [*MEASURE, f"--test-time={LATENCY_SATURATION_SECONDS}"]
    )
    return run.ops_per_s


def warm_up(port: int, work: Path, name: str) -> None:
    """Two unmeasured closed-loop runs of WARMUP_SECONDS (JIT compilation, as part 1)."""
    for n in range(2 if WARMUP_SECONDS > 0 else 0):
        loadgen(port, work, f"{name}-warmup{n}", [*MEASURE, f"--test-time={WARMUP_SECONDS}"])


def mode_round(
    variant: Variant,
    round_index: int,
    mc_port: int,
    nut_port: int,
    work: Path,
    saturations: dict[str, float],
) -> list[Point]:
    """One round of one mode: starts it, warms it up, finds its saturation if not known yet, then
    runs direct, twemproxy and the mode at each level of its saturation (reversed order in odd
    rounds), and stops it."""
    mode = variant.name()
    if not MIDDLEWARE_JAR.exists():
        return _failed(mode, round_index, f"skipped: {MIDDLEWARE_JAR} not built")
    port = free_port()
    cmd = middleware_command(MIDDLEWARE_JAR, port, variant, mc_port)
    proc = ManagedProcess("middleware", cmd, work / f"latency-{mode}.log")
    points: list[Point] = []
    try:
        proc.wait_for_port("127.0.0.1", port, timeout_s=30)
        warm_up(port, work, f"latency-{mode}-r{round_index}")
        if mode not in saturations:
            saturations[mode] = saturation(port, work, mode)
            print(f"  saturation: {mode}: {saturations[mode]:.0f} ops/s", flush=True)
        ports = {DIRECT: mc_port, TWEMPROXY: nut_port, mode: port}
        order = [DIRECT, TWEMPROXY, mode]
        if round_index % 2:
            order.reverse()
        for level in LATENCY_LEVELS_PERCENT:
            rate = saturations[mode] * level / 100
            for target in order:
                point = open_loop_point(ports[target], work, level, mode, target, rate, round_index)
                points.append(point)
                print(f"  round {round_index + 1}/{ROUNDS}: {describe(point)}", flush=True)
    except (RuntimeError, ProcessError) as e:
        note = f"skipped: {str(e).splitlines()[0]}"
        done = {(p.level_percent, p.target) for p in points}
        points += [
            p for p in _failed(mode, round_index, note) if (p.level_percent, p.target) not in done
        ]
    finally:
        proc.stop(grace_s=10)
    return points


def _failed(mode: str, round_index: int, note: str) -> list[Point]:
    return [
        Point(level, mode, target, 0.0, round_index, None, None, note)
        for level in LATENCY_LEVELS_PERCENT
        for target in (DIRECT, TWEMPROXY, mode)
    ]


def describe(point: Point) -> str:
    head = f"{point.mode} {point.level_percent} %: {point.target} at {point.rate_ops_per_s:.0f}"
    if point.latency is None:
        return f"{head}: {point.note}"
    t = point.latency
    return f"{head} ops/s: p50 {t.p50_us:.0f} µs, p99 {t.p99_us:.0f} µs, p99.9 {t.p999_us:.0f} µs"


def table_rows(points: list[Point]) -> list[TableRow]:
    """Per level and mode, direct, twemproxy and the mode: medians over rounds, and the latency
    each proxy adds to direct's at the same rate in the same round (median over the rounds in
    which both kept up with the offered rate)."""
    rows: list[TableRow] = []
    levels = sorted({p.level_percent for p in points})
    modes = list(dict.fromkeys(p.mode for p in points))
    for level in levels:
        for mode in modes:
            by_target: dict[str, list[Point]] = {}
            for p in points:
                if p.level_percent == level and p.mode == mode:
                    by_target.setdefault(p.target, []).append(p)
            direct = by_target.get(DIRECT, [])
            nut_added = _added(by_target.get(TWEMPROXY, []), direct)
            for target, runs in by_target.items():
                measured = [p for p in runs if p.latency is not None]
                shares = [share for p in measured if (share := p.completed_share) is not None]
                added = _added(runs, direct) if target != DIRECT else None
                rows.append(
                    TableRow(
                        level,
                        mode,
                        target,
                        max(p.rate_ops_per_s for p in runs),
                        median(shares) if shares else None,
                        sum(1 for p in measured if not p.kept_up),
                        median_tail([p.latency for p in measured if p.latency is not None])
                        if measured
                        else None,
                        added,
                        _vs(added, nut_added) if target != DIRECT else None,
                        len(measured),
                    )
                )
    return rows


def _added(runs: list[Point], direct: list[Point]) -> Tail | None:
    """The median over rounds of `runs` minus direct's run of the same round, over the rounds in
    which both kept up with the offered rate (None if there is none)."""
    direct_by_round = {p.round_index: p.latency for p in direct if p.kept_up}
    differences = [
        p.latency.minus(d)
        for p in runs
        if p.latency is not None
        and p.kept_up
        and (d := direct_by_round.get(p.round_index)) is not None
    ]
    return median_tail(differences) if differences else None


def _vs(
    added: Tail | None, twemproxy: Tail | None
) -> tuple[float | None, float | None, float | None]:
    """Each percentile's added latency as a multiple of twemproxy's (None unless both are
    positive: no ratio to a proxy that added nothing measurable, nor of a negative one)."""
    if added is None or twemproxy is None:
        return (None, None, None)
    a, t = added.values(), twemproxy.values()
    return (
        a[0] / t[0] if a[0] > 0 and t[0] > 0 else None,
        a[1] / t[1] if a[1] > 0 and t[1] > 0 else None,
        a[2] / t[2] if a[2] > 0 and t[2] > 0 else None,
    )


def _us(value: float | None) -> str:
    return f"{value:.0f}" if value is not None and math.isfinite(value) else "-"


def _x(value: float | None) -> str:
    return f"x{value:.2f}" if value is not None else "-"


def level_table(rows: list[TableRow], level: int) -> str:
    """The rows of one level as a markdown table."""
    lines = [
        "| rate set by | target | rate ops/s | completed/offered | p50 µs | p99 µs | p99.9 µs"
        " | added p50 µs | added p99 µs | added p99.9 µs | added vs twemproxy p50 / p99 / p99.9 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in (r for r in rows if r.level_percent == level):
        t = r.latency.values() if r.latency else (None, None, None)
        a = r.added.values() if r.added else (None, None, None)
        vs = " / ".join(_x(v) for v in r.added_vs_twemproxy) if r.added_vs_twemproxy else "-"
        done = f"{r.completed_share:.2f}" if r.completed_share is not None else "-"
        if r.behind_rounds:
            done += f" (behind in {r.behind_rounds}/{r.rounds})"
        lines.append(
            f"| {r.mode} | {r.target} | {r.rate_ops_per_s:.0f} | {done}"
            f" | {_us(t[0])} | {_us(t[1])} | {_us(t[2])} | {_us(a[0])} | {_us(a[1])} | {_us(a[2])}"
            f" | {vs} |"
        )
    return "\n".join(lines) + "\n"


def tables(rows: list[TableRow]) -> str:
    """Every level's table under its heading."""
    parts = []
    for level in sorted({r.level_percent for r in rows}):
        parts.append(
            f"At {level} % of each mode's saturation (open loop, Poisson arrivals; latency from"
            f" the intended send time; medians over rounds):\n\n{level_table(rows, level)}"
        )
    return "\n".join(parts) + (
        "\n(completed/offered: replies per second over the offered rate, the ramp counted;"
        " behind: a round fell short by more than Poisson counting noise, so its latency holds a"
        " backlog"
        " and it is left out of the added latency; added: minus direct at the same rate in the"
        " same round; x: over twemproxy's added latency)\n"
    )


def checks(rows: list[TableRow], variants: list[Variant]) -> list[Check]:
    """The project's targets for every mode with event loops at CHECK_LEVEL_PERCENT."""
    found: list[Check] = []
    for variant in (v for v in variants if v.loops > 0):
        mode = variant.name()
        at = {
            r.target: r for r in rows if r.level_percent == CHECK_LEVEL_PERCENT and r.mode == mode
        }
        own, nut = at.get(mode), at.get(TWEMPROXY)
        rate = own.rate_ops_per_s if own else 0.0
        added = own.added if own else None
        nut_added = nut.added if nut else None
        p50 = added.p50_us if added else None
        p99 = added.p99_us if added else None
        found += [
            Check(mode, rate, "p50", p50, ADDED_P50_BOUND_US, ""),
            Check(mode, rate, "p99", p99, ADDED_P99_BOUND_US, ""),
            Check(mode, rate, "p50", p50, nut_added.p50_us if nut_added else None, "twemproxy's"),
            Check(mode, rate, "p99", p99, nut_added.p99_us if nut_added else None, "twemproxy's"),
        ]
    return found


def checks_text(found: list[Check], load_averages: list[float], cpus: int) -> str:
    """The checks, one a line, under a heading that says how loaded the machine was."""
    loaded = "" if quiet(load_averages, cpus) else " (a loaded machine: not a result)"
    head = (
        f"targets: event loops at {CHECK_LEVEL_PERCENT} % of their own saturation add at most"
        f" {ADDED_P50_BOUND_US:.0f} µs at p50 and {ADDED_P99_BOUND_US:.0f} µs at p99, and at most"
        f" twemproxy's added latency at the same rate; load average {load_averages[0]:.2f} at the"
        f" start, {load_averages[-1]:.2f} at the end with the run's own processes, on {cpus}"
        f" CPUs{loaded}:"
    )
    if not found:
        return f"{head}\n  not measured (no mode with event loops, or no {CHECK_LEVEL_PERCENT} %)\n"
    return head + "\n" + "".join(f"  {c.line()}\n" for c in found)


def added_latency(work: Path) -> dict[str, Any]:
    """The part: saturations, then ROUNDS rounds of open-loop runs; prints the tables and the
    targets; returns what bench.json records (with the tables' markdown under "table")."""
    print()
    print(
        "added latency: loadgen 2 threads x 16 clients, 1 KiB values, --ratio=1:9 (90:10"
        f" gets:sets) on preloaded keys, one memcached (-t 2); saturation: closed loop,"
        f" {LATENCY_SATURATION_SECONDS} s; then open loop (Poisson, latency from the intended"
        f" send time) for {LATENCY_SECONDS} s (the first {LATENCY_RAMP_SECONDS:g} s ramping up)"
        f" at {', '.join(f'{p} %' for p in LATENCY_LEVELS_PERCENT)} of each mode's saturation,"
        f" direct, through twemproxy and through the mode; {ROUNDS} round(s)"
    )
    start_load = os.getloadavg()[0]
    saturations: dict[str, float] = {}
    points: list[Point] = []
    mc_port = free_port()
    mc = start_memcached(mc_port, work)
    try:
        preload(mc_port, work)
        nut, nut_port = start_nutcracker(mc_port, work, redis=False)
        try:
            for name, port in ((DIRECT, mc_port), (TWEMPROXY, nut_port)):
                saturations[name] = saturation(port, work, name)
                print(f"  saturation: {name}: {saturations[name]:.0f} ops/s", flush=True)
            for n in range(ROUNDS):
                variants = LATENCY_VARIANTS if n % 2 == 0 else LATENCY_VARIANTS[::-1]
                for variant in variants:
                    points += mode_round(variant, n, mc_port, nut_port, work, saturations)
        finally:
            nut.stop(grace_s=10)
    finally:
        mc.stop(grace_s=10)
    loads = [start_load, os.getloadavg()[0]]
    rows = table_rows(points)
    table = tables(rows)
    found = checks(rows, LATENCY_VARIANTS)
    targets = checks_text(found, loads, os.cpu_count() or 1)
    print("\nsaturation (closed loop): " + _saturation_line(saturations))
    print(f"\n{table}\n{targets}", end="")
    return {
        "saturation_ops_per_s": saturations,
        "levels_percent": LATENCY_LEVELS_PERCENT,
        "seconds": LATENCY_SECONDS,
        "saturation_seconds": LATENCY_SATURATION_SECONDS,
        "ramp_seconds": LATENCY_RAMP_SECONDS,
        "rounds": ROUNDS,
        "load_averages": loads,
        "points": [asdict(p) for p in points],
        "rows": [asdict(r) for r in rows],
        "checks": [{**asdict(c), "met": c.met()} for c in found],
        "table": f"saturation (closed loop): {_saturation_line(saturations)}\n\n{table}\n{targets}",
    }


def _saturation_line(saturations: dict[str, float]) -> str:
    return ", ".join(f"{name} {ops:.0f} ops/s" for name, ops in saturations.items())


def save_table(out_dir: Path, part: dict[str, Any]) -> None:
    """Writes the part's tables and targets to `out_dir`/added-latency.md."""
    (out_dir / "added-latency.md").write_text(part["table"], encoding="utf-8")
