"""Synthesise a results folder in the documented layout (docs/interfaces.md §1, §2, §4).

The numbers come from a model of the system, not from a run: the middleware's worker pool is a
closed-network station with ``workers x middlewares`` servers of service time ``SERVICE_MS`` and
the client and network side is a delay of ``NETWORK_MS``; exact MVA gives throughput and queueing
per client count. Seeded noise is added per repetition and per 1 s window, so error bars, the
seeds' pooled window SD and the factorial error term all have something to show.

``python tests/data/make_results_sample.py`` regenerates ``tests/data/results-sample/`` (the
quickstart shape at toy scale). Tests call ``write_results`` with other specs into ``tmp_path``.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from hdrh.histogram import HdrHistogram

from cachelab.analysis.queueing import mva
from cachelab.summary import summary_columns

SERVICE_MS = 0.40  # worker <-> memcached round trip
MW_OTHER_MS = 0.03  # parse and reply inside the middleware, outside queue and service
NETWORK_MS = 0.12  # client <-> middleware and client-side time (no middleware: client <-> server)
SERVER_CAPACITY_OPS_PER_S = 40_000.0  # per memcached server, for runs without a middleware

SAMPLE_SPEC: dict[str, Any] = {
    "name": "results-sample",
    "description": "Synthetic quickstart-shaped results for the report tests",
    "seeds": ["asl17-3.1-one-mw"],
    "topology": {
        "client_machines": 1,
        "instances_per_machine": 1,
        "threads": 2,
        "clients_per_thread": 1,
        "middlewares": 1,
        "workers": 8,
        "servers": 3,
        "backend": "memcached",
        "hosts": {"client": "a2", "middleware": "a4", "server": "a1"},
    },
    "workload": {
        "protocol": "memcache_text",
        "ratio": "0:1",
        "value_bytes": 1024,
        "key_maximum": 1000,
        "key_pattern": "R:R",
        "multi_get": 0,
        "sharded": False,
        "routing": "round-robin",
        "replication": 1,
        "think_time_ms": 0,
    },
    "preload": {"enabled": True, "expected_miss_ratio": 0.0},
    "sweep": {"topology.clients_per_thread": [1, 4, 16], "topology.workers": [2, 8]},
    "run": {"repetitions": 2, "duration_s": 10, "warmup_s": 2, "cooldown_s": 2},
    "report": {"x": "total_clients", "series": "topology.workers"},
}


def _set_path(tree: dict[str, Any], dotted: str, value: Any) -> None:
    node = tree
    *parents, leaf = dotted.split(".")
    for part in parents:
        node = node[part]
    node[leaf] = value


def points(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Cartesian product of the sweep axes in axis order, last axis fastest (as cachelab.spec)."""
    sweep = spec.get("sweep") or {}
    names = list(sweep)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*sweep.values())]


def _resolve(spec: dict[str, Any], point: dict[str, Any]) -> dict[str, Any]:
    tree = json.loads(json.dumps(spec))
    for path, value in point.items():
        _set_path(tree, path, value)
    return tree


def _model(topology: dict[str, Any], clients: int, ratio_set: float) -> dict[str, float]:
    """Throughput and the response-time split predicted for one point (MVA)."""
    middlewares = topology["middlewares"]
    write_cost = 1.0 + ratio_set * (topology["servers"] - 1) * 0.5  # SETs go to every server
    service_ms = SERVICE_MS * write_cost
    if middlewares == 0:
        demand_s = 1.0 / (SERVER_CAPACITY_OPS_PER_S * topology["servers"])
        solved = mva([demand_s], NETWORK_MS / 1e3, clients)
        x, r = solved.at(clients)
        return {"x": x, "client_rt_ms": r * 1e3 + NETWORK_MS, "service_ms": 0.0}
    pool = topology["workers"] * middlewares
    solved = mva([service_ms / 1e3], (NETWORK_MS + MW_OTHER_MS) / 1e3, clients, servers=[pool])
    x, r = solved.at(clients)
    station_ms = r * 1e3
    queue_ms = max(0.0, station_ms - service_ms)
    return {
        "x": x,
        "client_rt_ms": station_ms + MW_OTHER_MS + NETWORK_MS,
        "mw_rt_ms": station_ms + MW_OTHER_MS,
        "queue_ms": queue_ms,
        "service_ms": service_ms,
        "queue_length": x * queue_ms / 1e3,
    }


def _latency_samples(rng: np.random.Generator, mean_ms: float, size: int) -> np.ndarray:
    sigma = 0.45
    samples = rng.lognormal(mean=0.0, sigma=sigma, size=size)
    return np.asarray(samples / samples.mean() * mean_ms, dtype=np.float64)


def _percentiles(samples: np.ndarray) -> dict[str, float]:
    return {
        f"p{p:.2f}": round(float(np.percentile(samples, p)), 3) for p in (50.0, 90.0, 99.0, 99.9)
    }


def _cumulative_histogram(samples: np.ndarray) -> list[dict[str, float]]:
    bounds = np.unique(np.round(np.geomspace(samples.min(), samples.max(), 40), 3))
    rows = []
    for bound in bounds:
        percent = 100.0 * float(np.mean(samples <= bound))
        rows.append({"<=msec": float(bound), "percent": round(percent, 3)})
    rows[-1]["percent"] = 100.0
    return rows


def _hdr_interval_log(samples: np.ndarray, seconds: int, start_epoch_s: float) -> str:
    """An HdrHistogram interval log, one interval per second (µs values, relative timestamps,
    `#[StartTime]`), as the loadgen's ``--hdr-file-prefix`` writes it; the samples are spread
    evenly over the seconds."""
    lines = [
        "#[synthetic: make_results_sample.py]",
        f"#[StartTime: {start_epoch_s:.3f} (seconds since epoch)]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    for second, chunk in enumerate(np.array_split(samples, seconds)):
        histogram = HdrHistogram(1, 60_000_000, 3)
        for value_ms in chunk:
            histogram.record_value(max(1, round(float(value_ms) * 1000.0)))
        payload = histogram.encode().decode("ascii")
        top = float(chunk.max()) if chunk.size else 0.0
        lines.append(f"{second:.3f},1.000,{top:.3f},{payload}")
    return "\n".join(lines) + "\n"


def _op_block(
    count: int, ops_per_s: float, latency_ms: float, series: dict[str, Any], pct: dict[str, float]
) -> dict[str, Any]:
    return {
        "Count": count,
        "Ops/sec": round(ops_per_s, 2),
        "Hits/sec": round(ops_per_s, 2),
        "Misses/sec": 0.0,
        "Latency": round(latency_ms, 3),
        "Average Latency": round(latency_ms, 3),
        "Min Latency": round(latency_ms * 0.3, 3),
        "Max Latency": round(latency_ms * 6.0, 3),
        "KB/sec": round(ops_per_s * 1.07, 2),
        "Percentile Latencies": dict(pct),
        "Time-Serie": series,
    }


def _empty_op_block(seconds: int) -> dict[str, Any]:
    series = {str(s): {"Count": 0, "Bytes RX": 0, "Bytes TX": 0} for s in range(seconds)}
    block = _op_block(0, 0.0, 0.0, series, {})
    block["Hits/sec"] = 0.0
    return block


def _loadgen_json(
    rng: np.random.Generator,
    resolved: dict[str, Any],
    instance_ops_per_s: float,
    rt_ms: float,
    seconds: int,
) -> tuple[dict[str, Any], np.ndarray, list[int], list[float]]:
    counts: list[int] = []
    latencies: list[float] = []
    series: dict[str, Any] = {}
    for second in range(seconds):
        count = max(1, round(instance_ops_per_s * rng.normal(1.0, 0.03)))
        latency = rt_ms * rng.normal(1.0, 0.03)
        counts.append(count)
        latencies.append(latency)
        series[str(second)] = {
            "Count": count,
            "Average Latency": round(latency, 3),
            "Min Latency": round(latency * 0.3, 3),
            "Max Latency": round(latency * 6.0, 3),
            "p50.00": round(latency * 0.92, 3),
            "p99.00": round(latency * 2.6, 3),
            "p99.90": round(latency * 3.9, 3),
            "Bytes RX": count * 1100,
            "Bytes TX": count * 30,
        }
    samples = _latency_samples(rng, rt_ms, 4000)
    pct = _percentiles(samples)
    total = sum(counts)
    ops = total / seconds
    mean_latency = sum(c * lat for c, lat in zip(counts, latencies, strict=True)) / total
    topology, workload = resolved["topology"], resolved["workload"]
    document = {
        "configuration": {
            "server": "127.0.0.1",
            "port": 11212,
            "protocol": workload["protocol"],
            "ratio": workload["ratio"],
            "data_size": workload["value_bytes"],
            "key_maximum": workload["key_maximum"],
            "threads": topology["threads"],
            "clients": topology["clients_per_thread"],
            "test_time": seconds,
        },
        "run information": {
            "Threads": topology["threads"],
            "Connections per thread": topology["clients_per_thread"],
            "Seconds": seconds,
            "Format version": 2,
        },
        "ALL STATS": {
            "Runtime": {
                "Start time": 1_763_700_000_000,
                "Finish time": 1_763_700_000_000 + seconds * 1000,
                "Total duration": seconds * 1000,
                "Time unit": "MILLISECONDS",
                "Interrupted": "false",
            },
            "Sets": _empty_op_block(seconds),
            "Gets": _op_block(total, ops, mean_latency, series, pct),
            "Waits": _empty_op_block(seconds),
            "Totals": _op_block(total, ops, mean_latency, series, pct),
            "SET": [],
            "GET": _cumulative_histogram(samples),
            "WAIT": [],
        },
    }
    return document, samples, counts, latencies


def _timing(mean: float, spread: float = 1.0) -> dict[str, float]:
    return {
        "mean": round(mean, 2),
        "p50": round(mean * 0.9, 2),
        "p90": round(mean * 1.8 * spread, 2),
        "p99": round(mean * 3.0 * spread, 2),
        "max": round(mean * 9.0 * spread, 2),
    }


def _middleware_files(
    directory: Path,
    resolved: dict[str, Any],
    model: dict[str, float],
    mw_ops_per_s: float,
    seconds: int,
) -> None:
    run = resolved["run"]
    topology = resolved["topology"]
    measured_seconds = seconds - run["warmup_s"] - run["cooldown_s"]
    count = round(mw_ops_per_s * measured_seconds)
    ops_get = {
        "count": count,
        "throughput_ops_per_s": round(mw_ops_per_s, 2),
        "response_time_us": _timing(model["mw_rt_ms"] * 1e3),
        "queue_time_us": _timing(model["queue_ms"] * 1e3, 1.5),
        "service_time_us": _timing(model["service_ms"] * 1e3),
        "keys_requested": count,
        "hits": count,
        "misses": 0,
        "errors": 0,
    }
    empty = {
        "count": 0,
        "throughput_ops_per_s": 0.0,
        "response_time_us": _timing(0.0),
        "queue_time_us": _timing(0.0),
        "service_time_us": _timing(0.0),
        "keys_requested": 0,
        "hits": 0,
        "misses": 0,
        "errors": 0,
    }
    servers = [f"127.0.0.1:{21000 + i}" for i in range(topology["servers"])]
    summary = {
        "config": {
            "listen": "127.0.0.1:11212",
            "workers": topology["workers"],
            "sharded": resolved["workload"]["sharded"],
            "routing": resolved["workload"]["routing"],
            "replication": resolved["workload"]["replication"],
            "servers": servers,
            "window_ms": 1000,
            "warmup_s": run["warmup_s"],
            "cooldown_s": run["cooldown_s"],
        },
        "windows": {
            "total": seconds,
            "measured_first": run["warmup_s"],
            "measured_last": seconds - run["cooldown_s"] - 1,
            "measured_seconds": float(measured_seconds),
        },
        "ops": {
            "get": ops_get,
            "multiget": empty,
            "set": empty,
            "other": empty,
            "all": ops_get,
        },
        "queue_length": {"mean": round(model["queue_length"], 3), "max": 1 + int(model["x"] / 1e3)},
        "servers": [
            {"address": s, "requests": count // len(servers), "errors": 0} for s in servers
        ],
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    header = (
        "window,start_epoch_ms,duration_ms,op,count,throughput_ops_per_s,response_time_mean_us,"
        "queue_time_mean_us,service_time_mean_us,response_time_p50_us,response_time_p99_us,"
        "queue_length_mean,queue_length_max,keys_requested,hits,errors"
    )
    lines = [header]
    for window in range(seconds):
        per_window = round(mw_ops_per_s)
        lines.append(
            f"{window},{1_763_700_000_000 + 1000 * window},1000,all,{per_window},"
            f"{per_window:.1f},{model['mw_rt_ms'] * 1e3:.1f},{model['queue_ms'] * 1e3:.1f},"
            f"{model['service_ms'] * 1e3:.1f},{model['mw_rt_ms'] * 900:.1f},"
            f"{model['mw_rt_ms'] * 3000:.1f},{model['queue_length']:.3f},"
            f"{1 + int(model['queue_length'] * 3)},{per_window},{per_window},0"
        )
    (directory / "windows.csv").write_text("\n".join(lines) + "\n")


def write_results(root: Path, spec: dict[str, Any], seed: int = 2017) -> Path:
    """Write a complete results folder for ``spec`` under ``root`` and return its path."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    metadata = {
        "created": "2026-11-21T15:00:00Z",
        "git": {"sha": "0" * 40, "branch": "analysis", "dirty": False},
        "tools": {"cachelab": "0.1.0", "memcached": "memcached 1.6.x"},
        "jars": {},
        "host": {"cpus": 2, "memory_gib": 24},
        "synthetic": True,
        "generator": "ops/tests/data/make_results_sample.py",
    }
    (root / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    axes = list(spec.get("sweep", {}))
    run = spec["run"]
    seconds = run["duration_s"]
    rows: list[dict[str, Any]] = []
    for point_index, point in enumerate(points(spec)):
        resolved = _resolve(spec, point)
        topology, workload = resolved["topology"], resolved["workload"]
        instances = topology["client_machines"] * topology["instances_per_machine"]
        clients = instances * topology["threads"] * topology["clients_per_thread"]
        set_share = int(workload["ratio"].split(":")[0])
        get_share = int(workload["ratio"].split(":")[1])
        ratio_set = set_share / max(1, set_share + get_share)
        model = _model(topology, clients, ratio_set)
        for rep in range(run["repetitions"]):
            rep_factor = rng.normal(1.0, 0.015)
            x = model["x"] * rep_factor
            rt = model["client_rt_ms"] / rep_factor
            raw = root / "raw" / f"p{point_index}-r{rep}"
            raw.mkdir(parents=True, exist_ok=True)
            record = {
                "point": point_index,
                "repetition": rep,
                "values": point,
                "spec": resolved,
                "status": "ok",
                "message": "",
            }
            (raw / "point.json").write_text(json.dumps(record, indent=2) + "\n")
            trimmed_counts = np.zeros(seconds - run["warmup_s"] - run["cooldown_s"])
            weighted_latency = np.zeros_like(trimmed_counts)
            all_samples = []
            for instance in range(instances):
                document, samples, counts, latencies = _loadgen_json(
                    rng, resolved, x / instances, rt, seconds
                )
                (raw / f"loadgen-{instance}.json").write_text(json.dumps(document, indent=1))
                (raw / f"loadgen-{instance}-hdr_FULL_RUN_1.txt").write_text(
                    _hdr_interval_log(samples, seconds, 1_763_700_000.0)
                )
                (raw / f"loadgen-{instance}.log").write_text(
                    f"[RUN #1] synthetic loadgen instance {instance}: {sum(counts)} ops\n"
                )
                window = slice(run["warmup_s"], seconds - run["cooldown_s"])
                trimmed_counts += np.asarray(counts[window], dtype=float)
                weighted_latency += np.asarray(counts[window]) * np.asarray(latencies[window])
                all_samples.append(samples)
            throughput = float(trimmed_counts.mean())
            response = float(weighted_latency.sum() / trimmed_counts.sum())
            merged = np.concatenate(all_samples)
            row: dict[str, Any] = {"point": point_index, "repetition": rep}
            row.update({axis: point[axis] for axis in axes})
            hits = int(trimmed_counts.sum())
            row.update(
                {
                    "total_clients": clients,
                    "workers": topology["workers"],
                    "middlewares": topology["middlewares"],
                    "servers": topology["servers"],
                    "think_time_ms": workload["think_time_ms"],
                    "throughput_ops_per_s": round(throughput, 2),
                    "get_ops_per_s": round(throughput * (1 - ratio_set), 2),
                    "set_ops_per_s": round(throughput * ratio_set, 2),
                    "response_time_ms": round(response, 4),
                    "p50_ms": round(float(np.percentile(merged, 50)), 3),
                    "p90_ms": round(float(np.percentile(merged, 90)), 3),
                    "p99_ms": round(float(np.percentile(merged, 99)), 3),
                    "hits": hits,
                    "misses": 0,
                    "miss_ratio": 0.0,
                    "errors": 0,
                }
            )
            if topology["middlewares"] > 0:
                per_mw = throughput / topology["middlewares"]
                for j in range(topology["middlewares"]):
                    _middleware_files(raw / f"middleware-{j}", resolved, model, per_mw, seconds)
                row.update(
                    {
                        "mw_throughput_ops_per_s": round(throughput * rng.normal(1.0, 0.002), 2),
                        "mw_response_time_ms": round(model["mw_rt_ms"] / rep_factor, 4),
                        "mw_queue_time_ms": round(model["queue_ms"] / rep_factor, 4),
                        "mw_service_time_ms": round(model["service_ms"], 4),
                        "mw_queue_length": round(model["queue_length"], 3),
                    }
                )
            else:
                row.update(
                    {
                        "mw_throughput_ops_per_s": "",
                        "mw_response_time_ms": "",
                        "mw_queue_time_ms": "",
                        "mw_service_time_ms": "",
                        "mw_queue_length": "",
                    }
                )
            row["status"] = "ok"
            (raw / "servers.json").write_text(
                json.dumps(
                    [
                        {
                            "address": f"127.0.0.1:{21000 + i}",
                            "cmd_get": hits // topology["servers"],
                        }
                        for i in range(topology["servers"])
                    ],
                    indent=2,
                )
                + "\n"
            )
            rows.append(row)
    columns = summary_columns(axes)
    with (root / "summary.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    runs = [
        {"point": r["point"], "repetition": r["repetition"], "status": "ok", "message": ""}
        for r in rows
    ]
    status = {
        "experiment": spec["name"],
        "target": "local",
        "runs_total": len(rows),
        "state": "complete",
        "started": "2026-11-21T15:00:00Z",
        "finished": "2026-11-21T15:04:00Z",
        "message": "",
        "runs": runs,
        "runs_done": len(rows),
    }
    (root / "status.json").write_text(json.dumps(status, indent=2) + "\n")
    return root


def main() -> None:
    target = Path(__file__).resolve().parent / "results-sample"
    if target.exists():
        for path in sorted(target.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink()
    write_results(target, SAMPLE_SPEC)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
