"""Readers of the middleware's statistics (docs/interfaces.md §1): `windows.csv` (one row per
window and op type) and `summary.json` (its own trimmed totals, the fallback when the windows
cannot be placed on the clients' clock, e.g. the k8s runner's scraped summaries)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachelab.results.errors import ResultsError
from cachelab.results.memtier import number, optional_number
from cachelab.results.trim import MeasuredInterval

WINDOW_COLUMNS = (
    "window",
    "start_epoch_ms",
    "duration_ms",
    "op",
    "count",
    "response_time_mean_us",
    "queue_time_mean_us",
    "service_time_mean_us",
    "queue_length_mean",
)


@dataclass(frozen=True)
class MiddlewareWindow:
    """One row of windows.csv (times in microseconds as written)."""

    window: int
    start_epoch_ms: float
    duration_ms: float
    op: str
    count: float
    response_time_mean_us: float
    queue_time_mean_us: float
    service_time_mean_us: float
    queue_length_mean: float
    # the part of the queue time before the net thread published the request (NaN: the
    # column is absent, files written before it existed)
    staging_time_mean_us: float = math.nan


@dataclass(frozen=True)
class MiddlewareStats:
    """One middleware's numbers over the measured interval (one op type or `all`)."""

    throughput: float
    count: float
    response_time_ms: float
    queue_time_ms: float
    service_time_ms: float
    queue_length: float
    seconds: float
    source: str
    # queue time = staging (decoded until the end of the net thread's round) + the wait after
    # publishing (until a worker dequeues it); NaN where the middleware did not record it
    staging_time_ms: float = math.nan

    @property
    def publish_wait_ms(self) -> float:
        """Queue time after the request was published to the workers."""
        return self.queue_time_ms - self.staging_time_ms


def read_windows(path: Path) -> list[MiddlewareWindow]:
    """Every row of a windows.csv ([] when the file is absent)."""
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in WINDOW_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ResultsError(f"{path}: missing columns {missing}")
        return [
            MiddlewareWindow(
                window=int(number(row["window"])),
                start_epoch_ms=number(row["start_epoch_ms"]),
                duration_ms=number(row["duration_ms"]),
                op=str(row["op"]),
                count=number(row["count"]),
                response_time_mean_us=number(row["response_time_mean_us"]),
                queue_time_mean_us=number(row["queue_time_mean_us"]),
                service_time_mean_us=number(row["service_time_mean_us"]),
                queue_length_mean=number(row["queue_length_mean"]),
                staging_time_mean_us=optional_number(row, "staging_time_mean_us"),
            )
            for row in reader
        ]


def measured_windows(
    windows: Sequence[MiddlewareWindow],
    origin_epoch_ms: float,
    interval: MeasuredInterval,
    op: str = "all",
) -> MiddlewareStats | None:
    """The windows of one op type inside the measured interval, combined (None if none is)."""
    rows = [
        w
        for w in windows
        if w.op == op and interval.contains_window(origin_epoch_ms, w.start_epoch_ms, w.duration_ms)
    ]
    if not rows:
        return None
    count = sum(w.count for w in rows)
    seconds = sum(w.duration_ms for w in rows) / 1000.0

    def weighted(values: list[float]) -> float:
        if count == 0:
            return 0.0
        return sum(w.count * v for w, v in zip(rows, values, strict=True)) / count / 1000.0

    return MiddlewareStats(
        throughput=count / seconds if seconds else 0.0,
        count=count,
        response_time_ms=weighted([w.response_time_mean_us for w in rows]),
        queue_time_ms=weighted([w.queue_time_mean_us for w in rows]),
        service_time_ms=weighted([w.service_time_mean_us for w in rows]),
        queue_length=(
            sum(w.queue_length_mean * w.duration_ms for w in rows) / (seconds * 1000.0)
            if seconds
            else 0.0
        ),
        seconds=seconds,
        source="windows.csv",
        staging_time_ms=weighted([w.staging_time_mean_us for w in rows]),
    )


def read_middleware_summary(path: Path, op: str = "all") -> MiddlewareStats | None:
    """The middleware's own trimmed summary.json (`ops.<op>`), None when the file is absent."""
    if not path.is_file():
        return None
    try:
        data: Any = json.loads(path.read_text())
        block = data["ops"][op]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise ResultsError(f"{path}: not a middleware summary ({error!r})") from None
    windows = data.get("windows") or {}
    return MiddlewareStats(
        throughput=number(block.get("throughput_ops_per_s")),
        count=number(block.get("count")),
        response_time_ms=number((block.get("response_time_us") or {}).get("mean")) / 1000.0,
        queue_time_ms=number((block.get("queue_time_us") or {}).get("mean")) / 1000.0,
        service_time_ms=number((block.get("service_time_us") or {}).get("mean")) / 1000.0,
        queue_length=number((data.get("queue_length") or {}).get("mean")),
        seconds=number(windows.get("measured_seconds")),
        source="summary.json",
        staging_time_ms=(
            number(block["staging_time_us"].get("mean")) / 1000.0
            if isinstance(block.get("staging_time_us"), dict)
            else math.nan
        ),
    )


def _summary_block(path: Path, name: str) -> Any:
    """One top-level block of a summary.json, None when the file or the block is absent."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None
    return data.get(name) if isinstance(data, dict) else None


def read_server_requests(path: Path) -> dict[str, int]:
    """Requests the middleware sent to each server over its whole run (summary.json `servers`:
    address -> requests); {} when absent."""
    servers = _summary_block(path, "servers")
    if not isinstance(servers, list):
        return {}
    return {
        str(s["address"]): int(number(s.get("requests")))
        for s in servers
        if isinstance(s, dict) and "address" in s
    }


def read_middleware_config(path: Path) -> dict[str, Any]:
    """The `config` block of a summary.json ({} when absent)."""
    config = _summary_block(path, "config")
    return config if isinstance(config, dict) else {}
