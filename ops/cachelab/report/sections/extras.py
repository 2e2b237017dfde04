"""Report sections beyond the per-point analysis, each from its own module: the tail breakdown
(when a middleware recorded histograms), the seed's curve and the fidelity table (when the seed
published numbers), repetitions until certain (when the spec asks for them), faults (when a run
had any), round-trip times (when the spec set any). Each is an `ExtraSection`: id, title, the
names of its figures in the report folder, a table (one dict per row) and a note; the template
prints them all alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ExtraSection:
    id: str
    title: str
    note: str
    rows: list[dict[str, Any]]
    figures: list[str] = field(default_factory=list)
