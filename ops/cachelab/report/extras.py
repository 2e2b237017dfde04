"""Report sections beyond the per-point analysis, each from its own module: the tail breakdown
(when a middleware recorded histograms), the seed's curve and the fidelity table (when the seed
published numbers), repetitions until certain (when the spec asks for them), faults (when a run
had any), round-trip times (when the spec set any). Each section is a dict: id, title, figures
(file names in the report folder), rows (a table, one dict per row), note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cachelab.report.faults_section import faults_section
from cachelab.report.network_section import network_section
from cachelab.report.repetitions_section import repetitions_section
from cachelab.report.seeds_section import seeds_section
from cachelab.report.tail_section import tail_section


def extra_sections(results_dir: Path, out: Path, axes: list[str]) -> list[dict[str, Any]]:
    """The sections that apply to this results folder, in report order (`axes`: the sweep's)."""
    found = [
        tail_section(results_dir, out, axes),
        seeds_section(results_dir, out),
        repetitions_section(results_dir),
        faults_section(results_dir, out),
        network_section(results_dir),
    ]
    return [s for s in found if s is not None]
