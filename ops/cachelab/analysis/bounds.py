"""The checks of a model's inputs: a finite number above zero, or at least zero. Each raises
ValueError naming the input and the value it got."""

from __future__ import annotations

import math


def require_positive(name: str, value: float) -> None:
    """`value` is a finite number > 0; ValueError naming `name` otherwise."""
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")


def require_non_negative(name: str, value: float) -> None:
    """`value` is a finite number >= 0; ValueError naming `name` otherwise."""
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name}: must be a finite number >= 0, got {value!r}")
