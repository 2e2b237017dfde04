"""Loads checked before running (cachelab.capacity) and a crashed process as one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachelab.capacity import Limits, check, problems
from cachelab.cli import main
from cachelab.processes import log_cause
from cachelab.spec import load_spec, parse_spec

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
SMALL = Limits(512 * 2**20, 2**30, 20_000, 24 * 2**30)


def _spec(**topology: int) -> object:
    return parse_spec({"name": "t", "topology": topology, "run": {"duration_s": 5}})


def test_128000_clients_do_not_fit_one_loadgen_and_the_line_says_what_fits() -> None:
    spec = _spec(threads=64, clients_per_thread=1000, instances_per_machine=2)
    found = check(spec, SMALL)  # type: ignore[arg-type]
    assert found is not None and "\n" not in found
    assert "128,000 clients are 64,000 connections per loadgen instance" in found
    assert "at most 7,424 per instance fit" in found


def test_the_open_file_limit_counts_too() -> None:
    spec = _spec(threads=8, clients_per_thread=1000)
    tight = Limits(64 * 2**30, 64 * 2**30, 1024, 256 * 2**30)
    assert "of its 1,024 open files: at most 960" in (check(spec, tight) or "")  # type: ignore[arg-type]


def test_middleware_heap_and_machine_memory() -> None:
    spec = _spec(threads=64, clients_per_thread=100, instances_per_machine=16, middlewares=1)
    small_mw = Limits(2**30, 64 * 2**20, 200_000, 256 * 2**30)
    assert "per middleware need about" in (check(spec, small_mw) or "")  # type: ignore[arg-type]
    little_memory = Limits(2**30, 2**30, 200_000, 2**30)
    assert "more than this machine's 1.0 GiB" in (check(spec, little_memory) or "")  # type: ignore[arg-type]


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_spec_fits_a_small_machine(path: Path) -> None:
    assert problems(load_spec(path), SMALL) == []


def test_run_refuses_before_starting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text(
        "name: big\ntopology: {threads: 64, clients_per_thread: 1000, instances_per_machine: 2}\n"
    )
    assert main(["run", str(spec), "--results", str(tmp_path / "r")]) == 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "load does not fit: p0:" in out
    assert not (tmp_path / "r").exists()


def test_an_out_of_memory_log_becomes_one_cause() -> None:
    log = (
        "[RUN #1 10%, 3 secs] ...\n"
        'Exception in thread "loop-1" java.lang.OutOfMemoryError: Java heap space\n'
        "\tat java.base/java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:71)\n"
        "\tat dev.cachelab.loadgen.engine.ClientConnection.<init>(ClientConnection.java:114)\n"
    ) * 30
    assert log_cause(log) == "out of memory (java.lang.OutOfMemoryError: Java heap space)"
    assert log_cause("starting\nbind: address in use\n\tat x.y(Z.java:1)\n") == (
        "bind: address in use"
    )
    assert log_cause("") == ""


def test_this_machines_limits_take_the_heaps_the_local_runner_gives() -> None:
    limits = Limits.of_this_machine()
    assert limits.loadgen_heap_bytes == 512 * 1024 * 1024  # -Xmx512m (cachelab.jvm.LOCAL_HEAP)
    assert limits.middleware_heap_bytes == 1024 * 1024 * 1024  # -Xmx1g
    assert limits.open_files > 0 and limits.memory_bytes > 0
