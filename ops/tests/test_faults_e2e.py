"""End to end: a memcached stopped (SIGSTOP) for 3 s in the middle of a short local run; the
run's faults.json, its summary columns and the report's recovery figure."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e

SPEC = {
    "name": "fault-e2e",
    "description": "one middleware in front of one memcached, which is stopped for 3 s",
    "topology": {
        "client_machines": 1,
        "instances_per_machine": 1,
        "threads": 2,
        "clients_per_thread": 2,
        "middlewares": 1,
        "workers": 2,
        "servers": 1,
    },
    "workload": {"ratio": "0:1", "value_bytes": 256, "key_maximum": 500},
    # the throughput before the fault is the mean of 3 s after a 4 s warm-up (JIT compiled), and
    # 8 s follow the fault's end to find 2 good seconds in a row
    "run": {"repetitions": 1, "duration_s": 18, "warmup_s": 4, "cooldown_s": 1},
    "faults": [{"at_s": 7, "action": "stop", "target": "server-0", "for_s": 3}],
}


def test_a_stopped_memcached_shows_and_heals(tmp_path: Path) -> None:
    spec = tmp_path / "fault-e2e.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "cachelab.cli", "run", str(spec), "--report", "--results", results],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    folder = next((tmp_path / "results" / "fault-e2e").iterdir())
    (event,) = json.loads((folder / "raw" / "p0-r0" / "faults.json").read_text())
    assert event["action"] == "stop" and event["target"] == "server-0"
    assert event["began_s"] == pytest.approx(7, abs=1.0)
    assert event["ended_s"] - event["began_s"] == pytest.approx(3, abs=1.0)

    with (folder / "summary.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["fault"] == "stop server-0"
    # a stopped server stalls or fails every request through it: seen within two seconds
    assert 0 < float(row["fault_detect_s"]) <= 2
    # once it continues the clients are back at speed before the run ends (5 s later)
    assert 0 < float(row["fault_recover_s"]) <= 5

    report = folder / "report"
    assert (report / "faults-p0-r0.png").stat().st_size > 20_000
    html = (report / "index.html").read_text()
    assert '<h2 id="faults">Faults</h2>' in html
    assert "stop server-0" in html
