"""`cachelab run --resume`: a real local run interrupted in its second run (SIGTERM, as Ctrl-C
would), then finished: only the partial and the missing runs are executed again, the partial
row's measures stay empty, the report built before the resume is rebuilt, the resume hint
repeats the original options and metadata.json records both commands. And `--only` on a real
run: the points it names, said to be a subset in status.json and the report."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.e2e

SPEC = {
    "name": "resume",
    "description": "three short direct-to-memcached points",
    "topology": {"threads": 1, "clients_per_thread": 1, "middlewares": 0, "servers": 1},
    "workload": {"ratio": "0:1", "value_bytes": 64, "key_maximum": 200},
    "sweep": {"topology.clients_per_thread": [1, 2, 3]},
    "run": {"repetitions": 1, "duration_s": 4, "warmup_s": 1, "cooldown_s": 1},
}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cachelab.cli", "run", *args]


def _status(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "status.json").read_text())
    return data


def _started(folder: Path, run: str) -> float:
    return float(json.loads((folder / "raw" / run / "point.json").read_text())["started_epoch_ms"])


def test_an_interrupted_run_is_finished_by_resume(tmp_path: Path) -> None:
    spec = tmp_path / "resume.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    base = tmp_path / "results"
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(
        _cli(str(spec), "--results", str(base), "--report"), stdout=log, stderr=subprocess.STDOUT
    )
    try:
        # wait (bounded) until run 1 is done and run 2 is measuring, then stop it as Ctrl-C does
        deadline = time.monotonic() + 240
        folder: Path | None = None
        while time.monotonic() < deadline and first.poll() is None:
            found = list((base / "resume").glob("*/raw/p1-r0/loadgen-0.log"))
            if found and (found[0].parent / "loadgen-0.log").stat().st_size > 0:
                folder = found[0].parents[2]
                break
            time.sleep(0.2)
        assert folder is not None, (tmp_path / "first.log").read_text()
        time.sleep(1.0)
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 130, (tmp_path / "first.log").read_text()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        log.close()
    status = _status(folder)
    assert status["state"] == "interrupted"
    assert status["runs_done"] == 1 and status["runs_partial"] == 1, status
    assert f"--resume {folder} --report" in status["message"]
    with (folder / "summary.csv").open() as handle:
        partial = [r for r in csv.DictReader(handle) if r["status"] == "partial"]
    assert partial and partial[0]["throughput_ops_per_s"] == ""  # empty, not 0
    assert partial[0]["response_time_ms"] == ""
    if (folder / "report" / "index.html").is_file():  # the report of the interrupted run
        assert "Incomplete experiment" in (folder / "report" / "index.html").read_text()
    done_at = _started(folder, "p0-r0")

    second = subprocess.run(
        _cli(str(spec), "--resume", str(folder)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert "resume: 1 runs already done, 2 to run" in second.stdout
    # only the partial run and the missing one ran; the finished one was left alone
    assert "[1/2] p1 r0 (clients_per_thread=2)" in second.stdout
    assert "[2/2] p2 r0 (clients_per_thread=3)" in second.stdout
    assert "p0 r0" not in second.stdout.split("resume:")[1].split("complete:")[0]
    assert _started(folder, "p0-r0") == done_at
    status = _status(folder)
    assert status["state"] == "complete" and status["runs_done"] == 3, status
    with (folder / "summary.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["point"], r["status"]) for r in rows] == [("0", "ok"), ("1", "ok"), ("2", "ok")]
    assert list((base / "resume").iterdir()) == [folder]  # no second results folder
    if (folder / "report" / "index.html").is_file():
        assert "rebuilding it" in second.stdout
        assert "Incomplete experiment" not in (folder / "report" / "index.html").read_text()
    commands = json.loads((folder / "metadata.json").read_text())["commands"]
    assert [("--resume" in c["command_line"]) for c in commands] == [False, True]


ONLY_SPEC = {
    "name": "only",
    "description": "the quickstart's sweep, one short repetition",
    "topology": {"threads": 1, "clients_per_thread": 1, "middlewares": 1, "servers": 1},
    "workload": {"ratio": "0:1", "value_bytes": 64, "key_maximum": 200},
    "sweep": {"topology.clients_per_thread": [1, 4, 8, 16], "topology.workers": [8, 32]},
    "run": {"repetitions": 1, "duration_s": 3, "warmup_s": 1, "cooldown_s": 1},
}


def test_only_runs_the_points_it_names_and_says_it_is_a_subset(tmp_path: Path) -> None:
    spec = tmp_path / "only.yaml"
    spec.write_text(yaml.safe_dump(ONLY_SPEC, sort_keys=False))
    only = ["--only", "workers=8", "--only", "clients_per_thread=1,4"]
    done = subprocess.run(
        _cli(str(spec), "--results", str(tmp_path / "results"), "--report", *only),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (folder,) = (tmp_path / "results" / "only").iterdir()
    assert sorted(p.name for p in (folder / "raw").iterdir()) == ["p0-r0", "p2-r0"]
    for run, clients in (("p0-r0", 1), ("p2-r0", 4)):
        values = json.loads((folder / "raw" / run / "point.json").read_text())["values"]
        assert values == {"topology.clients_per_thread": clients, "topology.workers": 8}
    status = _status(folder)
    assert (status["subset"], status["points_selected"], status["points_total"]) == (True, 2, 8)
    assert status["only"] == ["workers=8", "clients_per_thread=1,4"]
    html = (folder / "report" / "index.html").read_text()
    assert "Subset run:" in html and "2 of 8 points" in html
