"""Writes the raw-output fixtures under tests/data/ (run once; the files are committed).

`run-two-instances/` is one run (6 s, 1 s trimmed at each end) of two loadgen instances in
memtier's JSON layout with HdrHistogram interval logs, and one middleware with windows.csv and
summary.json. The numbers are chosen so the expected summary can be worked out by hand
(see test_summary.py). `memtier-aggregated.json` uses memtier's multi-run section name and its
`-nan` output.

    cd ops && ../.venv/bin/python tests/data/make_fixtures.py
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from hdrh.histogram import HdrHistogram

HERE = Path(__file__).parent
START_MS = 1_700_000_000_000


def time_serie(per_second: dict[int, tuple[int, float]]) -> dict[str, dict[str, float]]:
    serie = {}
    for second in range(6):
        count, latency = per_second.get(second, (0, 0.0))
        entry: dict[str, float] = {"Bytes RX": count * 1030, "Bytes TX": count * 20, "Count": count}
        if count:
            entry.update(
                {
                    "Average Latency": latency,
                    "Accumulated Latency": int(count * latency),
                    "Min Latency": latency,
                    "Max Latency": latency,
                    "p50.00": latency,
                    "p99.00": latency,
                    "p99.90": latency,
                }
            )
        serie[str(second)] = entry
    return serie


def histogram_of(per_second: dict[int, tuple[int, float]], seconds: range) -> HdrHistogram:
    histogram = HdrHistogram(1, 60_000_000, 3)
    for second in seconds:
        count, latency_ms = per_second.get(second, (0, 0.0))
        if count:
            histogram.record_value(int(latency_ms * 1000), count)
    return histogram


def memtier_doc(
    per_second: dict[int, tuple[int, float]], hits_per_s: float, misses_per_s: float, p: dict
) -> dict:
    total = sum(c for c, _ in per_second.values())
    mean = sum(c * lat for c, lat in per_second.values()) / total
    whole = histogram_of(per_second, range(6))
    gets = {
        "Count": total,
        "Ops/sec": total / 6.0,
        "Hits/sec": hits_per_s,
        "Misses/sec": misses_per_s,
        "Latency": mean,
        "Average Latency": mean,
        "Min Latency": 1.0,
        "Max Latency": 3.0,
        "KB/sec": 200.0,
        "Percentile Latencies": {
            **p,
            "Histogram log format": {"Compressed Histogram": whole.encode().decode()},
        },
        "Time-Serie": time_serie(per_second),
    }
    sets = {
        "Count": 0,
        "Ops/sec": 0.0,
        "Hits/sec": 0.0,
        "Misses/sec": 0.0,
        "Latency": 0.0,
        "Average Latency": 0.0,
        "Min Latency": 0.0,
        "Max Latency": 0.0,
        "KB/sec": 0.0,
        "Percentile Latencies": {"p50.00": 0.0, "p90.00": 0.0, "p99.00": 0.0},
        "Time-Serie": time_serie({}),
    }
    totals = dict(gets)
    totals["Connection Errors"] = 0
    return {
        "configuration": {"server": "127.0.0.1", "port": 11212, "protocol": "memcache_text"},
        "run information": {"Threads": 1, "Connections per thread": 2, "Seconds": 6},
        "ALL STATS": {
            "Runtime": {
                "Start time": START_MS,
                "Finish time": START_MS + 6000,
                "Total duration": 6000,
                "Time unit": "MILLISECONDS",
                "Interrupted": "false",
            },
            "Sets": sets,
            "Gets": gets,
            "Waits": {"Count": 0},
            "Totals": totals,
        },
    }


def write_hdr_log(path: Path, per_second: dict[int, tuple[int, float]], absolute: bool) -> None:
    """An HdrHistogram interval log, one interval per second (absolute or relative stamps)."""
    lines = [
        "#[cachelab fixture]",
        f"#[StartTime: {START_MS / 1000:.3f} (seconds since epoch)]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    for second in range(6):
        histogram = histogram_of(per_second, range(second, second + 1))
        stamp = START_MS / 1000 + second if absolute else float(second)
        max_ms = histogram.get_max_value() / 1000
        lines.append(f"{stamp:.3f},1.000,{max_ms:.3f},{histogram.encode().decode()}")
    path.write_text("\n".join(lines) + "\n")


def write_run(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    instance0 = {0: (100, 2.0), 1: (200, 1.0), 2: (200, 1.0), 3: (200, 1.0), 4: (200, 1.0)}
    instance0[5] = (50, 3.0)
    instance1 = {1: (100, 2.0), 2: (100, 2.0), 3: (100, 2.0), 4: (100, 2.0)}
    p0 = {"p50.00": 1.0, "p90.00": 2.0, "p99.00": 3.0}
    p1 = {"p50.00": 2.0, "p90.00": 2.0, "p99.00": 2.0}
    for index, (series, hits, misses, p) in enumerate(
        [(instance0, 950 / 6, 0.0, p0), (instance1, 75.0, 0.5, p1)]
    ):
        doc = memtier_doc(series, hits, misses, p)
        (folder / f"loadgen-{index}.json").write_text(json.dumps(doc, indent=2) + "\n")
        write_hdr_log(folder / f"loadgen-{index}-hdr_FULL_RUN_1.txt", series, index == 0)
    mw = folder / "middleware-0"
    mw.mkdir(exist_ok=True)
    header = (
        "window,start_epoch_ms,duration_ms,op,count,throughput_ops_per_s,response_time_mean_us,"
        "queue_time_mean_us,service_time_mean_us,response_time_p50_us,response_time_p99_us,"
        "queue_length_mean,queue_length_max,keys_requested,hits,errors"
    )
    columns = header.split(",")
    with (mw / "windows.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for window in range(7):
            inside = 1 <= window <= 4
            count = 300 if inside else 10
            begin = START_MS - 500 + window * 1000
            for op in ("get", "all"):
                writer.writerow(
                    [window, begin, 1000, op, count, count, 500 if inside else 9000,
                     100 if inside else 8000, 300 if inside else 900, 480, 900,
                     0.5 if inside else 7.0, 2, count, count, 0]
                )  # fmt: skip
    summary = {
        "config": {"listen": "127.0.0.1:11212", "workers": 8, "sharded": False},
        "windows": {"total": 7, "measured_first": 1, "measured_last": 5, "measured_seconds": 5.0},
        "ops": {
            "all": {
                "count": 1500,
                "throughput_ops_per_s": 299.0,
                "response_time_us": {"mean": 510, "p50": 480, "p90": 800, "p99": 900, "max": 1e4},
                "queue_time_us": {"mean": 110, "p50": 90, "p90": 200, "p99": 300, "max": 900},
                "service_time_us": {"mean": 310, "p50": 300, "p90": 400, "p99": 500, "max": 900},
                "keys_requested": 1500,
                "hits": 1500,
                "misses": 0,
                "errors": 0,
            }
        },
        "queue_length": {"mean": 0.6, "max": 2},
        "servers": [{"address": "127.0.0.1:11211", "requests": 1500, "errors": 0}],
    }
    (mw / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    spec = {
        "name": "fixture",
        "topology": {
            "client_machines": 1,
            "instances_per_machine": 2,
            "threads": 1,
            "clients_per_thread": 2,
            "middlewares": 1,
            "workers": 8,
            "servers": 1,
        },
        "workload": {"think_time_ms": 0},
        "run": {"repetitions": 1, "duration_s": 6, "warmup_s": 1, "cooldown_s": 1},
    }
    point = {
        "point": 0,
        "repetition": 0,
        "values": {"topology.clients_per_thread": 2},
        "spec": spec,
        "status": "ok",
        "loadgens": [
            {"index": i, "json": f"loadgen-{i}.json", "hdr_prefix": f"loadgen-{i}-hdr"}
            for i in range(2)
        ],
        "middlewares": [{"index": 0, "stats_dir": "middleware-0"}],
    }
    (folder / "point.json").write_text(json.dumps(point, indent=2) + "\n")


def write_aggregated(path: Path) -> None:
    doc = memtier_doc({1: (10, 1.5), 2: (10, 1.5)}, 3.0, 0.0, {"p50.00": 1.5, "p99.00": 1.5})
    doc["AGGREGATED AVERAGE RESULTS (3 runs)"] = doc.pop("ALL STATS")
    text = json.dumps(doc, indent=2).replace('"Max Latency": 3.0', '"Max Latency": -nan')
    path.write_text(text + "\n")


if __name__ == "__main__":
    write_run(HERE / "run-two-instances")
    write_aggregated(HERE / "memtier-aggregated.json")
