"""The live line of `--target k8s` (cachelab.k8s.progress), fed by a recorded benchmark pod log.

tests/data/k8s-benchmark-pod.log is what one benchmark pod printed (stdout and stderr, as
`kubectl logs` shows them): manifests/base/scripts/run-benchmark.sh run for real with the
project's loadgen jar, two instances of 4 s against a memcached on loopback (2026-11-23). The
follower reads it as it grew, one poll per line, as `kubectl logs --tail` would have shown it.

With memtier_benchmark (the default k8s loadgen) the pods' logs are made here of
tests/data/memtier-stderr-<i>.txt (two memtier 2.1 instances' stderr, written from the format in
memtier's source) tagged as run-benchmark.sh tags them (tests/k8s/test_job_scripts.py runs the
script's tagging on the same files).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cachelab.k8s.kube import K8sError
from cachelab.k8s.progress import TAIL_LINES, ProgressFollower, progress_lines
from cachelab.terminal import LiveSample, combine

DATA = Path(__file__).parent / "data"
RECORDED = DATA / "k8s-benchmark-pod.log"


def recorded() -> str:
    return RECORDED.read_text()


def test_progress_lines_of_a_recorded_pod_log_by_instance() -> None:
    found = list(progress_lines(recorded()))
    seconds: dict[tuple[int, int], list[int]] = {}
    for key, sample in found:
        seconds.setdefault(key, []).append(sample.second)
    assert seconds == {(0, 1): [1, 2, 3, 4, 5], (0, 0): [1, 2, 3, 4]}
    key, first = found[0]
    assert key == (0, 1)
    assert first == LiveSample(second=1, ops_per_s=5976, mean_ms=0.346, p99_ms=4.547, errors=0)
    # the result blocks, the HDR logs and the script's own lines are not progress
    assert len(found) == sum(line.startswith("progress ") for line in recorded().splitlines())


def test_untagged_progress_lines_are_not_taken() -> None:
    line = (
        "[RUN #1  25%,   1 secs]  1 threads:        5976 ops,     5976 (avg:     5976) "
        "ops/sec, 0.346 (avg: 0.346) msec latency, 4.547 p99 msec, 0 errors"
    )
    assert list(progress_lines(line)) == []
    ((key, _),) = progress_lines("progress machine=2 instance=3: " + line)
    assert key == (2, 3)
    assert list(progress_lines("progress machine=0 instance=0: [RUN #1 garbage")) == []


def test_following_the_recorded_log_as_it_grew_gives_one_live_line_per_new_second() -> None:
    lines = recorded().splitlines()
    shown: list[LiveSample] = []
    seen = 0

    def read_log(pod: str) -> str:  # kubectl logs --tail of the log so far
        assert pod == "benchmark-0-abcde"
        return "\n".join(lines[max(0, seen - TAIL_LINES) : seen])

    follower = ProgressFollower(read_log, shown.append)
    for count in range(1, len(lines) + 1):
        seen = count
        follower.poll(["benchmark-0-abcde"])
    assert [s.second for s in shown] == [1, 2, 3, 4, 5]
    # instance 1 started about a second before instance 0: its seconds 1 and 2 are alone
    assert [s.ops_per_s for s in shown[:2]] == [5976, 8247]
    # then both instances' latest seconds together (instance 1 at 3 s, instance 0 at 2 s):
    # ops/s summed, the mean weighted by ops/s, the higher p99
    three = shown[2]
    assert three.ops_per_s == 9783 + 9073
    assert three.mean_ms == pytest.approx((0.195 * 9783 + 0.219 * 9073) / (9783 + 9073))
    assert three.p99_ms == 2.371
    assert shown[3].ops_per_s == 27074 + 16603
    last = follower.latest
    assert last[(0, 0)].second == 4 and last[(0, 1)].second == 5
    assert all(s.errors == 0 for s in shown)


def test_a_pod_whose_log_cannot_be_read_leaves_the_line_as_it_was() -> None:
    shown: list[LiveSample] = []
    text = "\n".join(line for line in recorded().splitlines() if "instance=0:" in line)

    def read_log(pod: str) -> str:
        if pod == "pending":
            raise K8sError("container loadgen is waiting to start: ContainerCreating")
        return text

    follower = ProgressFollower(read_log, shown.append, (K8sError,))
    assert follower.poll(["pending"]) is None and shown == []
    sample = follower.poll(["pending", "running"])
    assert sample is not None and sample.second == 4 and shown == [sample]
    assert follower.poll(["running"]) is None  # the same second again: nothing new
    assert len(shown) == 1
    with pytest.raises(ValueError):  # errors other than the named ones are not hidden
        ProgressFollower(lambda pod: (_ for _ in ()).throw(ValueError("bug")), shown.append).poll(
            ["x"]
        )


def memtier_pod_log(machine: int) -> list[str]:
    """A benchmark pod's log with one memtier instance: the script's lines and the instance's
    progress lines, tagged."""
    stderr = (DATA / f"memtier-stderr-{machine}.txt").read_text().splitlines()
    tagged = [
        f"progress machine={machine} instance=0: {line}" for line in stderr if " secs]" in line
    ]
    return [f"[benchmark-{machine}] instance 0 -> testbed-middleware:11211", *tagged]


def test_memtier_pods_give_a_live_line_without_p99_summed_over_pods() -> None:
    logs = {"benchmark-0-x": memtier_pod_log(0), "benchmark-1-y": memtier_pod_log(1)}
    # a tagged line that is not memtier's progress format (cut short) is skipped, no error
    logs["benchmark-1-y"].insert(2, "progress machine=1 instance=0: [RUN #1 50%,   2 secs]  2 thr")
    shown: list[LiveSample] = []
    seen = 0

    def read_log(pod: str) -> str:
        return "\n".join(logs[pod][:seen][-TAIL_LINES:])

    follower = ProgressFollower(read_log, shown.append)
    for count in range(1, max(map(len, logs.values())) + 1):
        seen = count
        follower.poll(logs)
    assert [s.second for s in shown] == [1, 2, 3, 4]
    first = shown[0]
    assert first.ops_per_s == 9645 + 8113
    assert first.mean_ms == pytest.approx((0.83 * 9645 + 0.98 * 8113) / (9645 + 8113))
    assert first.p99_ms is None and first.errors is None
    assert first.text().endswith("p99 \u2013  \u2013 errors")
    # the end of the run: each pod's last line (all threads stopped, the last second's rate)
    assert follower.latest[(0, 0)].ops_per_s == 12503 and follower.latest[(1, 0)].second == 4
    # second 4 came first from pod 0 (pod 1's log is a line longer): with pod 1's second 3
    assert shown[-1].ops_per_s == 12503 + 11547
    end = combine(list(follower.latest.values()))
    assert end is not None and end.ops_per_s == 12503 + 11206
