"""The live line of a Kubernetes run: the benchmark pods' progress lines, followed as the Job runs.

manifests/base/scripts/run-benchmark.sh copies each loadgen instance's per-second progress line
(the cachelab loadgen's or memtier's) to the pod's log, tagged
`progress machine=<i> instance=<j>: [RUN #1 ...]`. `ProgressFollower.poll` reads the end of every
benchmark pod's log, keeps the latest second of each instance (parsed by cachelab.terminal, as
locally; a tagged line neither format matches is skipped) and hands all instances together to
the live line once per new second (memtier's has no p99: the line shows a dash). Reading a log
never fails a run: a pod that has not started yet, or a log that cannot be read, only leaves the
line where it was. Called from the runner's thread.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable

from cachelab.k8s.jobs import Jobs
from cachelab.k8s.kube import K8sError
from cachelab.spec import Spec
from cachelab.terminal import LiveSample, combine, parse_progress

# The tag run-benchmark.sh puts in front of a progress line.
_TAG = re.compile(r"^progress machine=(?P<machine>\d+) instance=(?P<instance>\d+): ")
# Lines read from the end of a pod's log per poll: a few seconds of progress of 16 instances.
TAIL_LINES = 64


def progress_lines(log: str) -> Iterable[tuple[tuple[int, int], LiveSample]]:
    """(machine, instance) and the sample of every tagged progress line of a pod's log, in order."""
    for line in log.splitlines():
        tag = _TAG.match(line)
        if tag is None:
            continue
        sample = parse_progress(line[tag.end() :])
        if sample is not None:
            yield (int(tag["machine"]), int(tag["instance"])), sample


class ProgressFollower:
    """The latest second of every loadgen instance of one run, and the live line fed from them.

    `read_log(pod)` returns the end of a pod's log (`kubectl logs --tail`) or raises one of
    `read_errors`; `live` gets the instances combined whenever a new second is seen."""

    def __init__(
        self,
        read_log: Callable[[str], str],
        live: Callable[[LiveSample], None],
        read_errors: tuple[type[Exception], ...] = (),
    ) -> None:
        self.read_log = read_log
        self.live = live
        self.read_errors = read_errors
        self.latest: dict[tuple[int, int], LiveSample] = {}
        self._last_second = -1

    def feed(self, log: str) -> None:
        """Takes the progress lines of one read of a pod's log (a later second replaces an
        earlier one of the same instance; lines read twice change nothing)."""
        for key, sample in progress_lines(log):
            known = self.latest.get(key)
            if known is None or sample.second >= known.second:
                self.latest[key] = sample

    def poll(self, pods: Iterable[str]) -> LiveSample | None:
        """Reads the end of each pod's log and, if a new second has come, passes all instances
        together to the live line (and returns them)."""
        for pod in pods:
            try:
                self.feed(self.read_log(pod))
            except self.read_errors:
                continue  # not started yet, or gone: the next poll tries again
        sample = combine(list(self.latest.values()))
        if sample is None or sample.second == self._last_second:
            return None
        self._last_second = sample.second
        self.live(sample)
        return sample


class OriginTracker:
    """When the loadgens' second 0 was (monotonic), from the first progress second the
    runner sees in the pods' logs: late by up to one poll and one `kubectl logs`, so a fault's
    times are early by as much. The runner's thread calls `seen`, the injector's `origin`."""

    def __init__(self) -> None:
        self._origin: float | None = None

    def seen(self, sample: LiveSample) -> None:
        if self._origin is None:
            self._origin = time.monotonic() - sample.second

    def origin(self) -> float | None:
        return self._origin


def benchmark_poll(
    jobs: Jobs,
    spec: Spec,
    live: Callable[[LiveSample], None] | None,
    origin: OriginTracker | None = None,
) -> Callable[[], None] | None:
    """What the wait for the benchmark Job calls once per poll: the pods' progress lines to
    the live line and to `origin` (None with neither)."""
    if live is None and origin is None:
        return None

    def each_second(sample: LiveSample) -> None:
        if origin is not None:
            origin.seen(sample)
        if live is not None:
            live(sample)

    follower = ProgressFollower(
        lambda pod: jobs.kube.kubectl(
            "logs", pod, "-c", "loadgen", f"--tail={TAIL_LINES}", timeout_s=10
        ),
        each_second,
        (K8sError,),
    )
    pods: list[str] = []

    def poll() -> None:
        nonlocal pods
        if len(pods) < spec.topology.client_machines:  # until every machine's pod exists
            try:
                pods = [p["metadata"]["name"] for p in jobs.pods("benchmark")]
            except (K8sError, ValueError, KeyError):
                return
        follower.poll(pods)

    return poll
