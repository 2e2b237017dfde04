"""Matplotlib figures of cachelab results. Every function draws on the ``ax`` it is given.

Inputs are the per-point frames of :func:`cachelab.analysis.pointstats.point_statistics`
(``<metric>_mean`` and ``<metric>_ci95`` columns: error bars are the 95 % intervals), so a
caller can plot any results folder, or
several side by side, without this module knowing about files. Nothing here calls ``plt.show``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer
from matplotlib.lines import Line2D
from matplotlib.typing import ColorType

from cachelab.analysis.factorial import FactorialResult
from cachelab.columns import (
    HOT_KEY_SHARE,
    LAW_RESPONSE_TIME_MS,
    MW_QUEUE_TIME_MS,
    MW_RESPONSE_TIME_MS,
    MW_SERVICE_TIME_MS,
    RESPONSE_TIME_MS,
    SERVER_REQUESTS_MAX_OVER_MEAN,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
    ci95_column,
    mean_column,
)

BREAKDOWN_PARTS = (
    ("queue", "queue (MW)", "#4c72b0"),
    ("service", "service (MW -> server -> MW)", "#dd8452"),
    ("mw_other", "rest of MW", "#55a868"),
    ("outside", "outside MW (network, client)", "#c0c0c0"),
)


def short_name(column: str) -> str:
    """Last component of a dotted spec path: ``topology.workers`` -> ``workers``."""
    return column.rsplit(".", 1)[-1]


def series_label(keys: Sequence[str], values: Sequence[object]) -> str:
    """Legend text of one line, e.g. ``workers=8, servers=3``."""
    return ", ".join(
        f"{short_name(k)}={format_value(v)}" for k, v in zip(keys, values, strict=True)
    )


def format_value(value: object) -> str:
    """Compact text of an axis value (8.0 -> "8")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def measured_line(
    ax: Axes, group: pd.DataFrame, x: str, column: str, label: str, colour: ColorType | None = None
) -> Line2D:
    """A measured series: solid line with round markers (in the next colour of the cycle unless
    ``colour`` is given); returns the line, whose colour the series' other lines take."""
    return ax.plot(
        group[x], group[column], marker="o", markersize=4, color=colour, label=label.strip()
    )[0]


def companion_line(
    ax: Axes, group: pd.DataFrame, x: str, column: str, colour: ColorType, label: str
) -> Line2D:
    """A second series of the same group (the middleware's view, a second estimate): dashed, square
    markers, in the colour of the measured line it goes with."""
    return ax.plot(
        group[x],
        group[column],
        marker="s",
        markersize=4,
        linestyle="--",
        color=colour,
        label=label.strip(),
    )[0]


def iter_series(frame: pd.DataFrame, series: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    """Split a per-point frame into (label, rows) per combination of the series columns."""
    if not series:
        return [("", frame)]
    out = []
    for values, group in frame.groupby(list(series), sort=True, observed=True):
        as_tuple = values if isinstance(values, tuple) else (values,)
        out.append((series_label(series, as_tuple), group))
    return out


def _metric_lines(
    ax: Axes,
    frame: pd.DataFrame,
    x: str,
    metric: str,
    series: Sequence[str],
    marker: str = "o",
) -> None:
    mean, interval = mean_column(metric), ci95_column(metric)
    if mean not in frame.columns:
        raise ValueError(f"metric: {mean!r} not in frame (have {list(frame.columns)})")
    if x not in frame.columns:
        raise ValueError(f"x: {x!r} not in frame (have {list(frame.columns)})")
    for label, group in iter_series(frame, series):
        group = group.sort_values(x)
        yerr = group[interval] if interval in group.columns else None
        ax.errorbar(
            group[x],
            group[mean],
            yerr=yerr,
            marker=marker,
            markersize=4,
            capsize=3,
            linewidth=1.2,
            label=label or None,
        )
    ax.set_xlabel(_axis_label(x))
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    if series:
        ax.legend(fontsize="small")


def _axis_label(column: str) -> str:
    labels = {
        TOTAL_CLIENTS: "clients (total connections)",
        "workers": "worker threads per middleware",
        "middlewares": "middlewares",
        "servers": "servers",
    }
    return labels.get(column, short_name(column).replace("_", " "))


def plot_throughput(
    ax: Axes,
    frame: pd.DataFrame,
    x: str = TOTAL_CLIENTS,
    series: Sequence[str] = (),
    metric: str = THROUGHPUT_OPS_PER_S,
) -> None:
    """Throughput against ``x``, one line per series, error bars = 95 % intervals."""
    _metric_lines(ax, frame, x, metric, series)
    ax.set_ylabel("throughput [ops/s]")
    ax.set_title("Throughput")


def plot_response_time(
    ax: Axes,
    frame: pd.DataFrame,
    x: str = TOTAL_CLIENTS,
    series: Sequence[str] = (),
    metric: str = RESPONSE_TIME_MS,
) -> None:
    """Client response time against ``x``, one line per series, error bars = 95 % intervals."""
    _metric_lines(ax, frame, x, metric, series)
    ax.set_ylabel("response time [ms]")
    ax.set_title("Response time (client)")


def plot_hot_key_share(
    ax: Axes, frame: pd.DataFrame, x: str = TOTAL_CLIENTS, series: Sequence[str] = ()
) -> None:
    """The most requested key's share of every key requested, against ``x``."""
    _metric_lines(ax, frame, x, HOT_KEY_SHARE, series)
    ax.set_ylabel("hottest key's share of requests")
    ax.set_title("Key skew (loadgen)")


def plot_server_balance(
    ax: Axes, frame: pd.DataFrame, x: str = TOTAL_CLIENTS, series: Sequence[str] = ()
) -> None:
    """The busiest server's requests over the mean server's (1 = equal), against ``x``."""
    _metric_lines(ax, frame, x, SERVER_REQUESTS_MAX_OVER_MEAN, series)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_ylabel("busiest server / mean server (requests)")
    ax.set_title("Servers' load (middleware)")


def breakdown_parts(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean queue / service / rest-of-MW / outside-MW times in ms per row of a per-point frame.

    ``rest of MW`` = MW response - queue - service; ``outside MW`` = client response - MW
    response (network and client side). Negative remainders (noise) are clipped at 0.
    """
    queue = frame[mean_column(MW_QUEUE_TIME_MS)]
    service = frame[mean_column(MW_SERVICE_TIME_MS)]
    mw_rt = frame[mean_column(MW_RESPONSE_TIME_MS)]
    client_rt = frame[mean_column(RESPONSE_TIME_MS)]
    return pd.DataFrame(
        {
            "queue": queue,
            "service": service,
            "mw_other": (mw_rt - queue - service).clip(lower=0),
            "outside": (client_rt - mw_rt).clip(lower=0),
        },
        index=frame.index,
    )


def plot_mw_breakdown(
    ax: Axes,
    frame: pd.DataFrame,
    x: str = TOTAL_CLIENTS,
    series: Sequence[str] = (),
) -> None:
    """Stacked bars of where a request's time goes, per point; grouped bars per series."""
    needed = [
        mean_column(MW_QUEUE_TIME_MS),
        mean_column(MW_SERVICE_TIME_MS),
        mean_column(MW_RESPONSE_TIME_MS),
        mean_column(RESPONSE_TIME_MS),
    ]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"frame: missing {missing} (a middleware breakdown needs them)")
    rows = frame.dropna(subset=needed[:3])
    groups = iter_series(rows, series)
    xs = ordered_values(rows[x])
    width = 0.8 / max(1, len(groups))
    for g, (label, group) in enumerate(groups):
        group = group.sort_values(x)
        parts = breakdown_parts(group)
        positions = np.array([xs.index(v) for v in group[x]], dtype=float) - 0.4 + width * (g + 0.5)
        bottom = np.zeros(len(group))
        for key, name, colour in BREAKDOWN_PARTS:
            values = parts[key].to_numpy(dtype=float)
            ax.bar(
                positions,
                values,
                width=width * 0.92,
                bottom=bottom,
                color=colour,
                edgecolor="white",
                linewidth=0.5,
                label=name if g == 0 else None,
            )
            bottom += values
        if label:
            for pos, top in zip(positions, bottom, strict=True):
                ax.annotate(
                    short_label(label),
                    (pos, top),
                    ha="center",
                    va="bottom",
                    fontsize="x-small",
                    rotation=90,
                )
    ax.set_xticks(range(len(xs)), [format_value(v) for v in xs])
    ax.set_xlabel(_axis_label(x))
    ax.set_ylabel("time per request [ms]")
    ax.set_title("Where the time goes (means)")
    ax.legend(fontsize="small", loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)


def ordered_values(column: pd.Series) -> list[object]:
    """Distinct values in axis order: category order for categoricals (a spec's sweep order),
    else sorted."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        present = set(column.dropna().tolist())
        return [c for c in column.cat.categories if c in present]
    return sorted(column.dropna().unique().tolist())


def short_label(label: str) -> str:
    """Values only: ``workers=8, servers=3`` -> ``8/3``."""
    return "/".join(part.split("=", 1)[-1] for part in label.split(", "))


def plot_latency_density(
    ax: Axes, densities: Mapping[str, tuple[Sequence[float], Sequence[float]]]
) -> None:
    """Fraction of requests per response-time bin, one step line per label; the bins come from
    the recorded HDR values (``cachelab.results.hdr.density_ms``), cut at the largest p99."""
    for label, (edges, fractions) in densities.items():
        width = edges[1] - edges[0] if len(edges) > 1 else 1.0
        ax.stairs([100.0 * f / width for f in fractions], edges, label=label, linewidth=1.2)
    ax.set_xlabel("response time [ms]")
    ax.set_ylabel("requests [% per ms]")
    ax.set_title("Response-time distribution (client, measured interval)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if densities:
        ax.legend(fontsize="small")


def plot_percentiles(ax: Axes, percentiles: Mapping[str, Mapping[float, float]]) -> None:
    """Latency at each reported percentile, one line per label (both axes log-scaled: tails
    span orders of magnitude)."""
    for label, values in percentiles.items():
        ps = sorted(values)
        tail = [100.0 / (100.0 - p) if p < 100 else np.nan for p in ps]
        ax.plot(tail, [values[p] for p in ps], marker="o", markersize=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [
        p for p in (50.0, 90.0, 99.0, 99.9, 99.99) if any(p in v for v in percentiles.values())
    ]
    ax.set_xticks([100.0 / (100.0 - p) for p in ticks], [f"p{format_value(p)}" for p in ticks])
    ax.set_xlabel("percentile")
    ax.set_ylabel("response time [ms]")
    ax.set_title("Response-time percentiles (client)")
    ax.grid(True, alpha=0.3)
    if percentiles:
        ax.legend(fontsize="small")


def plot_interactive_law(
    ax: Axes,
    frame: pd.DataFrame,
    x: str = TOTAL_CLIENTS,
    series: Sequence[str] = (),
) -> None:
    """Measured response time (markers) against R = N/X - Z predicted from throughput (dashed).

    ``frame`` needs ``response_time_ms_mean`` and ``law_response_time_ms`` columns.
    """
    for column in (mean_column(RESPONSE_TIME_MS), LAW_RESPONSE_TIME_MS, x):
        if column not in frame.columns:
            raise ValueError(f"frame: missing column {column!r}")
    for label, group in iter_series(frame, series):
        group = group.sort_values(x)
        line = measured_line(ax, group, x, mean_column(RESPONSE_TIME_MS), f"measured {label}")
        ax.plot(
            group[x],
            group[LAW_RESPONSE_TIME_MS],
            marker="x",
            linestyle="--",
            color=line.get_color(),
            label=f"N/X - Z {label}".strip(),
        )
    ax.set_xlabel(_axis_label(x))
    ax.set_ylabel("response time [ms]")
    ax.set_title("Interactive law: measured vs predicted")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")


def plot_model_throughput(
    ax: Axes,
    frame: pd.DataFrame,
    models: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    x: str = TOTAL_CLIENTS,
    series: Sequence[str] = (),
) -> None:
    """Measured throughput with a model's prediction per series (dashed), e.g. from MVA."""
    plot_throughput(ax, frame, x, series)
    colours = {
        c.get_label(): c.lines[0].get_color()
        for c in ax.containers
        if isinstance(c, ErrorbarContainer) and c.lines
    }
    for label, (xs, ys) in models.items():
        ax.plot(
            xs,
            ys,
            linestyle="--",
            linewidth=1.0,
            color=colours.get(label),
            label=f"model {label}".strip(),
        )
    ax.set_title("Throughput: measured vs MVA model")
    ax.legend(fontsize="small")


def plot_factorial_variation(ax: Axes, result: FactorialResult, title: str = "") -> None:
    """Horizontal bars: % of variation explained by each effect and by error."""
    names = [short_factor_term(n) for n in result.names[1:]] + ["error"]
    values = [*list(np.nan_to_num(result.variation_pct[1:])), result.error_pct]
    positions = np.arange(len(names))
    ax.barh(positions, values, color=["#4c72b0"] * (len(names) - 1) + ["#c44e52"])
    ax.set_yticks(positions, names)
    ax.invert_yaxis()
    ax.set_xlabel("variation explained [%]")
    ax.set_xlim(0, 100)
    ax.set_title(title or "Allocation of variation")
    ax.grid(True, axis="x", alpha=0.3)
    for pos, value in zip(positions, values, strict=True):
        ax.annotate(
            f"{value:.1f}",
            (value, pos),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize="x-small",
        )


def short_factor_term(term: str) -> str:
    """``topology.workers·topology.servers`` -> ``workers·servers``."""
    return "·".join(short_name(part) for part in term.split("·"))
