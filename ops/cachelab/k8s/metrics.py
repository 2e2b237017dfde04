"""The middleware's statistics on Kubernetes: two scrapes of its Prometheus `/metrics` (before
and after the benchmark Job, through the API server's pod proxy) turned into the `ops.all` part of
its summary.json (docs/interfaces.md §1), which cachelab.summary reads. Over the whole Job, not
trimmed by warm-up and cool-down (the pod's own window files stay inside the pod)."""

from __future__ import annotations

import math
import re
from typing import Any

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
PREFIX = "cachelab_middleware_"


def parse_metrics(text: str) -> dict[str, float]:
    """Sum of the samples of each metric name over its labels (comments skipped)."""
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if not match:
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        if math.isnan(value):
            continue
        totals[match.group(1)] = totals.get(match.group(1), 0.0) + value
    return totals


def summary_from_scrapes(
    before: dict[str, float], after: dict[str, float], seconds: float
) -> dict[str, Any]:
    """A summary.json with the `ops.all` means over the interval between two scrapes."""

    def delta(name: str) -> float:
        return after.get(PREFIX + name, 0.0) - before.get(PREFIX + name, 0.0)

    count = delta("requests_total")

    def mean_us(metric: str) -> float:
        n = delta(f"{metric}_seconds_count")
        return delta(f"{metric}_seconds_sum") / n * 1e6 if n > 0 else 0.0

    return {
        "source": "prometheus /metrics, two scrapes around the benchmark Job",
        "windows": {"measured_seconds": seconds},
        "ops": {
            "all": {
                "count": count,
                "throughput_ops_per_s": count / seconds if seconds > 0 else 0.0,
                "response_time_us": {"mean": mean_us("response_time")},
                "queue_time_us": {"mean": mean_us("queue_time")},
                "service_time_us": {"mean": mean_us("service_time")},
                "staging_time_us": {"mean": mean_us("staging_time")},
                "errors": delta("errors_total"),
            }
        },
        "queue_length": {"mean": after.get(PREFIX + "queue_length", 0.0)},
    }
