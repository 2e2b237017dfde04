"""The pure parts of scripts/bench (`make bench`): median round, CPU budget, parsers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from cachelab.paths import repo_root

ROOT = repo_root()


def _row(bench: ModuleType, name: str, ops: float, proxy_us: float | None = None) -> Any:
    run = bench.measure.ClientRun(ops, int(ops * 10), 0.5, 1.0, ops * 10 * 8e-6)
    return bench.proxies.Row(name, run, proxy_us, 6.0)


def test_median_row_is_the_middle_round_with_its_own_cpu(bench: ModuleType) -> None:
    rows = [_row(bench, "t", 50_000, 12.0), _row(bench, "t", 70_000, 10.0)]
    rows.append(_row(bench, "t", 60_000, 11.0))
    median = bench.proxies.median_row(rows)
    assert (median.run.ops_per_s, median.proxy_cpu_us) == (60_000, 11.0)
    skipped = bench.proxies.Row("t", None, None, 0.0, "skipped: not built")
    assert bench.proxies.median_row([skipped]) is skipped
    assert bench.proxies.median_row([skipped, rows[0]]) is rows[0]


def test_cpu_budget_leaves_the_proxy_what_client_and_server_do_not_use(
    bench: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench.proxies.os, "cpu_count", lambda: 2)
    rows = [_row(bench, "direct", 125_000), _row(bench, "twemproxy", 60_000, 11.0)]
    bench.proxies.print_budget(rows)
    out = capsys.readouterr().out
    # 0.8 x 125,000 = 100,000 ops/s; 2 CPUs -> 20 us per request; client 8 + server 6 -> 6 left
    assert "100000 ops/s" in out
    assert "20.00 us of CPU per request" in out
    assert "at least 14.00 us/req" in out
    assert "at most 6.00 us/req" in out


def test_default_middleware_variants_are_the_asl_worker_batches_then_event_loops(
    bench: ModuleType,
) -> None:
    names = [v.name() for v in bench.config.MIDDLEWARE_VARIANTS]
    if "BENCH_MIDDLEWARE" not in bench.proxies.os.environ:
        assert names == [
            "cachelab-t8-b1",
            "cachelab-t8-b16",
            "cachelab-t2-b16",
            "cachelab-t1-b16-e2",
        ]
    caslap_names = [v.name() for v in bench.config.MEMCASLAP_VARIANTS]
    if "BENCH_MEMCASLAP_MIDDLEWARE" not in bench.proxies.os.environ:
        assert caslap_names == ["cachelab-t2-b16", "cachelab-t1-b16-e2"]
    event_loops = bench.variants.Variant(1, 16, 2)
    assert event_loops.name() == bench.summary.EVENT_LOOPS


def test_variants_parse_with_and_without_event_loops_and_name_their_targets(
    bench: ModuleType,
) -> None:
    variants = bench.variants.parse_variants("BENCH_MIDDLEWARE", "8:1, 1:16:2,2:16:0")
    assert [(v.workers, v.batch, v.loops) for v in variants] == [(8, 1, 0), (1, 16, 2), (2, 16, 0)]
    assert [v.name() for v in variants] == [
        "cachelab-t8-b1",
        "cachelab-t1-b16-e2",
        "cachelab-t2-b16",
    ]
    assert [v.name("base") for v in variants] == ["base-t8-b1", "base-t1-b16-e2", "base-t2-b16"]
    for v in variants:  # every name parses back to its variant
        assert bench.variants.variant_of(v.name()) == v
        assert bench.variants.variant_of(v.name("base")) == v
    with pytest.raises(ValueError, match="not a middleware target name: 'twemproxy'"):
        bench.variants.variant_of("twemproxy")


@pytest.mark.parametrize("text", ["2", "2:x", "1:16:-1", "1:16:2:3", "0:16", "8:1,", "2:16:²"])
def test_a_malformed_variant_is_one_error_naming_the_knob_and_the_form(
    bench: ModuleType, text: str
) -> None:
    with pytest.raises(bench.variants.VariantError) as raised:
        bench.variants.parse_variants("BENCH_MEMCASLAP_MIDDLEWARE", text)
    message = str(raised.value)
    assert message.startswith(f"BENCH_MEMCASLAP_MIDDLEWARE={text!r}: bad variant ")
    assert "expected comma-separated workers:batch or workers:batch:loops" in message
    assert "\n" not in message


def test_the_bench_stops_at_a_malformed_variant_with_one_error_line(
    bench: ModuleType, tmp_path: Path
) -> None:
    env = {**os.environ, "BENCH_MIDDLEWARE": "1:16:-1", "BENCH_RESULTS": str(tmp_path)}
    ran = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 2
    assert ran.stdout == ""
    assert ran.stderr.splitlines() == [
        "error: BENCH_MIDDLEWARE='1:16:-1': bad variant '1:16:-1'; expected "
        + bench.variants.VARIANT_FORM
    ]
    assert list(tmp_path.iterdir()) == []  # nothing run, nothing saved


def test_middleware_command_adds_event_loops_only_to_a_variant_with_loops(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench.servers, "java", lambda: "java")
    variant = bench.variants.Variant
    loops = bench.servers.middleware_command(Path("m.jar"), 7000, variant(1, 16, 2), 11211)
    assert loops[loops.index("-t") : loops.index("-t") + 6] == [
        "-t", "1", "--worker-batch", "16", "--event-loops", "2",
    ]  # fmt: skip
    assert loops[-2:] == ["-m", "127.0.0.1:11211"]
    plain = bench.servers.middleware_command(
        Path("m.jar"), 7000, variant(2, 16), 6379, "--protocol", "redis"
    )
    assert "--event-loops" not in plain
    assert plain[plain.index("-t") :] == [
        "-t", "2", "--worker-batch", "16", "--protocol", "redis", "-m", "127.0.0.1:6379",
    ]  # fmt: skip


def test_memcaslap_part_starts_the_variant_its_target_names(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[list[str]] = []

    class FakeProcess:
        pid = 4242

        def __init__(self, name: str, cmd: list[str], log: Path) -> None:
            started.append(cmd)

        def wait_for_port(self, host: str, port: int, timeout_s: float) -> None:
            pass

        def stop(self, grace_s: float) -> None:
            pass

    caslap = bench.memcaslap_loads
    monkeypatch.setattr(bench.servers, "java", lambda: "java")
    monkeypatch.setattr(caslap, "ManagedProcess", FakeProcess)
    monkeypatch.setattr(caslap, "measure_loads", lambda target, *args: [target])
    for target in ("cachelab-t1-b16-e2", "cachelab-t2-b16"):
        assert caslap.target_runs(target, 11211, 1, tmp_path, []) == [target]
    assert started[0][started[0].index("-t") :][:6] == [
        "-t", "1", "--worker-batch", "16", "--event-loops", "2",
    ]  # fmt: skip
    assert "--event-loops" not in started[1]
    assert started[1][started[1].index("-t") :][:4] == ["-t", "2", "--worker-batch", "16"]


def test_redis_benchmark_csv_gives_rate_and_median_latency_per_test(bench: ModuleType) -> None:
    text = (
        '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",'
        '"p99_latency_ms","max_latency_ms"\n'
        '"SET","38022.81","0.310","0.100","0.295","0.500","0.700","2.000"\n'
        '"GET","47393.37","0.280","0.090","0.271","0.450","0.650","1.900"\n'
    )
    assert bench.redis_proxies.parse_redis_benchmark_csv(text) == {
        "SET": (38022.81, 0.295),
        "GET": (47393.37, 0.271),
    }
    assert bench.redis_proxies.parse_redis_benchmark_csv("garbage\n") == {}


def test_median_redis_row_is_the_middle_get_round_and_skips_failures(bench: ModuleType) -> None:
    rows = [
        bench.redis_proxies.RedisRow("t", ops, ops / 2, 0.3, 0.3, 9.0) for ops in (30e3, 10e3, 20e3)
    ]
    assert bench.redis_proxies.median_redis_row(rows).get_ops == 20e3
    failed = bench.redis_proxies.RedisRow("t", 0, 0, 0, 0, None, "skipped: not built")
    assert bench.redis_proxies.median_redis_row([failed]) is failed
    assert bench.redis_proxies.median_redis_row([failed, rows[1]]) is rows[1]


def test_perf_stat_csv_gives_counts_and_leaves_out_uncounted_events(bench: ModuleType) -> None:
    text = (
        "# started on Mon Nov 23 18:41:09 2026\n\n"
        "123456,,raw_syscalls:sys_enter,5000000,100.00,,\n"
        "<not counted>,,context-switches,0,100.00,,\n"
    )
    assert bench.measure.parse_perf_csv(text) == {"raw_syscalls:sys_enter": 123456.0}


def test_asl_floor_is_measured_by_default_from_its_c_source(bench: ModuleType) -> None:
    if "BENCH_FLOOR" not in bench.proxies.os.environ:
        assert bench.config.FLOOR
    assert bench.config.FLOOR_SOURCE.exists()
    assert bench.config.FLOOR_BINARY.is_relative_to(ROOT / "target")  # git-ignored build output


def test_per_request_table_gives_cpu_against_twemproxy_and_the_floor(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [_row(bench, "direct", 80_000), _row(bench, "twemproxy", 40_000, 16.0)]
    floor = _row(bench, "asl-floor-t8", 30_000, 32.0)
    floor.reads_per_request, floor.writes_per_request, floor.user_share = 2.0, 2.0, 0.05
    rows += [floor, _row(bench, "cachelab-t8-b1", 30_000, 40.0)]
    bench.proxies.print_per_request(rows)
    lines = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line}
    assert lines["asl-floor-t8"][1:7] == ["32.00", "x2.00", "x1.00", "5.00", "2.00", "2.00"]
    assert lines["cachelab-t8-b1"][1:4] == ["40.00", "x2.50", "x1.25"]
    assert "direct" not in lines  # not a proxy


def test_redis_part_measures_the_baseline_jar_right_after_each_variant(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, Path]] = []

    def fake_middleware(
        redis_port: int,
        work: Path,
        variant: Any,
        jar: Path = bench.config.MIDDLEWARE_JAR,
        label: str = "cachelab",
        load: Any = None,
    ) -> Any:
        calls.append((variant.name(label), jar))
        return bench.redis_proxies.RedisRow(variant.name(label), 1.0, 1.0, 0.1, 0.1, 5.0)

    def fake_row(name: str, *args: Any) -> Any:
        calls.append((name, Path()))
        return bench.redis_proxies.RedisRow(name, 1.0, 1.0, 0.1, 0.1, None)

    def fake_nutcracker(redis_port: int, work: Path, load: Any) -> Any:
        return fake_row("twemproxy")

    before = Path("/tmp/before.jar")
    variants = [bench.variants.Variant(2, 16), bench.variants.Variant(1, 16, 2)]
    monkeypatch.setattr(bench.measure, "MIDDLEWARE_VARIANTS", variants)
    monkeypatch.setattr(bench.measure, "BASELINE_JAR", before)
    monkeypatch.setattr(bench.measure, "PROXY_ROUNDS", 2)
    monkeypatch.setattr(bench.redis_proxies, "redis_row", fake_row)
    monkeypatch.setattr(bench.redis_proxies, "nutcracker_redis_row", fake_nutcracker)
    monkeypatch.setattr(bench.redis_proxies, "middleware_redis_row", fake_middleware)
    runs = bench.measure.run_rounds(
        bench.redis_proxies.redis_targets(6379, Path("/tmp")), lambda row: row.name
    )
    one_round = [
        ("direct", Path()),
        ("twemproxy", Path()),
        ("cachelab-t2-b16", bench.config.MIDDLEWARE_JAR),
        ("base-t2-b16", before),
        ("cachelab-t1-b16-e2", bench.config.MIDDLEWARE_JAR),
        ("base-t1-b16-e2", before),
    ]
    assert calls == one_round + one_round[::-1]  # the second round in reversed order
    assert list(runs) == [name for name, _ in one_round]
    assert all(len(rounds) == 2 for rounds in runs.values())
    assert "round 2/2: direct: direct" in capsys.readouterr().out


def test_redis_rounds_are_listed_with_their_spread(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    rounds = [
        bench.redis_proxies.RedisRow("t", ops, ops + 1, 0.3, 0.3, 9.0) for ops in (30e3, 40e3, 36e3)
    ]
    failed = bench.redis_proxies.RedisRow("x", 0, 0, 0, 0, None, "skipped: not built")
    bench.redis_proxies.print_redis_rounds({"t": rounds, "x": [failed]})
    out = capsys.readouterr().out
    assert "30000 / 30001, 40000 / 40001, 36000 / 36001  (spread x1.33)" in out
    assert " x " not in out  # a target without measured rounds has no line


def test_middleware_rounds_are_compared_with_twemproxys_round_of_the_same_number(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    def rows(name: str, gets: list[float]) -> list[Any]:
        return [bench.redis_proxies.RedisRow(name, g, g / 2, 0.3, 0.3, 9.0) for g in gets]

    bench.redis_proxies.print_redis_rounds(
        {
            "direct": rows("direct", [100e3, 100e3, 100e3]),
            "twemproxy": rows("twemproxy", [50e3, 80e3, 100e3]),
            "cachelab-t1-b16-e2": rows("cachelab-t1-b16-e2", [60e3, 80e3, 90e3]),
        }
    )
    out = capsys.readouterr().out
    # per round 1.20, 1.00, 0.90: median 1.00 (the medians' ratio would be 80/80 as well, but a
    # slow first twemproxy round no longer counts twice)
    assert "cachelab-t1-b16-e2 vs twemproxy per round (GET / SET): 1.20 / 1.20, 1.00 / 1.00," in out
    assert "medians x1.00 / x1.00" in out
    assert "direct             vs twemproxy" not in out


def test_redis_info_fields_skip_section_headers(bench: ModuleType) -> None:
    text = "# Stats\r\ntotal_commands_processed:10003\r\ntotal_reads_processed:10055\r\n\r\n"
    assert bench.redis_proxies.parse_redis_info(text) == {
        "total_commands_processed": "10003",
        "total_reads_processed": "10055",
    }


def test_redis_table_gives_switches_cpu_wait_and_what_redis_and_the_client_spend(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    direct = bench.redis_proxies.RedisRow(
        "direct", 100e3, 100e3, 0.2, 0.2, None, requests_per_redis_read=1.0
    )
    direct.redis_cpu_us, direct.client_cpu_us = 6.0, 8.0
    nut = bench.redis_proxies.RedisRow(
        "twemproxy", 80e3, 80e3, 0.4, 0.4, 9.0, "", 0.07, 1.5, 14.2, 3.0, 9.5
    )
    mw = bench.redis_proxies.RedisRow(
        "cachelab-t2-b16", 72e3, 88e3, 0.5, 0.5, 9.9, "", 0.39, 19.2, 10.1, 3.5
    )
    bench.redis_proxies.print_redis_rows([direct, nut, mw])
    lines = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()}
    assert lines["cachelab-t2-b16"][-8:] == [
        "x0.90", "x1.10", "x1.10", "0.39", "19.20", "10.10", "3.50", "-",
    ]  # fmt: skip
    assert lines["direct"][-5:] == ["-", "-", "1.00", "6.00", "8.00"]


def _rounds(bench: ModuleType, name: str, gets: list[float], sets: list[float]) -> list[Any]:
    return [
        bench.redis_proxies.RedisRow(name, g, s, 0.3, 0.3, 9.0)
        for g, s in zip(gets, sets, strict=True)
    ]


def test_targets_are_medians_of_per_round_ratios_and_not_met_on_a_loaded_machine(
    bench: ModuleType,
) -> None:
    runs = {
        "-d 3 -P 16": {
            "twemproxy": _rounds(bench, "twemproxy", [100e3, 100e3, 100e3], [90e3, 90e3, 90e3]),
            "cachelab-t1-b16-e2": _rounds(
                bench, "cachelab-t1-b16-e2", [90e3, 120e3, 110e3], [80e3, 85e3, 99e3]
            ),
            "cachelab-t2-b16": _rounds(
                bench, "cachelab-t2-b16", [80e3, 90e3, 100e3], [90e3, 90e3, 90e3]
            ),
        }
    }
    targets = bench.summary.redis_targets(runs)
    assert [(t.name, round(t.measured, 2), t.bound) for t in targets] == [
        ("cachelab-t1-b16-e2 GET vs twemproxy, -d 3 -P 16", 1.10, 1.0),
        ("cachelab-t1-b16-e2 SET vs twemproxy, -d 3 -P 16", 0.94, 1.0),
        ("cachelab-t2-b16 GET vs twemproxy, -d 3 -P 16", 0.90, float("inf")),
        ("cachelab-t2-b16 SET vs twemproxy, -d 3 -P 16", 1.0, float("inf")),
    ]
    quiet = bench.summary.targets_table(targets, [0.4, 0.9], 2)
    assert "| 1.10x | >= 1.00x | met (rounds 0.90, 1.20, 1.10) |" in quiet
    assert "| 0.94x | >= 1.00x | missed (rounds 0.89, 0.94, 1.10) |" in quiet
    assert (
        "| cachelab-t2-b16 GET vs twemproxy, -d 3 -P 16 | 0.90x | - |"
        " information: without event loops; rounds 0.80, 0.90, 1.00 |"
    ) in quiet
    own_load = bench.summary.targets_table(targets, [0.4, 5.0], 2)  # the run's own processes
    assert "| 1.10x | >= 1.00x | met (rounds 0.90, 1.20, 1.10) |" in own_load
    loaded = bench.summary.targets_table(targets, [5.0, 0.4], 2)
    assert "met on a loaded machine: not shown" in loaded


def test_memcached_targets_compare_the_default_worker_with_the_c_floor(
    bench: ModuleType,
) -> None:
    rows = [
        _row(bench, "twemproxy", 50_000, 10.0),
        _row(bench, "asl-floor-t8", 40_000, 20.0),
        _row(bench, "cachelab-t8-b1", 40_000, 22.0),
        _row(bench, "cachelab-t2-b16", 45_000, 12.0),
        _row(bench, "cachelab-t1-b16-e2", 70_000, 8.0),
    ]
    targets = {t.name: t for t in bench.summary.memcached_targets(rows)}
    assert targets["cachelab-t8-b1 CPU/req vs asl-floor-t8"].measured == 1.1
    assert targets["cachelab-t8-b1 CPU/req vs asl-floor-t8"].met() is False
    assert targets["cachelab-t1-b16-e2 ops/s vs twemproxy"].measured == 1.4
    assert targets["cachelab-t1-b16-e2 ops/s vs twemproxy"].bound == 1.30
    assert targets["cachelab-t1-b16-e2 CPU/req vs twemproxy"].met() is True
    batched = targets["cachelab-t2-b16 ops/s vs twemproxy"]  # shown, for information only
    assert (batched.measured, batched.bound) == (0.9, float("inf"))
    assert batched.detail == "information: without event loops"
    assert targets["twemproxy CPU/req vs memcached's own"].measured == 10.0 / 6.0
    without = {t.name: t for t in bench.summary.memcached_targets(rows[:4])}
    assert without["cachelab-t1-b16-e2 ops/s vs twemproxy"].met() is None  # not measured


def test_the_run_rewrites_only_the_marked_section_of_the_performance_doc(
    bench: ModuleType, tmp_path: Path
) -> None:
    doc = tmp_path / "performance.md"
    summary = bench.summary
    doc.write_text(f"# Performance\n\n{summary.BEGIN}old figures\n{summary.END}\n\n## Why\n")
    text = summary.section(
        "20261126T020000Z",
        "| target |\n",
        "machine: 2 CPUs\n  round 1/3: direct: 5 ops/s\nload average 0.5 at the end\n",
        [0.4, 0.5],
    )
    summary.rewrite_section(doc, text)
    content = doc.read_text()
    assert content.startswith("# Performance\n\n<!-- bench:begin")
    assert content.endswith("<!-- bench:end -->\n\n## Why\n")
    assert "old figures" not in content and "round 1/3" not in content
    assert "Run `20261126T020000Z` (UTC), commit `" in content
    assert "load average 0.40 at the start, 0.50 at the end" in content
    with pytest.raises(ValueError, match="no <!-- bench:begin"):
        summary.rewrite_section(_without_markers(tmp_path), "x")


def _without_markers(tmp_path: Path) -> Path:
    doc = tmp_path / "plain.md"
    doc.write_text("# Performance\n")
    return doc


def test_memcaslap_loads_are_connections_get_share_and_value_size(bench: ModuleType) -> None:
    loads = bench.memcaslap_loads.parse_loads("32:90:1024,256:100:16384")
    assert [load.label for load in loads] == [
        "memcaslap -c 32, 90:10, 1 KiB",
        "memcaslap -c 256, read-only, 16 KiB",
    ]
    if "BENCH_MEMCASLAP_LOADS" not in bench.config.os.environ:
        default = bench.memcaslap_loads.parse_loads(bench.config.MEMCASLAP_LOADS)
        assert {(x.connections, x.get_percent, x.value_bytes) for x in default} == {
            (c, g, v) for c in (32, 256) for g in (90, 100) for v in (1024, 16384)
        }


def _caslap(bench: ModuleType, target: str, ops: list[float], cpu: list[float]) -> list[Any]:
    return [
        bench.memcaslap_loads.CaslapRun(target, "load", o, int(o * 8), c, 5.0)
        for o, c in zip(ops, cpu, strict=True)
    ]


def test_memcaslap_targets_are_per_round_ratios_and_cpu_against_twemproxy_and_memcached(
    bench: ModuleType,
) -> None:
    runs = {
        "load": {
            "twemproxy": _caslap(bench, "twemproxy", [100e3, 80e3, 90e3], [10.0, 12.0, 11.0]),
            "cachelab-t1-b16-e2": _caslap(
                bench, "cachelab-t1-b16-e2", [140e3, 100e3, 90e3], [8.0, 9.0, 10.0]
            ),
        }
    }
    failed = bench.memcaslap_loads.CaslapRun("twemproxy", "load", 0.0, 0, None, 0.0, "failed")
    runs["load"]["twemproxy"].append(failed)
    targets = {t.name: t for t in bench.summary.caslap_targets(runs)}
    ops = targets["cachelab-t1-b16-e2 ops/s vs twemproxy, load"]
    assert round(ops.measured, 2) == 1.25  # rounds 1.40, 1.25, 1.00
    assert ops.met() is False
    cpu = targets["cachelab-t1-b16-e2 CPU/req vs twemproxy, load"]
    assert round(cpu.measured, 3) == round(9.0 / 11.0, 3)
    assert cpu.met() is True
    assert not any(name.startswith("cachelab-t2-b16") for name in targets)  # not run, not shown
    own = targets["cachelab-t1-b16-e2 CPU/req vs memcached's own, load"]
    assert own.measured == 9.0 / 5.0  # the median round (100,000 ops/s) against memcached's 5 us


def _point(
    bench: ModuleType, target: str, p50_us: float, round_index: int = 0, share: float = 1.0
) -> Any:
    latency = bench.added_latency
    rate = 10_000.0
    completed = rate * latency.ramped_share() * share
    tail = latency.Tail(p50_us, p50_us * 4, p50_us * 8)
    return latency.Point(70, "cachelab-t1-b16-e2", target, rate, round_index, tail, completed)


def test_added_latency_is_the_median_per_round_difference_to_direct(bench: ModuleType) -> None:
    mode = "cachelab-t1-b16-e2"
    points = [
        _point(bench, "direct", 100, 0),
        _point(bench, "twemproxy", 150, 0),
        _point(bench, mode, 130, 0),
        _point(bench, "direct", 200, 1),
        _point(bench, "twemproxy", 300, 1),
        _point(bench, mode, 240, 1),
        _point(bench, "direct", 120, 2),
        _point(bench, "twemproxy", 170, 2),
        _point(bench, mode, 900, 2, share=0.5),  # fell behind: a backlog, left out
    ]
    rows = {r.target: r for r in bench.added_latency.table_rows(points)}
    assert rows["direct"].added is None
    assert rows["direct"].latency.p50_us == 120  # medians over rounds
    # twemproxy adds 50, 100, 50 -> 50; the mode 30, 40 (round 3 fell behind) -> 35
    assert rows["twemproxy"].added.p50_us == 50
    assert rows[mode].added.p50_us == 35
    assert rows[mode].added.p99_us == 140
    assert rows[mode].added_vs_twemproxy == pytest.approx((0.7, 0.7, 0.7))
    assert (rows[mode].behind_rounds, rows[mode].rounds) == (1, 3)
    table = bench.added_latency.level_table(list(rows.values()), 70)
    assert f"| {mode} | {mode} | 10000 | 1.00 (behind in 1/3) | 240 |" in table


def test_event_loop_targets_compare_added_latency_with_the_bounds_and_twemproxy(
    bench: ModuleType,
) -> None:
    mode = "cachelab-t1-b16-e2"
    points = [
        _point(bench, "direct", 100),
        _point(bench, "twemproxy", 140),  # adds 40 at p50, 160 at p99
        _point(bench, mode, 160),  # adds 60 at p50, 240 at p99
    ]
    rows = bench.added_latency.table_rows(points)
    variants = [bench.variants.Variant(8, 1), bench.variants.Variant(1, 16, 2)]
    checks = bench.added_latency.checks(rows, variants)
    assert [(c.what, c.measured_us, c.bound_us, c.met()) for c in checks] == [
        ("p50", 60, 100, True),
        ("p99", 240, 500, True),
        ("p50", 60, 40, False),
        ("p99", 240, 160, False),
    ]
    text = bench.added_latency.checks_text(checks, [0.5, 0.6], 2)
    assert "added p50 60 µs, at most 100 µs: met" in text
    assert "added p99 240 µs, at most twemproxy's 160 µs: missed" in text
    assert "not a result" not in text
    assert "(a loaded machine: not a result)" in bench.added_latency.checks_text(checks, [9.0], 2)
    behind = [*points[:2], _point(bench, mode, 160, share=0.5)]
    unmeasured = bench.added_latency.checks(bench.added_latency.table_rows(behind), variants)
    assert all(c.met() is None for c in unmeasured)
    assert (
        unmeasured[0].line().endswith(f"not measured ({mode} or direct fell behind in every round)")
    )


def test_open_loop_args_keep_the_closed_loops_workload_and_cap_the_ramp(bench: ModuleType) -> None:
    args = bench.added_latency.open_loop_args(12_345.4, 2, 5.0)
    assert args[: len(bench.measure.MEASURE)] == bench.measure.MEASURE
    assert args[len(bench.measure.MEASURE) :] == [
        "--open-loop-rate=12345",
        "--open-loop-ramp-s=2",
        "--test-time=2",
    ]
    assert "--open-loop-ramp-s" not in " ".join(bench.added_latency.open_loop_args(100, 2, 0))
