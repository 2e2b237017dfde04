"""Server reuse policy of the local runner (real memcached; preload off, so no jar is needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachelab.local.runner import LocalRunner
from cachelab.local.tools import Toolchain
from cachelab.results import ResultsDir
from cachelab.spec import Spec, parse_spec

pytestmark = pytest.mark.integration


def make_runner(tmp_path: Path, spec: Spec) -> LocalRunner:
    tools = Toolchain(tmp_path, "java", tmp_path / "middleware.jar", tmp_path / "loadgen.jar")
    results = ResultsDir.create(tmp_path / "results", spec.name)
    return LocalRunner(spec, tmp_path / "spec.yaml", results, tools)


def spec(**run: object) -> Spec:
    return parse_spec(
        {
            "name": "reuse",
            "topology": {"servers": 2},
            "preload": {"enabled": False},
            "sweep": {"workload.ratio": ["0:1", "1:1", "0:2"]},
            "run": {"duration_s": 2, **run},
        }
    )


def test_read_only_runs_share_servers_and_a_write_forces_fresh_ones(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, spec())
    points = runner.spec.points()
    try:
        first = runner._servers_for(points[0].spec, runner.results.run_dir(0, 0))
        again = runner._servers_for(points[0].spec, runner.results.run_dir(0, 1))
        assert again is first
        writing = runner._servers_for(points[1].spec, runner.results.run_dir(1, 0))
        assert writing is first  # same configuration, nothing written yet
        writing.dirty = True  # what run_one records after a run with SETs
        fresh = runner._servers_for(points[2].spec, runner.results.run_dir(2, 0))
        assert fresh is not first
        assert fresh.started_in == "p2-r0"
        assert not any(s.proc.running() for s in first.servers)
    finally:
        if runner.group:
            runner.group.procs.stop_all()


def test_restart_servers_starts_fresh_ones_for_every_run(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, spec(restart_servers=True))
    point = runner.spec.points()[0]
    try:
        first = runner._servers_for(point.spec, runner.results.run_dir(0, 0))
        second = runner._servers_for(point.spec, runner.results.run_dir(0, 1))
        assert second is not first
        assert {s.port for s in first.servers}.isdisjoint(s.port for s in second.servers)
    finally:
        if runner.group:
            runner.group.procs.stop_all()
