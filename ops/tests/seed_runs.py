"""Results folders shaped like a seed spec's run, for the fidelity tests: one summary.csv row per
point with the columns the fidelity table reads."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cachelab.paths import repo_root
from cachelab.spec import load_spec

EXPERIMENTS = repo_root() / "ops" / "experiments"


def shaped_run(
    tmp_path: Path, spec_name: str, throughput: Callable[[dict[str, Any]], float]
) -> Path:
    """A results folder of `spec_name` whose summary.csv has one row per point: the columns the
    fidelity table and the report read, the throughput from `throughput(row)` and N / X as
    response time (no think time)."""
    folder = tmp_path / spec_name
    folder.mkdir()
    spec_file = EXPERIMENTS / f"{spec_name}.yaml"
    shutil.copy(spec_file, folder / "spec.yaml")
    rows = []
    for point in load_spec(spec_file).points():
        t = point.spec.topology
        row: dict[str, Any] = {
            "point": point.index,
            "repetition": 0,
            **point.values,
            "total_clients": t.total_clients,
            "think_time_ms": 0.0,
            "workers": t.workers,
            "middlewares": t.middlewares,
            "status": "ok",
        }
        row["throughput_ops_per_s"] = throughput(row)
        row["response_time_ms"] = 1000.0 * t.total_clients / row["throughput_ops_per_s"]
        rows.append(row)
    with (folder / "summary.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder


def worker_bound(row: dict[str, Any]) -> float:
    """A worker pool of WT workers holding a request 2 ms each: min(N, WT) / 2 ms."""
    return 500.0 * min(row["total_clients"], row["workers"])
