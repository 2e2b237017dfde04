"""Turn the raw outputs of a run into one `summary.csv` row (docs/interfaces.md §4).

Every number comes through `cachelab.results` (`read_run`): the loadgens' memtier JSON trimmed
to the measured seconds by the one rule of `cachelab.results.trim`, percentiles from their
HdrHistogram interval logs merged over the same seconds (else the JSON's compressed whole-run
histograms, else the count-weighted mean of the JSON percentiles, an approximation), the
middleware's 1 s windows inside the clients' measured interval (else its own summary.json), and
the per-process CPU samples. Hits and misses are whole-run counts (the Time-Serie does not carry
them). Errors are memtier's `Connection Errors` plus our loadgen's `Error Replies`.

The run's settings that are not sweep axes but change what it measures are columns too: the
bandwidth profile (`bandwidth`), the emulated RTTs (`network`: configured per link, and the links
whose calibration missed them by more than 10 %), the monitor settings (`monitor`) and the
command line (`command_line`), from point.json; the achieved RTTs are `rtt_<link>_p50_ms`.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cachelab.columns import (
    CPU_SERVER_MAX_CORES,
    ERRORS,
    GET_OPS_PER_S,
    HITS,
    HOT_KEY_SHARE,
    METRIC_COLUMNS,
    MISS_RATIO,
    MISSES,
    MW_PUBLISH_WAIT_MS,
    MW_QUEUE_LENGTH,
    MW_QUEUE_TIME_MS,
    MW_RESPONSE_TIME_MS,
    MW_SERVICE_TIME_MS,
    MW_STAGING_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    P50_MS,
    P90_MS,
    P99_MS,
    RESPONSE_TIME_MS,
    SERVER_REQUESTS_MAX_OVER_MEAN,
    SET_OPS_PER_S,
    THINK_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
    summary_columns,
)
from cachelab.faults.recovery import fault_columns, recoveries_of
from cachelab.openloop import open_loop_columns
from cachelab.results import ResultsDir, ResultsError
from cachelab.results.experiment import read_spec
from cachelab.results.hdr import merge_histograms, percentiles_ms, read_hdr_interval_log
from cachelab.results.memtier import LoadgenRun, load_memtier_json, stats_section
from cachelab.results.middleware import MiddlewareStats
from cachelab.results.run import ClientStats, RunData, client_stats, read_run
from cachelab.tail import tail_columns

__all__ = [
    "METRIC_COLUMNS",
    "SummaryError",
    "add_summary_row",
    "build_summary",
    "client_stats",
    "load_memtier_json",
    "read_hdr_interval_log",
    "row_of",
    "stats_section",
    "summarize_run",
    "summary_columns",
    "write_summary_csv",
]

_PERCENTILES = {P50_MS: 50.0, P90_MS: 90.0, P99_MS: 99.0}

SummaryError = ResultsError


def _weighted_mean(pairs: Iterable[tuple[float, float]]) -> float | None:
    pairs = list(pairs)
    weight = sum(w for w, _ in pairs)
    if weight <= 0:
        return None
    return sum(w * v for w, v in pairs) / weight


def _setting(value: Any) -> str | None:
    if value in (None, "", {}, []):
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _command(argv: Any) -> str | None:
    return " ".join(str(a) for a in argv) if isinstance(argv, list) and argv else None


def row_of(data: RunData) -> dict[str, Any]:
    """One summary.csv row from a run read through the results package (a partial or failed
    run's row names the run and its status, its measures empty)."""
    spec = data.record.spec
    topology, workload = spec["topology"], spec["workload"]
    total_clients = (
        topology["client_machines"]
        * topology["instances_per_machine"]
        * topology["threads"]
        * topology["clients_per_thread"]
    )
    row: dict[str, Any] = {
        "point": data.point,
        "repetition": data.repetition,
        **data.record.values,
        TOTAL_CLIENTS: total_clients,
        "workers": topology["workers"],
        "middlewares": topology["middlewares"],
        "servers": topology["servers"],
        THINK_TIME_MS: workload["think_time_ms"],
        "status": data.status,
        "bandwidth": _setting(data.record.extra.get("bandwidth")),
        "network": _setting(_configured_rtts(data.record.extra.get("network"))),
        "monitor": _setting(data.record.extra.get("monitor")),
        "command_line": _command(data.record.extra.get("command_line")),
    }
    row.update(_achieved_rtts(data.record.extra.get("network")))
    if data.status != "ok":
        # a partial or failed run measured nothing to average: its measures stay empty
        return row
    row.update(_client_columns(data.clients))
    row.update(_middleware_columns([m.all for m in data.middlewares]))
    for role in ("loadgen", "middleware", "server", "toxiproxy"):
        cores = [p.cores for p in data.cpu if p.role == role]
        if cores:
            row[f"cpu_{role}_cores"] = sum(cores)
            if role == "server":
                row[CPU_SERVER_MAX_CORES] = max(cores)
    spread = server_requests_max_over_mean([m.server_requests for m in data.middlewares])
    if spread is not None:
        row[SERVER_REQUESTS_MAX_OVER_MEAN] = spread
    share = hot_key_share([c.run for c in data.clients])
    if share is not None:
        row[HOT_KEY_SHARE] = share
    loadgens = [p for p in data.cpu if p.role == "loadgen"]
    row.update(
        open_loop_columns(
            spec,
            row.get(THROUGHPUT_OPS_PER_S),
            sum(p.cores for p in loadgens) if loadgens else math.nan,
            sum(p.wait_cores for p in loadgens) if loadgens else math.nan,
        )
    )
    row.update(fault_columns(recoveries_of(data.run.path, spec, data.record.loadgens)))
    row.update(tail_columns(data))
    return row


def _configured_rtts(network: Any) -> dict[str, Any] | None:
    """point.json's `network` as the run's setting: RTT per link, and the links off by > 10 %."""
    if not isinstance(network, dict) or not network.get("links"):
        return None
    rtt = {p["link"]: p["rtt_ms"] for p in network["links"]}
    return {"rtt_ms": rtt, "flagged": network.get("flagged") or []}


def _achieved_rtts(network: Any) -> dict[str, float]:
    """`rtt_<link>_p50_ms`: the calibration's p50 per link, mean over the link's proxies."""
    if not isinstance(network, dict):
        return {}
    found: dict[str, list[float]] = {}
    for proxy in network.get("links") or []:
        achieved = proxy.get("achieved") or {}
        if isinstance(achieved.get("p50_ms"), int | float):
            found.setdefault(proxy["link"], []).append(float(achieved["p50_ms"]))
    return {f"rtt_{link}_p50_ms": sum(v) / len(v) for link, v in found.items()}


def server_requests_max_over_mean(per_middleware: Sequence[dict[str, int]]) -> float | None:
    """The busiest server's requests over the mean server's, summed over the middlewares (their
    summary.json `servers`, whole runs): 1.0 when the servers are loaded equally."""
    requests: dict[str, int] = {}
    for servers in per_middleware:
        for address, count in servers.items():
            requests[address] = requests.get(address, 0) + count
    total = sum(requests.values())
    if not requests or total == 0:
        return None
    return max(requests.values()) / (total / len(requests))


def hot_key_share(runs: Sequence[LoadgenRun]) -> float | None:
    """The share of all requested keys that went to the most requested key, over every loadgen
    instance of a run (its "Key Counts"); None when an instance has none (memtier)."""
    totals = [r.keys_requested for r in runs]
    if not runs or any(t is None for t in totals):
        return None
    requested = sum(t for t in totals if t is not None)
    counts: dict[str, int] = {}
    for run in runs:
        for key, count in run.top_keys.items():
            counts[key] = counts.get(key, 0) + count
    return max(counts.values()) / requested if counts and requested else None


def summarize_run(run_dir: Path) -> dict[str, Any]:
    """One summary.csv row for `raw/p<point>-r<rep>/`."""
    from cachelab.results.layout import RUN_DIR_PATTERN, RunDir

    match = RUN_DIR_PATTERN.match(run_dir.name)
    point, rep = (int(match["point"]), int(match["rep"])) if match else (-1, -1)
    return row_of(read_run(RunDir(point, rep, run_dir)))


def _client_columns(clients: list[ClientStats]) -> dict[str, Any]:
    if not clients:
        return {}
    hits = sum(c.hits for c in clients)
    misses = sum(c.misses for c in clients)
    columns: dict[str, Any] = {
        THROUGHPUT_OPS_PER_S: sum(c.throughput for c in clients),
        GET_OPS_PER_S: sum(c.gets.ops_per_s for c in clients),
        SET_OPS_PER_S: sum(c.sets.ops_per_s for c in clients),
        RESPONSE_TIME_MS: _weighted_mean(
            (c.totals.count, c.totals.mean_latency_ms) for c in clients
        ),
        HITS: int(hits),
        MISSES: int(misses),
        MISS_RATIO: misses / (hits + misses) if hits + misses else 0.0,
        ERRORS: int(sum(c.errors for c in clients)),
    }
    histograms = [c.histogram for c in clients]
    merged = merge_histograms(histograms) if all(h is not None for h in histograms) else None
    if merged is not None and merged.get_total_count() > 0:
        values = percentiles_ms(merged, _PERCENTILES.values())
        for column, p in _PERCENTILES.items():
            columns[column] = values[p]
    else:
        for column, p in _PERCENTILES.items():
            columns[column] = _weighted_mean(
                (c.totals.count, c.percentiles_ms[p]) for c in clients if p in c.percentiles_ms
            )
    return columns


def _middleware_columns(mws: list[MiddlewareStats]) -> dict[str, Any]:
    if not mws:
        return {}
    # summaries without counts (the k8s runner's scrapes) weigh every middleware the same
    counted = any(m.count > 0 for m in mws)
    weights = [m.count if counted else 1.0 for m in mws]
    columns: dict[str, Any] = {
        MW_THROUGHPUT_OPS_PER_S: sum(m.throughput for m in mws),
        MW_RESPONSE_TIME_MS: _weighted_mean(
            (w, m.response_time_ms) for w, m in zip(weights, mws, strict=True)
        ),
        MW_QUEUE_TIME_MS: _weighted_mean(
            (w, m.queue_time_ms) for w, m in zip(weights, mws, strict=True)
        ),
        MW_SERVICE_TIME_MS: _weighted_mean(
            (w, m.service_time_ms) for w, m in zip(weights, mws, strict=True)
        ),
        MW_QUEUE_LENGTH: sum(m.queue_length for m in mws),
    }
    if all(math.isfinite(m.staging_time_ms) for m in mws):
        columns[MW_STAGING_TIME_MS] = _weighted_mean(
            (w, m.staging_time_ms) for w, m in zip(weights, mws, strict=True)
        )
        columns[MW_PUBLISH_WAIT_MS] = _weighted_mean(
            (w, m.publish_wait_ms) for w, m in zip(weights, mws, strict=True)
        )
    return columns


# --- the whole experiment ---------------------------------------------------------------------


def _format(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.1f}"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def add_summary_row(
    rows: list[dict[str, Any]], run_dir: Path, axes: Sequence[str], path: Path
) -> str | None:
    """Summarise one run into `rows` (replacing an older row of the same point and repetition)
    and rewrite summary.csv; returns why there is no row, or None. Called from a runner's thread.
    """
    try:
        row = summarize_run(run_dir)
    except (ResultsError, KeyError, ValueError) as error:
        return str(error)
    key = (row["point"], row["repetition"])
    rows[:] = [r for r in rows if (r["point"], r["repetition"]) != key]
    rows.append(row)
    write_summary_csv(rows, axes, path)
    return None


def write_summary_csv(rows: Sequence[dict[str, Any]], axes: Sequence[str], path: Path) -> Path:
    """Write rows (missing columns empty) in the documented column order."""
    columns = summary_columns(axes)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_format(row.get(c)) for c in columns])
    tmp.replace(path)
    return path


def build_summary(results_dir: Path) -> Path:
    """(Re)build `summary.csv` from every `raw/p*-r*/` of a results folder."""
    results = ResultsDir(results_dir)
    axes = list(read_spec(results).sweep)
    rows = [row_of(read_run(run)) for run in results.runs() if run.point_file.is_file()]
    if not rows:  # an empty summary would replace one that may hold what raw/ no longer does
        raise ResultsError(
            f"{results.raw_dir}: no run with a point.json to summarize (summary.csv left as it was)"
        )
    return write_summary_csv(rows, axes, results.summary_file)
