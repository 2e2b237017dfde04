"""Figures of the analysis section: models against measurement, stage utilisation, CPU per
process, the 1 s window trace, both sides' throughput and response time, queue length, response
time per op type, box plots, measured think time and overlays of several results.

Every function draws on the ``ax`` it is given and rescales its axes after the last line, so
no model line runs off a range fixed before it was drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.typing import ColorType

from cachelab.analysis.prediction import CurvePrediction
from cachelab.columns import (
    MM1_MW_RESPONSE_TIME_MS,
    MMM_MW_RESPONSE_TIME_MS,
    MVA_RESPONSE_TIME_MS,
    MVA_THROUGHPUT_OPS_PER_S,
    MW_QUEUE_LENGTH,
    MW_QUEUE_SERVICE_MS,
    MW_RESPONSE_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    RESPONSE_TIME_MS,
    THINK_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
    Z_CLIENT_MS,
    Z_MW_MS,
    ci95_column,
    cpu_column,
    mean_column,
    rt_column,
    util_column,
)
from cachelab.report.plots import _axis_label, companion_line, iter_series, measured_line

FLAG_COLOUR = "#b00020"


def _finish(
    ax: Axes, ylabel: str, title: str, x: str, legend: bool = True, floor: bool = True
) -> None:
    ax.relim()
    ax.autoscale(enable=True, axis="both")
    if floor:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(_axis_label(x))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")


def mark_flagged(ax: Axes, frame: pd.DataFrame, x: str, column: str) -> None:
    """Ring the points whose ``flags`` column is not empty (noisy repetitions, client vs MW)."""
    if "flags" not in frame.columns or column not in frame.columns:
        return
    flagged = frame[frame["flags"].astype(str).str.len() > 0]
    if flagged.empty:
        return
    ax.scatter(
        flagged[x],
        flagged[column],
        s=140,
        facecolors="none",
        edgecolors=FLAG_COLOUR,
        linewidths=1.5,
        label="flagged (noise)",
        zorder=5,
    )


def plot_mva_per_point(
    ax: Axes,
    frame: pd.DataFrame,
    x: str,
    series: Sequence[str],
    curves: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
) -> None:
    """Measured throughput (solid), MVA calibrated at each point (crosses), and per series the
    MVA curve calibrated at its lowest load and its asymptotic bounds (dashed, dotted).

    ``frame`` needs ``throughput_ops_per_s_mean`` and ``mva_throughput_ops_per_s``; ``curves``
    maps a series label to (N, MVA X(N), bound min(N/(D+Z), 1/D_max))."""
    for label, group in iter_series(frame, series):
        group = group.sort_values(x)
        line = measured_line(ax, group, x, mean_column(THROUGHPUT_OPS_PER_S), f"measured {label}")
        colour = line.get_color()
        ax.plot(
            group[x],
            group[MVA_THROUGHPUT_OPS_PER_S],
            linestyle="none",
            marker="x",
            markersize=8,
            color=colour,
            label=f"MVA at each point {label}".strip(),
        )
        if label in curves:
            ns, xs, bounds = curves[label]
            ax.plot(
                ns,
                xs,
                linestyle="--",
                linewidth=1.0,
                color=colour,
                label=f"MVA calibrated at lowest load {label}".strip(),
            )
            ax.plot(
                ns,
                bounds,
                linestyle=":",
                linewidth=1.0,
                color=colour,
                label=f"bounds {label}".strip(),
            )
    _finish(ax, "throughput [ops/s]", "Throughput: measured, MVA and bounds", x)


def plot_curve_prediction(
    ax: Axes, prediction: CurvePrediction, label: str = "", colour: ColorType | None = None
) -> None:
    """An a-priori prediction (cachelab.analysis.prediction): its MVA throughput curve
    (dash-dot), its asymptotic bounds min(N / (D + Z), X_max) (dotted) and the knee N* where
    the bounds meet (a cross on the ceiling)."""
    words = f"MVA from the RTTs ({prediction.links.describe()}) {label}".strip()
    line = ax.plot(
        prediction.clients,
        prediction.throughput_ops_per_s,
        linestyle="-.",
        linewidth=1.2,
        color=colour,
        label=words,
    )[0]
    colour = line.get_color()
    ax.plot(
        prediction.clients,
        prediction.bound_throughput_ops_per_s,
        linestyle=":",
        linewidth=1.0,
        color=colour,
        label=f"bounds from the RTTs {label}".strip(),
    )
    if prediction.knee_clients <= prediction.clients[-1]:
        ax.plot(
            [prediction.knee_clients],
            [prediction.ceiling_ops_per_s],
            linestyle="none",
            marker="+",
            markersize=10,
            color=colour,
            label=f"knee N* = {prediction.knee_clients:.1f} {label}".strip(),
        )


def plot_prediction_beside(
    ax: Axes,
    prediction: CurvePrediction,
    measured_clients: Sequence[float],
    measured_throughput_ops_per_s: Sequence[float],
    seed_clients: Sequence[float] | None = None,
    seed_throughput_ops_per_s: Sequence[float] | None = None,
    seed_label: str = "seed",
) -> None:
    """One line: our measured throughput (solid), a seed's curve when given (grey squares),
    and the prediction from the RTTs (`plot_curve_prediction`), against clients."""
    line = ax.plot(
        measured_clients,
        measured_throughput_ops_per_s,
        marker="o",
        markersize=4,
        label="measured",
    )[0]
    if seed_clients is not None and seed_throughput_ops_per_s is not None:
        if len(seed_clients) != len(seed_throughput_ops_per_s):
            raise ValueError(
                f"seed curve: {len(seed_clients)} x values and {len(seed_throughput_ops_per_s)} "
                "throughputs (expected: as many of each)"
            )
        ax.plot(
            seed_clients,
            seed_throughput_ops_per_s,
            marker="s",
            markersize=4,
            linestyle="--",
            color="0.45",
            label=seed_label,
        )
    plot_curve_prediction(ax, prediction, colour=line.get_color())
    _finish(
        ax,
        "throughput [ops/s]",
        "Throughput: measured and predicted from the RTTs",
        TOTAL_CLIENTS,
    )


def plot_rtt_predictions(
    ax: Axes,
    frame: pd.DataFrame,
    x: str,
    series: Sequence[str],
    predictions: Mapping[str, CurvePrediction],
) -> None:
    """Per line with a prediction: measured throughput (solid) and the prediction from the
    links' RTTs and the line's lowest-load demands (`plot_curve_prediction`)."""
    for label, group in iter_series(frame, series):
        if label not in predictions:
            continue
        group = group.sort_values(x)
        line = measured_line(ax, group, x, mean_column(THROUGHPUT_OPS_PER_S), f"measured {label}")
        plot_curve_prediction(ax, predictions[label], label, line.get_color())
    _finish(ax, "throughput [ops/s]", "Throughput: measured and predicted from the RTTs", x)


def plot_model_response_time(ax: Axes, frame: pd.DataFrame, x: str, series: Sequence[str]) -> None:
    """Middleware queue + service time measured against M/M/1 and M/M/m predictions, and the
    client response time against calibrated MVA."""
    for label, group in iter_series(frame, series):
        group = group.sort_values(x)
        line = measured_line(
            ax, group, x, mean_column(RESPONSE_TIME_MS), f"client RT measured {label}"
        )
        colour = line.get_color()
        for column, style, name in (
            (MVA_RESPONSE_TIME_MS, "--", "MVA"),
            (MM1_MW_RESPONSE_TIME_MS, ":", "M/M/1 (Q+S)"),
            (MMM_MW_RESPONSE_TIME_MS, "-.", "M/M/m (Q+S)"),
        ):
            if column in group.columns and group[column].notna().any():
                ax.plot(
                    group[x],
                    group[column],
                    linestyle=style,
                    marker="x",
                    markersize=5,
                    color=colour,
                    label=f"{name} {label}".strip(),
                )
        if MW_QUEUE_SERVICE_MS in group.columns:
            ax.plot(
                group[x],
                group[MW_QUEUE_SERVICE_MS],
                marker="s",
                markersize=3,
                linestyle="-",
                alpha=0.5,
                color=colour,
                label=f"MW Q+S measured {label}".strip(),
            )
    _finish(ax, "response time [ms]", "Response time: measured and model predictions", x)


def plot_utilisation(ax: Axes, frame: pd.DataFrame, x: str, stages: Sequence[str]) -> None:
    """Utilisation of each queueing stage against x (one series: the heaviest line's points)."""
    frame = frame.sort_values(x)
    for stage in stages:
        column = util_column(stage)
        if column in frame.columns and frame[column].notna().any():
            ax.plot(frame[x], 100.0 * frame[column], marker="o", markersize=4, label=stage)
    ax.axhline(100.0, color="#888", linewidth=0.8)
    _finish(ax, "utilisation [%]", "Utilisation of each stage", x)


def plot_cpu(
    ax: Axes, frame: pd.DataFrame, x: str, processes: Sequence[str], host_cores: int
) -> None:
    """CPU seconds per second of each process against x, with the host's cores as a line."""
    frame = frame.sort_values(x)
    for name in processes:
        column = cpu_column(name)
        if column in frame.columns and frame[column].notna().any():
            ax.plot(frame[x], frame[column], marker="o", markersize=4, label=name)
    if host_cores:
        ax.axhline(host_cores, color="#888", linewidth=0.8, label=f"{host_cores} cores")
    _finish(ax, "CPU [cores]", "CPU use of each process (measured interval)", x)


def plot_both_sides(
    ax_tp: Axes, ax_rt: Axes, frame: pd.DataFrame, x: str, series: Sequence[str]
) -> None:
    """Throughput and response time at the clients (solid) and at the middleware (dashed)."""
    for label, group in iter_series(frame, series):
        group = group.sort_values(x)
        line = measured_line(ax_tp, group, x, mean_column(THROUGHPUT_OPS_PER_S), f"client {label}")
        colour = line.get_color()
        companion_line(
            ax_tp, group, x, mean_column(MW_THROUGHPUT_OPS_PER_S), colour, f"middleware {label}"
        )
        measured_line(ax_rt, group, x, mean_column(RESPONSE_TIME_MS), f"client {label}", colour)
        companion_line(
            ax_rt, group, x, mean_column(MW_RESPONSE_TIME_MS), colour, f"middleware {label}"
        )
    mark_flagged(ax_tp, frame, x, mean_column(THROUGHPUT_OPS_PER_S))
    _finish(ax_tp, "throughput [ops/s]", "Throughput: client and middleware", x)
    _finish(ax_rt, "response time [ms]", "Response time: client and middleware", x)


def plot_queue_length(ax: Axes, frame: pd.DataFrame, x: str, series: Sequence[str]) -> None:
    """The middleware's mean queue length against x."""
    for label, group in iter_series(frame, series):
        group = group.sort_values(x)
        ax.errorbar(
            group[x],
            group[mean_column(MW_QUEUE_LENGTH)],
            yerr=group.get(ci95_column(MW_QUEUE_LENGTH)),
            marker="o",
            markersize=4,
            capsize=3,
            label=label or None,
        )
    _finish(ax, "queue length [requests]", "Middleware queue length", x)


def plot_window_trace(
    ax: Axes,
    seconds: Sequence[int],
    client: Sequence[float],
    middleware: Sequence[float] | None,
    start_s: int,
    end_s: int,
    title: str,
) -> None:
    """Per-second throughput of one run, the measured interval shaded."""
    ax.plot(seconds, client, marker="o", markersize=3, label="client (sum of instances)")
    if middleware is not None:
        ax.plot(
            seconds,
            middleware,
            marker="s",
            markersize=3,
            linestyle="--",
            label="middleware windows",
        )
    ax.axvspan(start_s - 0.5, end_s - 0.5, color="#4c72b0", alpha=0.08, label="measured")
    ax.relim()
    ax.autoscale(enable=True)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("second of the run")
    ax.set_ylabel("throughput [ops/s]")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")


def plot_rt_per_op(
    ax: Axes, frame: pd.DataFrame, x: str, ops: Sequence[str], series: Sequence[str] = ()
) -> None:
    """Response time of each op type (clients' GET/SET, middleware's get/multiget/set)
    against x, one line per op type and series."""
    styles = ["-", "--", ":", "-."]
    for i, (label, group) in enumerate(iter_series(frame, series)):
        group = group.sort_values(x)
        for j, op in enumerate(ops):
            column = rt_column(op)
            if column in group.columns and group[column].notna().any():
                ax.plot(
                    group[x],
                    group[column],
                    marker="o",
                    markersize=4,
                    linestyle=styles[i % len(styles)],
                    color=f"C{j}",
                    label=f"{op} {label}".strip(),
                )
    _finish(ax, "response time [ms]", "Response time per operation type", x)


def plot_boxes(ax: Axes, samples: Mapping[str, Sequence[float]], ylabel: str, title: str) -> None:
    """Box plots, one per label (e.g. the 1 s windows of every repetition of a point)."""
    labels = list(samples)
    ax.boxplot([list(samples[k]) for k in labels], showfliers=True)
    ax.set_xticks(np.arange(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize="small")
    ax.set_ylim(bottom=0)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)


def plot_think_time(ax: Axes, frame: pd.DataFrame, x: str, series: Sequence[str]) -> None:
    """Measured think time: Z = N/X - R at the clients and behind the middleware (N/X_mw -
    R_mw, as ASL 2019 measured it), against the configured Z."""
    for label, group in iter_series(frame, series):
        group = group.sort_values(x)
        line = measured_line(ax, group, x, Z_CLIENT_MS, f"N/X - R (client) {label}")
        if Z_MW_MS in group.columns and group[Z_MW_MS].notna().any():
            companion_line(ax, group, x, Z_MW_MS, line.get_color(), f"N/X_mw - R_mw {label}")
        ax.plot(
            group[x],
            group[THINK_TIME_MS],
            linestyle=":",
            color=line.get_color(),
            label=f"configured Z {label}".strip(),
        )
    ax.axhline(0.0, color="#888", linewidth=0.8)
    _finish(ax, "think time [ms]", "Measured think time", x, floor=False)


def plot_overlay(
    ax: Axes, frames: Mapping[str, pd.DataFrame], x: str, metric: str, ylabel: str, title: str
) -> None:
    """One series per results folder (label), mean ± 95 % interval over repetitions (a
    percentile, one number per point from the merged histograms, has no bar)."""
    for label, frame in frames.items():
        frame = frame.sort_values(x)
        column = mean_column(metric) if mean_column(metric) in frame.columns else metric
        ax.errorbar(
            frame[x],
            frame[column],
            yerr=frame.get(ci95_column(metric)),
            marker="o",
            markersize=4,
            capsize=3,
            label=label,
        )
    _finish(ax, ylabel, title, x)
