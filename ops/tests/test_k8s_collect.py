"""Unit tests of the k8s runner's log parsing and middleware metrics (no cluster needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachelab.k8s import plan
from cachelab.k8s.collect import CollectError, log_without_blocks, result_blocks
from cachelab.k8s.jobs import emitted_status
from cachelab.k8s.metrics import parse_metrics, summary_from_scrapes

BEGIN = "=== cachelab-result-begin job=benchmark machine=1 instance={i} ==="
END = "=== cachelab-result-end job=benchmark machine=1 instance={i} ==="


def test_result_blocks_are_found_between_markers_and_the_rest_is_ignored() -> None:
    log = "\n".join(
        [
            "[benchmark-1] barrier passed: 2 machines up",
            BEGIN.format(i=0),
            '{"ALL STATS": {"Gets": {"Ops/sec": 10.0}}}',
            END.format(i=0),
            "noise",
            BEGIN.format(i=1),
            "{",
            '  "ALL STATS": {}',
            "}",
            END.format(i=1),
        ]
    )
    blocks = result_blocks(log)
    assert [(b.job, b.machine, b.instance) for b in blocks] == [
        ("benchmark", "1", "0"),
        ("benchmark", "1", "1"),
    ]
    assert blocks[0].data()["ALL STATS"]["Gets"]["Ops/sec"] == 10.0
    assert blocks[1].data() == {"ALL STATS": {}}
    kept = log_without_blocks(log)
    assert "barrier passed" in kept and "noise" in kept and "Ops/sec" not in kept
    assert "[result block job=benchmark machine=1 instance=0]" in kept


@pytest.mark.parametrize(
    ("log", "message"),
    [
        (f"{BEGIN.format(i=0)}\n{{}}\n", "unterminated result block"),
        (f"{BEGIN.format(i=0)}\n{{}}\n{END.format(i=1)}\n", "unterminated result block"),
    ],
)
def test_broken_blocks_are_errors_naming_the_marker(log: str, message: str) -> None:
    with pytest.raises(CollectError, match=message):
        result_blocks(log)


@pytest.mark.parametrize(
    ("body", "message"),
    [("{not json", "instance=0: not JSON"), ("[1, 2]", "JSON is not an object")],
)
def test_block_that_is_not_a_json_object_is_an_error(body: str, message: str) -> None:
    (block,) = result_blocks(f"{BEGIN.format(i=0)}\n{body}\n{END.format(i=0)}")
    with pytest.raises(CollectError, match=message):
        block.data()


def test_middleware_summary_from_two_scrapes_gives_means_over_the_interval() -> None:
    before = parse_metrics(
        "# HELP x\n"
        'cachelab_middleware_requests_total{op="get"} 100\n'
        'cachelab_middleware_requests_total{op="set"} 0\n'
        'cachelab_middleware_response_time_seconds_sum{op="get"} 0.2\n'
        'cachelab_middleware_response_time_seconds_count{op="get"} 100\n'
        "cachelab_middleware_queue_length 0\n"
    )
    after = parse_metrics(
        'cachelab_middleware_requests_total{op="get"} 1100\n'
        'cachelab_middleware_requests_total{op="set"} 1000\n'
        'cachelab_middleware_response_time_seconds_sum{op="get"} 2.2\n'
        'cachelab_middleware_response_time_seconds_sum{op="set"} 2.0\n'
        'cachelab_middleware_response_time_seconds_count{op="get"} 1100\n'
        'cachelab_middleware_response_time_seconds_count{op="set"} 1000\n'
        "cachelab_middleware_queue_length 3\n"
        "cachelab_middleware_workers NaN\n"
    )
    summary = summary_from_scrapes(before, after, seconds=10.0)
    all_ops = summary["ops"]["all"]
    assert all_ops["count"] == 2000
    assert all_ops["throughput_ops_per_s"] == 200.0
    # (2.2 - 0.2 + 2.0) s over 2000 requests = 2 ms
    assert all_ops["response_time_us"]["mean"] == pytest.approx(2000.0)
    assert all_ops["queue_time_us"]["mean"] == 0.0  # no samples: 0, not a division by zero
    assert summary["queue_length"]["mean"] == 3


def test_a_log_that_ends_inside_a_block_is_read_again_until_it_is_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A finished pod's log may lack its last lines for a moment on a busy node: the runner
    reads it again, and fails naming the block only when it stays cut."""
    from cachelab.k8s import jobs as jobs_module

    begin = "=== cachelab-result-begin job=benchmark machine=0 instance=hdr-1 ==="
    end = "=== cachelab-result-end job=benchmark machine=0 instance=hdr-1 ==="
    whole = f"{begin}\n#[histogram]\n{end}\n"

    class Logs:
        def __init__(self, texts: list[str]) -> None:
            self.texts, self.reads = texts, 0

        def logs(self, pod: str, container: str) -> str:
            self.reads += 1
            return self.texts[min(self.reads, len(self.texts)) - 1]

    monkeypatch.setattr(jobs_module.time, "sleep", lambda _s: None)
    reader = jobs_module.Jobs(Logs([f"{begin}\n#[hist", whole]), plan.Target(), Path())  # type: ignore[arg-type]
    log, blocks = reader.logs_with_blocks("benchmark-0", "loadgen")
    assert log == whole and [b.instance for b in blocks] == ["hdr-1"]
    assert reader.kube.reads == 2  # type: ignore[attr-defined]

    reader.kube = Logs([f"{begin}\n#[hist"])  # type: ignore[assignment]
    with pytest.raises(CollectError, match="has no end marker"):
        reader.logs_with_blocks("benchmark-0", "loadgen")
    assert reader.kube.reads == jobs_module.LOG_READS  # type: ignore[attr-defined]


def test_a_benchmark_pod_says_when_its_results_are_all_in_its_log() -> None:
    """run-benchmark.sh's line after its last block, before the log drain: the runner may take
    the results then; a log without it, or with a failed status, is not done."""
    tail = "=== cachelab-result-end job=benchmark machine=1 instance=0 ===\n"
    assert emitted_status(tail + "[benchmark-1] results emitted: status 0\n") == 0
    assert emitted_status(tail + "[benchmark-1] results emitted: status 3\n") == 3
    assert emitted_status(tail) is None
    assert emitted_status("progress ... results emitted: status 0") is None
