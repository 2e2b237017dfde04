"""Tail breakdown: p50, p90 and p99 of where a request's time went, per run.

The middleware writes 1 s HDR interval logs of each request's queue time (arrival until a
worker takes it) and service time (the worker's round trip to the backend) under
`middleware-<j>/histograms/`; the loadgens' merged histogram gives the client's response time.
Over the measured seconds (intervals whose start falls between the loadgens' start + warm-up and
their end - cool-down) this module takes each one's percentiles and, as "the rest", the client's
percentile minus the middleware's response-time percentile (the network and the client). A
difference of percentiles is not the percentile of a difference: the parts are each a tail of
their own stage and need not add up to the client's. Pure functions over a run folder.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from cachelab.results.hdr import merge_histograms, percentiles_ms, read_hdr_log
from cachelab.results.run import RunData

TAIL_PERCENTILES = (50.0, 90.0, 99.0)
STAGES = ("queue", "service", "rest")
_START = re.compile(r"^#\[StartTime: ([\d.]+)")


def tail_columns_names() -> list[str]:
    return [f"tail_{stage}_p{q:g}_ms" for stage in STAGES for q in TAIL_PERCENTILES]


def _start_epoch_s(path: Path) -> float | None:
    with path.open(encoding="utf-8") as handle:
        for _ in range(5):
            match = _START.match(handle.readline())
            if match:
                return float(match.group(1))
    return None


def measured_histogram(path: Path, start_epoch_s: float, end_epoch_s: float) -> HdrHistogram | None:
    """The intervals of one middleware log that start inside [start, end) (epoch seconds)."""
    if not path.is_file():
        return None
    origin = _start_epoch_s(path)
    if origin is None:
        return None
    log = read_hdr_log(path)
    return merge_histograms(
        h
        for offset, h in log.intervals
        if start_epoch_s - 0.5 <= origin + offset < end_epoch_s - 0.5
    )


def _stage(mw_dirs: Sequence[Path], name: str, start_s: float, end_s: float) -> HdrHistogram | None:
    return merge_histograms(
        measured_histogram(d / "histograms" / f"{name}_time_all.hlog", start_s, end_s)
        for d in mw_dirs
    )


def tail_columns(data: RunData) -> dict[str, Any]:
    """The run's tail columns (empty without a middleware's histograms or a loadgen origin)."""
    origin_ms = data.origin_epoch_ms
    if origin_ms is None or not data.middlewares:
        return {}
    start_s = origin_ms / 1000.0 + data.interval.start_s
    end_s = origin_ms / 1000.0 + data.interval.end_s
    mw_dirs = [data.run.path / str(m["stats_dir"]) for m in data.record.middlewares] or list(
        data.run.middleware_dirs()
    )
    queue = _stage(mw_dirs, "queue", start_s, end_s)
    service = _stage(mw_dirs, "service", start_s, end_s)
    response = _stage(mw_dirs, "response", start_s, end_s)
    client = merge_histograms(c.histogram for c in data.clients)
    if queue is None or service is None or response is None or client is None:
        return {}
    columns: dict[str, Any] = {}
    parts = {"queue": queue, "service": service}
    for stage, histogram in parts.items():
        values = percentiles_ms(histogram, TAIL_PERCENTILES)
        for q in TAIL_PERCENTILES:
            columns[f"tail_{stage}_p{q:g}_ms"] = values[q]
    client_values = percentiles_ms(client, TAIL_PERCENTILES)
    mw_values = percentiles_ms(response, TAIL_PERCENTILES)
    for q in TAIL_PERCENTILES:
        rest = client_values[q] - mw_values[q]
        columns[f"tail_rest_p{q:g}_ms"] = max(0.0, rest) if math.isfinite(rest) else math.nan
    return columns
