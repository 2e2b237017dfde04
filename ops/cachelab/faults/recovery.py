"""Each second of a run with faults, and how long each fault took to show and to heal.

The timeline comes from the loadgens' progress lines (one per second: that second's ops/s and
p99, the run's errors so far), summed over the instances (p99: the highest). Around a fault:

- before: the mean throughput (replies without error) and median p99 of the seconds after the
  warm-up and before it;
- time to detect: from the fault's start to the end of the first second with an error, a p99
  above `P99_JUMP` times the p99 before, or throughput below `DROP_FRAC` of the throughput before;
- time to recover: from the fault's end (a kill: its start) to the end of the first second from
  which throughput stays at or above `RECOVERED_FRAC` of the throughput before for
  `RECOVERED_SECONDS` seconds (or to the end of the run). NaN when it never does.

The loadgens' last line is the run's cut-off partial second: seconds past the run's duration are
left out.

Pure functions over the parsed seconds, plus `read_timeline` and `read_events` for a run folder.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachelab.columns import FAULT_DETECT_S, FAULT_RECOVER_S
from cachelab.faults.injector import FAULTS_FILE, FaultEvent
from cachelab.terminal import parse_progress

P99_JUMP = 2.0
DROP_FRAC = 0.5
RECOVERED_FRAC = 0.9
RECOVERED_SECONDS = 2


@dataclass(frozen=True)
class Second:
    """One second of the run over all loadgens; `second` is its end, from the loadgens' start.
    `ops_per_s` counts every reply, error replies too (a middleware that cannot reach a server
    answers at once with an error); `good_ops_per_s` only the others."""

    second: int
    ops_per_s: float
    p99_ms: float
    errors: int  # errors in this second

    @property
    def good_ops_per_s(self) -> float:
        return max(0.0, self.ops_per_s - self.errors)


@dataclass(frozen=True)
class Recovery:
    """What one fault did to the clients (seconds; NaN where it cannot be told)."""

    target: str
    action: str
    began_s: float
    ended_s: float
    before_ops_per_s: float
    before_p99_ms: float
    detect_s: float
    recover_s: float


def _instance_seconds(log: Path) -> dict[int, tuple[float, float, int]]:
    seconds: dict[int, tuple[float, float, int]] = {}
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return seconds
    for line in text.splitlines():
        sample = parse_progress(line)
        if sample is not None:
            seconds[sample.second] = (sample.ops_per_s, sample.p99_ms or 0.0, sample.errors or 0)
    return seconds


def read_timeline(logs: Sequence[Path], duration_s: float = math.inf) -> list[Second]:
    """The run's seconds from its loadgens' logs (seconds that every instance reported, up to
    `duration_s`)."""
    instances = [_instance_seconds(log) for log in logs]
    instances = [i for i in instances if i]
    if not instances:
        return []
    common = sorted(s for s in set.intersection(*(set(i) for i in instances)) if s <= duration_s)
    timeline = []
    previous = [0] * len(instances)
    for second in common:
        errors = 0
        for k, inst in enumerate(instances):
            errors += max(0, inst[second][2] - previous[k])
            previous[k] = inst[second][2]
        timeline.append(
            Second(
                second,
                sum(inst[second][0] for inst in instances),
                max(inst[second][1] for inst in instances),
                errors,
            )
        )
    return timeline


def read_events(run_dir: Path) -> list[FaultEvent]:
    path = run_dir / FAULTS_FILE
    if not path.is_file():
        return []
    data: list[dict[str, Any]] = json.loads(path.read_text())
    events = []
    for entry in data:
        for key in ("began_s", "ended_s"):
            if entry.get(key) is None:
                entry[key] = math.nan
        events.append(FaultEvent(**entry))
    return events


def recovery(timeline: Sequence[Second], event: FaultEvent, warmup_s: float) -> Recovery:
    """Time to detect and to recover of one fault (see the module docstring)."""
    began, ended = event.began_s, event.ended_s
    nan = math.nan
    if not math.isfinite(began) or not timeline:
        return Recovery(event.target, event.action, began, ended, nan, nan, nan, nan)
    before = [s for s in timeline if warmup_s <= s.second - 1 and s.second <= began]
    before = before or [s for s in timeline if s.second <= began]
    if not before:
        return Recovery(event.target, event.action, began, ended, nan, nan, nan, nan)
    base_ops = statistics.fmean(s.good_ops_per_s for s in before)
    base_p99 = statistics.median(s.p99_ms for s in before)
    after = [s for s in timeline if s.second > began]
    detect = nan
    for s in after:
        dropped = s.good_ops_per_s < DROP_FRAC * base_ops
        if s.errors > 0 or s.p99_ms > P99_JUMP * base_p99 or dropped:
            detect = s.second - began
            break
    healed_from = ended if math.isfinite(ended) else began
    recover = nan
    later = [s for s in timeline if s.second - 1 >= healed_from]
    for k, s in enumerate(later):
        window = later[k : k + RECOVERED_SECONDS]
        if all(w.good_ops_per_s >= RECOVERED_FRAC * base_ops for w in window):
            recover = s.second - healed_from
            break
    return Recovery(event.target, event.action, began, ended, base_ops, base_p99, detect, recover)


def run_recoveries(
    run_dir: Path, logs: Sequence[Path], warmup_s: float, duration_s: float
) -> list[Recovery]:
    """Every fault of one run folder with its times."""
    events = read_events(run_dir)
    if not events:
        return []
    timeline = read_timeline(logs, duration_s)
    return [recovery(timeline, e, warmup_s) for e in events]


def fault_columns(recoveries: Sequence[Recovery]) -> dict[str, Any]:
    """The summary.csv columns of a run's first fault (empty without faults)."""
    if not recoveries:
        return {}
    first = recoveries[0]
    return {
        "fault": f"{first.action} {first.target}",
        FAULT_DETECT_S: first.detect_s,
        FAULT_RECOVER_S: first.recover_s,
    }


def loadgen_logs(run_dir: Path, loadgens: Sequence[dict[str, Any]]) -> list[Path]:
    """The progress logs of a run's loadgens (point.json's `loadgens`)."""
    return [run_dir / f"loadgen-{entry.get('index', k)}.log" for k, entry in enumerate(loadgens)]


def recoveries_of(
    run_dir: Path, record_spec: dict[str, Any], loadgens: Sequence[dict[str, Any]]
) -> list[Recovery]:
    """Every fault of a run folder with its times (none without faults.json)."""
    run = record_spec.get("run", {})
    warmup, duration = float(run.get("warmup_s", 0)), float(run.get("duration_s", math.inf))
    return run_recoveries(run_dir, loadgen_logs(run_dir, loadgens), warmup, duration)
