"""The columns of ``summary.csv``: one place for the runner, the report and the spec check.

A spec's ``report.x`` and ``report.series`` name columns of this header, so the spec is checked
against it before anything runs (``cachelab.spec``); this module imports nothing of cachelab.
"""

from __future__ import annotations

from collections.abc import Sequence

BASE_COLUMNS = ["point", "repetition"]
CONFIG_COLUMNS = ["total_clients", "workers", "middlewares", "servers", "think_time_ms"]
METRIC_COLUMNS = [
    "throughput_ops_per_s",
    "get_ops_per_s",
    "set_ops_per_s",
    "response_time_ms",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "hits",
    "misses",
    "miss_ratio",
    "errors",
    "mw_throughput_ops_per_s",
    "mw_response_time_ms",
    "mw_queue_time_ms",
    "mw_staging_time_ms",
    "mw_publish_wait_ms",
    "mw_service_time_ms",
    "mw_queue_length",
    "cpu_loadgen_cores",
    "cpu_middleware_cores",
    "cpu_server_cores",
    "cpu_server_max_cores",
    "hot_key_share",
    "offered_ops_per_s",  # open loop: workload.rate_ops, requests/s offered in total
    "achieved_frac",  # open loop: throughput_ops_per_s / offered_ops_per_s
    "rate_verdict",  # open loop: ok, loadgen-bound or system-saturated (achieved < 95 %)
    "fault",  # the run's first fault: "<action> <target>"
    "fault_detect_s",  # seconds from its start to the first second with errors or a jump
    "fault_recover_s",  # seconds from its end until throughput holds >= 90 % of before
    # p50/p90/p99 of the middleware's queue and service times and of the rest (client minus
    # middleware response time at that percentile), over the measured seconds (cachelab.tail)
    "tail_queue_p50_ms",
    "tail_queue_p90_ms",
    "tail_queue_p99_ms",
    "tail_service_p50_ms",
    "tail_service_p90_ms",
    "tail_service_p99_ms",
    "tail_rest_p50_ms",
    "tail_rest_p90_ms",
    "tail_rest_p99_ms",
    "status",
    "bandwidth",
    "monitor",
    "command_line",
]


def summary_columns(axes: Sequence[str]) -> list[str]:
    """The summary.csv header for a spec with these sweep axes."""
    extra = [a for a in axes if a not in BASE_COLUMNS + CONFIG_COLUMNS + METRIC_COLUMNS]
    return BASE_COLUMNS + extra + CONFIG_COLUMNS + METRIC_COLUMNS
