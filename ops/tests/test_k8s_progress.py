"""The live line of `--target k8s` (cachelab.k8s.progress), fed by a recorded benchmark pod log.

tests/data/k8s-benchmark-pod.log is what one benchmark pod printed (stdout and stderr, as
`kubectl logs` shows them): manifests/base/scripts/run-benchmark.sh run for real with the
project's loadgen jar, two instances of 4 s against a memcached on loopback (2026-11-23). The
follower reads it as it grew, one poll per line, as `kubectl logs --tail` would have shown it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cachelab.k8s.kube import K8sError
from cachelab.k8s.progress import TAIL_LINES, ProgressFollower, progress_lines
from cachelab.terminal import LiveSample

RECORDED = Path(__file__).parent / "data" / "k8s-benchmark-pod.log"


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
