"""`cachelab compare DIR... --out OUT`: several results folders overlaid on the same axes, one
series per folder (and per line of the folder's own spec), as one report
(`OUT/index.html`, PNG figures and `points.csv`).

Each folder is read through `cachelab.results` and its summary rows are aggregated exactly as
`cachelab report` does (status ok, measured, mean and SD over repetitions), so a compared curve
is the same curve as in that folder's own report. Typical uses: sharded against non-sharded,
memcached against redis, a quiet run against a noisy one.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from cachelab.analysis.aggregate import aggregate_points
from cachelab.report import plots, plots_analysis
from cachelab.report.build import (
    METRICS,
    POINT_COLUMNS,
    ReportError,
    _select_rows,
    choose_series,
    format_number,
    read_summary,
)
from cachelab.results import ResultsError
from cachelab.results.experiment import read_experiment

OVERLAYS = (
    ("throughput_ops_per_s", "throughput [ops/s]", "Throughput (client)"),
    ("response_time_ms", "response time [ms]", "Response time (client)"),
    ("p99_ms", "p99 [ms]", "99th percentile (client)"),
    ("mw_throughput_ops_per_s", "throughput [ops/s]", "Throughput (middleware)"),
    ("mw_queue_time_ms", "queue time [ms]", "Queue time (middleware)"),
    ("mw_service_time_ms", "service time [ms]", "Service time (middleware)"),
)


def folder_points(
    results_dir: Path, label: str, x: str | None
) -> tuple[str, dict[str, pd.DataFrame]]:
    """A folder's per-point frame, split into its own lines; returns its x and
    {series label: points}."""
    try:
        experiment = read_experiment(results_dir, with_runs=False)
    except ResultsError as error:
        raise ReportError(str(error)) from None
    summary, _ = _select_rows(read_summary(results_dir))
    if summary.empty:
        raise ReportError(f"{results_dir}: no row with status ok and a measured throughput")
    own_x = x or experiment.spec.report.x
    if own_x not in summary.columns:
        raise ReportError(f"{results_dir}: x column {own_x!r} not in summary.csv")
    axes = [a for a in experiment.spec.sweep if a in summary.columns]
    series = choose_series(summary, own_x, axes, experiment.spec.report.series)
    keys = list(dict.fromkeys(["point", *axes, own_x, *[c for c in POINT_COLUMNS if c in summary]]))
    points = aggregate_points(summary, METRICS, keys)
    lines = {}
    for line, group in plots.iter_series(points, series):
        lines[f"{label}: {line}" if line else label] = group
    return own_x, lines


def build_comparison(
    folders: Sequence[Path], out: Path, labels: Sequence[str] = (), x: str | None = None
) -> Path:
    """Overlay the folders' points and write `out/index.html`; returns its path.

    Raises
    ------
    ReportError
        Fewer than two folders, more labels than folders, a folder that cannot be read, or
        folders whose x axes differ (pass `x` to choose one column they all have).
    """
    if len(folders) < 2:
        raise ReportError("compare: give two or more results folders")
    if len(labels) > len(folders):
        raise ReportError(f"compare: {len(labels)} labels for {len(folders)} folders")
    names = list(labels) + [f"{f.parent.name}/{f.name}" for f in folders[len(labels) :]]
    if len(set(names)) != len(names):
        raise ReportError(f"compare: labels must differ, got {names}")
    frames: dict[str, pd.DataFrame] = {}
    chosen: set[str] = set()
    for folder, name in zip(folders, names, strict=True):
        own_x, lines = folder_points(Path(folder), name, x)
        chosen.add(own_x)
        frames.update(lines)
    if len(chosen) > 1:
        raise ReportError(
            f"compare: the folders plot against different x columns {sorted(chosen)}; "
            "choose one with --x"
        )
    axis = chosen.pop()
    out.mkdir(parents=True, exist_ok=True)
    images = []
    for metric, ylabel, title in OVERLAYS:
        present = {k: f for k, f in frames.items() if f[f"{metric}_mean"].notna().any()}
        if not present:
            continue
        figure = Figure(figsize=(12.0, 4.6))
        plots_analysis.plot_overlay(figure.subplots(), present, axis, metric, ylabel, title)
        figure.tight_layout()
        figure.savefig(out / f"{metric}.png", dpi=110)
        images.append((f"{metric}.png", title))
    table = pd.concat([f.assign(series=k) for k, f in frames.items()], ignore_index=True)
    table.to_csv(out / "points.csv", index=False)
    index = out / "index.html"
    index.write_text(_html(names, folders, images, frames, axis), encoding="utf-8")
    return index


def _html(
    names: Sequence[str],
    folders: Sequence[Path],
    images: Sequence[tuple[str, str]],
    frames: dict[str, pd.DataFrame],
    x: str,
) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr><td class=l>{esc(n)}</td><td class=l><code>{esc(str(f))}</code></td></tr>"
        for n, f in zip(names, folders, strict=True)
    )
    figures = "".join(
        f'<figure><img src="{esc(src)}" alt="{esc(title)}"><figcaption>{esc(title)} against '
        f"{esc(plots.short_name(x))}, one series per folder; error bars are the SD over "
        "repetitions.</figcaption></figure>"
        for src, title in images
    )
    tables = []
    for name, frame in frames.items():
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{format_number(r.get(c))}</td>"
                for c in (
                    x,
                    "throughput_ops_per_s_mean",
                    "response_time_ms_mean",
                    "p99_ms_mean",
                    "mw_throughput_ops_per_s_mean",
                )
            )
            + "</tr>"
            for r in frame.sort_values(x).to_dict(orient="records")
        )
        tables.append(
            f"<h3>{esc(name)}</h3><table><tr><th>{esc(plots.short_name(x))}</th>"
            "<th>throughput [ops/s]</th><th>RT [ms]</th><th>p99 [ms]</th>"
            f"<th>MW throughput [ops/s]</th></tr>{body}</table>"
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cachelab compare</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 80rem; padding: 0 1rem;
  color: #222; }}
table {{ border-collapse: collapse; margin: 0.6rem 0 1.4rem; font-size: 0.85rem; }}
th, td {{ border: 1px solid #ddd; padding: 0.22rem 0.45rem; text-align: right; }}
th {{ background: #f4f4f4; }} td.l {{ text-align: left; }}
figure {{ margin: 0.6rem 0 1.4rem; }} img {{ width: 100%; border: 1px solid #eee; }}
figcaption {{ font-size: 0.86rem; color: #555; }}
</style></head><body>
<h1>cachelab compare</h1>
<h2 id="folders">Folders</h2><table><tr><th class=l>label</th><th class=l>results folder</th></tr>
{rows}</table>
<h2 id="figures">Overlays</h2>{figures}
<h2 id="points">Points</h2>{"".join(tables)}
<p>Per-point numbers of every series: <a href="points.csv">points.csv</a>.</p>
</body></html>
"""
