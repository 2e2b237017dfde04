"""The report's latency and window data: the clients' response-time distribution at the heaviest
point of each line (pooled HDR histograms), and the 1 s windows (one run's whole trace and every
point's measured windows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cachelab.report import analysis as report_analysis
from cachelab.report import plots
from cachelab.report.analyse import AnalysedResults
from cachelab.results.experiment import Experiment
from cachelab.results.hdr import density_ms, merge_histograms, percentiles_ms

HDR_PERCENTILES = (50.0, 75.0, 90.0, 95.0, 99.0, 99.9)


@dataclass(frozen=True)
class LatencyDistributions:
    """Per line (at its heaviest point): the density and the percentiles of the response time."""

    densities: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    percentiles: dict[str, dict[float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Windows:
    """The 1 s windows: per point its measured windows, and the heaviest point's whole trace."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    trace: dict[str, Any] | None = None


def latency_distributions(
    experiment: Experiment, points: pd.DataFrame, x: str, series: Sequence[str]
) -> tuple[dict[str, tuple[list[float], list[float]]], dict[str, dict[float, float]]]:
    """For the heaviest point of each series: the clients' HDR histograms over the measured
    interval pooled over instances and repetitions, as a density and as percentiles (the same
    numbers as the summary's p50/p90/p99 of that point's repetitions pooled)."""
    pooled = {}
    for label, group in plots.iter_series(points, series):
        heaviest = group.sort_values(x).iloc[-1]
        runs = experiment.runs_of(int(heaviest["point"]))
        merged = merge_histograms(r.histogram() for r in runs)
        if merged is None or merged.get_total_count() == 0:
            continue
        at = f"{plots.short_name(x)}={plots.format_value(heaviest[x])}"
        pooled[f"{label}, {at}" if label else at] = merged
    percentiles = {k: percentiles_ms(h, HDR_PERCENTILES) for k, h in pooled.items()}
    cut = max((v[99.0] for v in percentiles.values()), default=None)
    densities = {k: density_ms(h, cut_ms=cut) for k, h in pooled.items()}
    return densities, percentiles


def latency_section(analysed: AnalysedResults) -> LatencyDistributions:
    densities, percentiles = latency_distributions(
        analysed.experiment, analysed.points, analysed.x, analysed.series
    )
    return LatencyDistributions(densities, percentiles)


def windows_section(analysed: AnalysedResults) -> Windows:
    experiment, points = analysed.experiment, analysed.points
    if points.empty:
        return Windows(report_analysis.window_samples(experiment, points))
    heaviest = points.sort_values(analysed.x).iloc[-1]
    return Windows(
        report_analysis.window_samples(experiment, points),
        report_analysis.trace_of(experiment, int(str(heaviest["point"]))),
    )
