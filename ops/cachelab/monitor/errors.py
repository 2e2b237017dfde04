"""The monitor's one error type."""

from __future__ import annotations


class MonitorError(RuntimeError):
    """A monitoring process did not start, or Prometheus answered with an error."""
