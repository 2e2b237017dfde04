"""`make bench`'s added-latency part run with tiny settings against real processes (memcached,
twemproxy, the middleware in each mode, the loadgen in open loop): the table's shape, no timing.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cachelab.paths import repo_root

pytestmark = pytest.mark.integration

ROOT = repo_root()
TINY = {
    "BENCH_PARTS": "added-latency",
    "BENCH_ROUNDS": "1",
    "BENCH_KEYS": "1000",
    "BENCH_WARMUP_SECONDS": "0",
    "BENCH_LATENCY_SECONDS": "1",
    "BENCH_LATENCY_SATURATION_SECONDS": "1",
    "BENCH_LATENCY_RAMP_SECONDS": "0",
}


def test_the_part_prints_and_saves_every_mode_at_every_level(
    bench: ModuleType, tmp_path: Path
) -> None:
    knobs = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env = {**knobs, **TINY, "BENCH_RESULTS": str(tmp_path)}
    ran = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    (out_dir,) = tmp_path.iterdir()
    part = json.loads((out_dir / "bench.json").read_text())["added_latency"]
    modes = [v.name() for v in bench.config.LATENCY_VARIANTS]
    assert modes == ["cachelab-t8-b1", "cachelab-t8-b1-e2", "cachelab-t1-b16-e2"]
    assert set(part["saturation_ops_per_s"]) == {"direct", "twemproxy", *modes}
    assert all(ops > 0 for ops in part["saturation_ops_per_s"].values())

    rows = {(r["level_percent"], r["mode"], r["target"]): r for r in part["rows"]}
    expected = {
        (level, mode, target)
        for level in (10, 50, 70)
        for mode in modes
        for target in ("direct", "twemproxy", mode)
    }
    assert set(rows) == expected
    for (level, mode, target), row in rows.items():
        assert row["rounds"] == 1, (level, mode, target, row)
        assert row["rate_ops_per_s"] == pytest.approx(
            part["saturation_ops_per_s"][mode] * level / 100
        )
        latency = row["latency"]
        for key in ("p50_us", "p99_us", "p999_us"):
            assert math.isfinite(latency[key]) and latency[key] > 0, (level, mode, target)
        assert latency["p50_us"] <= latency["p99_us"] <= latency["p999_us"]
        assert row["completed_share"] > 0
        if target == "direct":
            assert row["added"] is None
        elif row["added"] is not None:  # None when a round fell behind its offered rate
            assert all(math.isfinite(v) for v in row["added"].values())

    event_loop_modes = {v.name() for v in bench.config.LATENCY_VARIANTS if v.loops > 0}
    assert {c["mode"] for c in part["checks"]} == event_loop_modes
    assert len(part["checks"]) == 4 * len(event_loop_modes)

    saved = (out_dir / "added-latency.md").read_text()
    assert saved == part["table"]
    for level in (10, 50, 70):
        assert f"At {level} % of each mode's saturation" in saved
    table_lines = [line for line in saved.splitlines() if line.startswith("| cachelab-")]
    assert len(table_lines) == len(expected)
    check_lines = [line for line in saved.splitlines() if " at 70 % (" in line]
    assert len(check_lines) == len(part["checks"])
    assert all(line.endswith(("met", "missed")) or "not measured" in line for line in check_lines)
    assert "added latency: loadgen" in (out_dir / "bench.txt").read_text()
