"""The one trimming rule of cachelab.

A run measures the seconds `s` (counted from the loadgens' start) with
`warmup_s <= s < duration_s - cooldown_s`. Every reader applies this rule and nothing else:

- memtier's per-second `Time-Serie`: second `s` counts when it lies in the interval; the divisor
  is the time those seconds' requests completed in: with the cachelab loadgen, the time between
  the sampler's cuts around them (`Cut At ms`: a sampler woken late on a busy machine makes a
  "second" longer or shorter than 1 s), otherwise the number of those seconds the run lasted (a
  second without requests still counts);
- HdrHistogram interval logs: an interval counts when it starts in the interval, to within half
  a second (the loadgen's intervals start on its own second boundaries);
- the middleware's 1 s windows: a window counts when its midpoint lies in the interval, with the
  interval placed on the wall clock at the earliest loadgen `Start time`;
- process CPU samples: the usage between the first sample at or after the interval's start and
  the last one at or before its end.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MeasuredInterval:
    """Seconds [start_s, end_s) of a run that are measured."""

    start_s: int
    end_s: int

    @classmethod
    def of_run(cls, warmup_s: int, cooldown_s: int, duration_s: int) -> MeasuredInterval:
        """The measured interval of a run of `duration_s` seconds."""
        if warmup_s < 0 or cooldown_s < 0:
            raise ValueError(f"warmup_s/cooldown_s: must be >= 0, got {warmup_s}/{cooldown_s}")
        return cls(int(warmup_s), int(duration_s) - int(cooldown_s))

    @property
    def seconds(self) -> int:
        return max(0, self.end_s - self.start_s)

    def contains_second(self, second: int) -> bool:
        """A 1 s bucket numbered `second` from the start of the run."""
        return self.start_s <= second < self.end_s

    def contains_offset(self, offset_s: float) -> bool:
        """An interval (e.g. of an HDR log) starting `offset_s` seconds after the run's start."""
        return self.start_s - 0.5 <= offset_s < self.end_s - 0.5

    def epoch_bounds_ms(self, origin_epoch_ms: float) -> tuple[float, float]:
        """The interval on the wall clock for a run that started at `origin_epoch_ms`."""
        return (origin_epoch_ms + 1000.0 * self.start_s, origin_epoch_ms + 1000.0 * self.end_s)

    def contains_window(
        self, origin_epoch_ms: float, window_start_epoch_ms: float, duration_ms: float
    ) -> bool:
        """A wall-clock window (the middleware's) whose midpoint lies in the interval."""
        low, high = self.epoch_bounds_ms(origin_epoch_ms)
        middle = window_start_epoch_ms + duration_ms / 2.0
        return low <= middle < high
