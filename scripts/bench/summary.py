"""Every target of the bench side by side (ratios of medians over rounds, with the load average),
and the section of docs/performance.md that each full run rewrites."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from bench.config import ROOT
from bench.memcaslap_loads import CaslapRun, cpu_ratio, median_run, per_round_ratios
from bench.proxies import Row
from bench.redis_proxies import RedisRow

PERFORMANCE_DOC = ROOT / "docs" / "performance.md"
BEGIN = "<!-- bench:begin (scripts/bench writes this section) -->\n"
END = "<!-- bench:end -->"
# The targets' rows: the default (ASL) worker, its design's floor in C, the event loops (the
# fast middleware: -t 1 --worker-batch 16 --event-loops 2) and the batched worker without event
# loops (-t 2 --worker-batch 16, shown beside it for information).
DEFAULT_WORKER = "cachelab-t8-b1"
FLOOR_ROW = "asl-floor-t8"
EVENT_LOOPS = "cachelab-t1-b16-e2"
BATCHED_WORKER = "cachelab-t2-b16"
# The targets of the event loops; the batched worker's same ratios have no bound.
FAST_TARGETS = ((EVENT_LOOPS, ""), (BATCHED_WORKER, "information: without event loops"))
# A run is quiet enough to show a target met if the load average at its start, before its own
# processes, is at or below this share of the CPUs.
QUIET_LOAD_PER_CPU = 0.75


@dataclass
class Target:
    """One target: a ratio measured in the run against its bound."""

    name: str
    measured: float | None
    bound: float
    at_most: bool  # the ratio must be <= bound (else >=)
    detail: str = ""

    def met(self) -> bool | None:
        if self.measured is None:
            return None
        return self.measured <= self.bound if self.at_most else self.measured >= self.bound

    @property
    def goal(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.bound:.2f}x"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _bounded(
    name: str, measured: float | None, bound: float, at_most: bool, info: str, detail: str = ""
) -> Target:
    """A target of the event loops (`info` empty), or the same ratio for information (no bound)."""
    if not info:
        return Target(name, measured, bound, at_most, detail)
    return Target(name, measured, float("inf"), True, f"{info}; {detail}" if detail else info)


def memcached_targets(rows: list[Row]) -> list[Target]:
    """Part 1's targets (median rounds): the default worker's CPU per request against the C floor,
    the event loops' throughput and CPU against twemproxy (and the batched worker's, for
    information), each proxy's CPU against memcached's own per request."""
    by_name = {r.name: r for r in rows if r.run is not None}
    nut, floor = by_name.get("twemproxy"), by_name.get(FLOOR_ROW)

    def cpu(row: Row | None) -> float | None:
        return row.proxy_cpu_us if row else None

    def ops(row: Row | None) -> float | None:
        return row.run.ops_per_s if row and row.run else None

    targets = [
        Target(
            f"{DEFAULT_WORKER} CPU/req vs {FLOOR_ROW}",
            _ratio(cpu(by_name.get(DEFAULT_WORKER)), cpu(floor)),
            1.05,
            True,
        ),
    ]
    for name, info in FAST_TARGETS:
        fast = by_name.get(name)
        if info and fast is None:
            continue
        targets.append(
            _bounded(f"{name} ops/s vs twemproxy", _ratio(ops(fast), ops(nut)), 1.30, False, info)
        )
        targets.append(
            _bounded(f"{name} CPU/req vs twemproxy", _ratio(cpu(fast), cpu(nut)), 0.85, True, info)
        )
    for row in rows:
        if row.proxy_cpu_us is not None and row.server_cpu_us > 0:
            targets.append(
                Target(
                    f"{row.name} CPU/req vs memcached's own",
                    row.proxy_cpu_us / row.server_cpu_us,
                    float("inf"),
                    True,
                    "information: a proxy reads and writes each request once, as memcached does",
                )
            )
    return targets


def redis_targets(runs: dict[str, dict[str, list[RedisRow]]]) -> list[Target]:
    """Part 3's targets per load: the event loops' GET and SET against twemproxy's redis mode, as
    the median over rounds of the ratio to twemproxy's round of the same number (and the batched
    worker's, for information)."""
    targets = []
    for load, by_name in runs.items():
        for name, info in FAST_TARGETS:
            if info and name not in by_name:
                continue
            pairs = [
                (r, n)
                for r, n in zip(by_name.get(name, []), by_name.get("twemproxy", []), strict=False)
                if not r.note and not n.note
            ]
            for test in ("GET", "SET"):
                ratios = [
                    (r.get_ops / n.get_ops) if test == "GET" else (r.set_ops / n.set_ops)
                    for r, n in pairs
                ]
                detail = "rounds " + ", ".join(f"{x:.2f}" for x in ratios) if ratios else ""
                measured = median(ratios) if ratios else None
                targets.append(
                    _bounded(
                        f"{name} {test} vs twemproxy, {load}", measured, 1.0, False, info, detail
                    )
                )
    return targets


def caslap_targets(by_load: dict[str, dict[str, list[CaslapRun]]]) -> list[Target]:
    """Part 4's targets per load: the event loops' ops/s against twemproxy's (median of the
    per-round ratios) and CPU per request against twemproxy's (medians), the batched worker's for
    information; each proxy's CPU per request against memcached's own, for information."""
    targets = []
    for load, by_target in by_load.items():
        nut = by_target.get("twemproxy", [])
        for name, info in FAST_TARGETS:
            if info and name not in by_target:
                continue
            fast = by_target.get(name, [])
            ratios = per_round_ratios(fast, nut)
            detail = "rounds " + ", ".join(f"{x:.2f}" for x in ratios) if ratios else ""
            measured = median(ratios) if ratios else None
            targets.append(
                _bounded(f"{name} ops/s vs twemproxy, {load}", measured, 1.30, False, info, detail)
            )
            targets.append(
                _bounded(
                    f"{name} CPU/req vs twemproxy, {load}", cpu_ratio(fast, nut), 0.85, True, info
                )
            )
        for name, runs in by_target.items():
            row = median_run(runs)
            if row and row.proxy_cpu_us is not None and row.server_cpu_us > 0:
                targets.append(
                    Target(
                        f"{name} CPU/req vs memcached's own, {load}",
                        row.proxy_cpu_us / row.server_cpu_us,
                        float("inf"),
                        True,
                        "information",
                    )
                )
    return targets


def quiet(load_averages: list[float], cpus: int) -> bool:
    """Whether the machine was quiet enough for a met target to count: the load average at the
    start, before the run's own processes (`load_averages[0]`); later ones include the loadgen,
    the server and the proxy themselves (about 2.5 on 2 CPUs) and are information only."""
    return load_averages[0] <= QUIET_LOAD_PER_CPU * cpus


def targets_table(targets: list[Target], load_averages: list[float], cpus: int) -> str:
    """The targets as a markdown table; a target met on a loaded machine is not claimed."""
    calm = quiet(load_averages, cpus)
    lines = ["| target | measured | goal | verdict |", "|---|---:|---|---|"]
    for t in targets:
        measured = f"{t.measured:.2f}x" if t.measured is not None else "-"
        informative = t.bound == float("inf")
        met = t.met()
        if informative:
            verdict = t.detail
        elif met is None:
            verdict = "not measured"
        elif not met:
            verdict = "missed" + (f" ({t.detail})" if t.detail else "")
        else:
            verdict = ("met" if calm else "met on a loaded machine: not shown") + (
                f" ({t.detail})" if t.detail else ""
            )
        lines.append(f"| {t.name} | {measured} | {'-' if informative else t.goal} | {verdict} |")
    return "\n".join(lines) + "\n"


def machine() -> str:
    """CPU model, CPU count and kernel of this machine."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def commit() -> str:
    """The checkout's commit (with `+changes` if the tree differs from it)."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("+changes" if dirty else "")


def knobs() -> str:
    """The BENCH_* settings of this run, as they would be given to `make bench`."""
    set_knobs = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("BENCH_"))
    return " ".join([*set_knobs, "make bench"])


def section(stamp: str, targets: str, output: str, load_averages: list[float]) -> str:
    """The docs/performance.md section of one run: when, where, what, the targets, the output."""
    progress = re.compile(r"^\s+round \d+/\d+: ")
    kept = "\n".join(line for line in output.splitlines() if not progress.match(line))
    return (
        f"Run `{stamp}` (UTC), commit `{commit()}`, command `{knobs()}`; machine: {machine()};"
        f" load average {load_averages[0]:.2f} at the start, {load_averages[-1]:.2f} at the end."
        f"\n\n{targets}\nThe run's output (the full one, with every round, is in"
        f" `results/bench/{stamp}/bench.txt`):\n\n```text\n{kept.strip()}\n```\n"
    )


def rewrite_section(doc: Path, text: str) -> None:
    """Replaces the text between the bench markers of `doc` (ValueError if it has none)."""
    content = doc.read_text(encoding="utf-8")
    begin, end = content.find(BEGIN), content.find(END)
    if begin < 0 or end < begin:
        raise ValueError(f"{doc} has no {BEGIN.strip()} ... {END} section")
    doc.write_text(content[: begin + len(BEGIN)] + text + content[end:], encoding="utf-8")
