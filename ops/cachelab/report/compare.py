"""`cachelab compare DIR... --out OUT`: several results folders overlaid on the same axes, one
series per folder (and per line of the folder's own spec), as one report
(`OUT/index.html`, PNG figures, `points.csv` and `differences.csv`).

Each folder is read through `cachelab.results` and its points are the same numbers as in its
own report (`cachelab.analysis.pointstats`: usable repetitions, mean with its 95 % Student-t
interval, percentiles from the merged histograms). Every other series is set against the first
folder's series of the same line at the same x: the difference of the means with its Welch
interval (`cachelab.analysis.intervals.difference_interval`), beyond noise when the interval
excludes 0. Each folder's noise flags and load averages are shown beside it. Typical uses:
sharded against non-sharded, memcached against redis, a quiet run against a noisy one.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from cachelab.analysis.intervals import difference_interval
from cachelab.analysis.pointstats import point_statistics, runs_by_point, select_rows
from cachelab.columns import (
    MW_QUEUE_TIME_MS,
    MW_SERVICE_TIME_MS,
    MW_THROUGHPUT_OPS_PER_S,
    P99_MS,
    RESPONSE_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    ci95_column,
    mean_column,
)
from cachelab.report import plots, plots_analysis
from cachelab.report.analyse import METRICS, POINT_COLUMNS, choose_series
from cachelab.report.analysis import add_noise_flags
from cachelab.report.read import ReportError, read_summary
from cachelab.report.render import format_number
from cachelab.report.tables import without_empty
from cachelab.results import ResultsError
from cachelab.results.experiment import read_experiment
from cachelab.results.noise import host_warnings

DIFFERENCE_METRICS = (THROUGHPUT_OPS_PER_S, RESPONSE_TIME_MS)
DIFFERENCE_COLUMNS = [
    "series",
    "baseline",
    "x",
    "metric",
    "baseline_mean",
    "mean",
    "difference",
    "difference_ci95",
    "difference_pct",
    "verdict",
]


@dataclass
class Folder:
    """One compared folder: its lines' points, its usable summary rows, its noise facts."""

    label: str
    path: Path
    x: str
    lines: dict[str, pd.DataFrame]  # full series name -> points
    line_of: dict[str, str]  # full series name -> the folder's own line label ("" for one)
    summary: pd.DataFrame
    load: str
    warnings: list[str]
    flags: list[str]


OVERLAYS = (
    (THROUGHPUT_OPS_PER_S, "throughput [ops/s]", "Throughput (client)"),
    (RESPONSE_TIME_MS, "response time [ms]", "Response time (client)"),
    (P99_MS, "p99 [ms]", "99th percentile (client)"),
    (MW_THROUGHPUT_OPS_PER_S, "throughput [ops/s]", "Throughput (middleware)"),
    (MW_QUEUE_TIME_MS, "queue time [ms]", "Queue time (middleware)"),
    (MW_SERVICE_TIME_MS, "service time [ms]", "Service time (middleware)"),
)


def _load(metadata: dict[str, object]) -> str:
    def one(key: str) -> str:
        facts = metadata.get(key)
        values = facts.get("load_avg") if isinstance(facts, dict) else None
        return " / ".join(f"{v:.2f}" for v in values) if values else "not recorded"

    return f"before {one('host')}, after {one('host_after')}"


def read_folder(results_dir: Path, label: str, x: str | None) -> Folder:
    """A folder's points split into its own lines, with what the comparison needs beside."""
    try:
        experiment = read_experiment(results_dir)
    except ResultsError as error:
        raise ReportError(str(error)) from None
    summary, _ = select_rows(read_summary(results_dir))
    if summary.empty:
        raise ReportError(f"{results_dir}: no row with status ok and a measured throughput")
    own_x = x or experiment.spec.report.x
    if own_x not in summary.columns:
        raise ReportError(f"{results_dir}: x column {own_x!r} not in summary.csv")
    axes = [a for a in experiment.spec.sweep if a in summary.columns]
    series = choose_series(summary, own_x, axes, experiment.spec.report.series)
    keys = list(dict.fromkeys(["point", *axes, own_x, *[c for c in POINT_COLUMNS if c in summary]]))
    points = point_statistics(summary, METRICS, keys, runs_by_point(experiment.runs, summary))
    points = add_noise_flags(points, summary)
    lines, line_of = {}, {}
    for line, group in plots.iter_series(points, series):
        name = f"{label}: {line}" if line else label
        lines[name], line_of[name] = group, line
    flags = [f"point {int(r['point'])}: {r['flags']}" for _, r in points.iterrows() if r["flags"]]
    return Folder(
        label,
        results_dir,
        own_x,
        lines,
        line_of,
        summary,
        _load(experiment.metadata),
        host_warnings(experiment.metadata),
        flags,
    )


def differences(folders: Sequence[Folder], x: str) -> pd.DataFrame:
    """Every series of the second and later folders against the first folder's series of the
    same line (else its only line), point by point at equal x: difference of the means (this
    minus baseline) with its Welch 95 % interval, and the verdict."""
    base = folders[0]
    rows = []
    for folder in folders[1:]:
        for name, group in folder.lines.items():
            line = folder.line_of[name]
            base_name = next(
                (n for n, own in base.line_of.items() if own == line),
                next(iter(base.lines)) if len(base.lines) == 1 else None,
            )
            if base_name is None:
                continue
            base_group = base.lines[base_name]
            for _, point in group.iterrows():
                match = base_group[base_group[x] == point[x]]
                if match.empty:
                    continue
                base_point = match.iloc[0]
                for metric in DIFFERENCE_METRICS:
                    a = _values(base.summary, int(base_point["point"]), metric)
                    b = _values(folder.summary, int(point["point"]), metric)
                    diff = difference_interval(a, b)
                    base_mean = float(base_point[mean_column(metric)])
                    rows.append(
                        {
                            "series": name,
                            "baseline": base_name,
                            "x": point[x],
                            "metric": metric,
                            "baseline_mean": base_mean,
                            "mean": float(point[mean_column(metric)]),
                            "difference": diff.mean,
                            "difference_ci95": diff.half_width,
                            "difference_pct": 100.0 * diff.mean / base_mean
                            if base_mean
                            else math.nan,
                            "verdict": verdict(diff.mean, diff.half_width),
                        }
                    )
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def verdict(difference: float, half_width: float) -> str:
    """`beyond noise` when the interval excludes 0, `within noise` when it holds 0, and
    `no interval` with fewer than two repetitions on a side."""
    if not math.isfinite(half_width):
        return "no interval"
    return "beyond noise" if abs(difference) > half_width else "within noise"


def _values(summary: pd.DataFrame, point: int, metric: str) -> list[float]:
    rows = summary[summary["point"] == point]
    return [float(v) for v in pd.to_numeric(rows[metric], errors="coerce").dropna()]


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
    read = [read_folder(Path(f), n, x) for f, n in zip(folders, names, strict=True)]
    frames: dict[str, pd.DataFrame] = {}
    chosen: set[str] = set()
    for folder in read:
        chosen.add(folder.x)
        frames.update(folder.lines)
    if len(chosen) > 1:
        raise ReportError(
            f"compare: the folders plot against different x columns {sorted(chosen)}; "
            "choose one with --x"
        )
    axis = chosen.pop()
    out.mkdir(parents=True, exist_ok=True)
    images = []
    for metric, ylabel, title in OVERLAYS:
        present = {
            k: f
            for k, f in frames.items()
            if f.get(mean_column(metric), f.get(metric, pd.Series(dtype=float))).notna().any()
        }
        if not present:
            continue
        figure = Figure(figsize=(12.0, 4.6))
        plots_analysis.plot_overlay(figure.subplots(), present, axis, metric, ylabel, title)
        figure.tight_layout()
        figure.savefig(out / f"{metric}.png", dpi=110)
        images.append((f"{metric}.png", title))
    table = pd.concat([f.assign(series=k) for k, f in frames.items()], ignore_index=True)
    without_empty(table).to_csv(out / "points.csv", index=False)
    diffs = differences(read, axis)
    diffs.to_csv(out / "differences.csv", index=False)
    index = out / "index.html"
    index.write_text(_html(read, images, frames, diffs, axis), encoding="utf-8")
    return index


def _html(
    folders: Sequence[Folder],
    images: Sequence[tuple[str, str]],
    frames: dict[str, pd.DataFrame],
    diffs: pd.DataFrame,
    x: str,
) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr><td class=l>{esc(f.label)}</td><td class=l><code>{esc(str(f.path))}</code></td>"
        f"<td class=l>{esc(f.load)}</td><td class=l>"
        f"{esc('; '.join(f.warnings + f.flags)) or 'none'}</td></tr>"
        for f in folders
    )
    figures = "".join(
        f'<figure><img src="{esc(src)}" alt="{esc(title)}"><figcaption>{esc(title)} against '
        f"{esc(plots.short_name(x))}, one series per folder; error bars are the 95 % intervals "
        "of the means over repetitions.</figcaption></figure>"
        for src, title in images
    )
    tables = []
    for name, frame in frames.items():
        body = "".join(
            "<tr>"
            + f"<td>{format_number(r.get(x))}</td>"
            + "".join(
                f"<td>{format_number(r.get(mean_column(c)))} ± "
                f"{format_number(r.get(ci95_column(c)))}</td>"
                for c in (THROUGHPUT_OPS_PER_S, RESPONSE_TIME_MS)
            )
            + f"<td>{format_number(r.get(P99_MS))}</td>"
            + f"<td>{format_number(r.get(mean_column(MW_THROUGHPUT_OPS_PER_S)))}</td>"
            + f"<td class=l>{esc(str(r.get('flags') or ''))}</td>"
            + "</tr>"
            for r in frame.sort_values(x).to_dict(orient="records")
        )
        tables.append(
            f"<h3>{esc(name)}</h3><table><tr><th>{esc(plots.short_name(x))}</th>"
            "<th>throughput [ops/s], mean ± 95 %</th><th>RT [ms], mean ± 95 %</th>"
            "<th>p99 [ms], merged histograms</th><th>MW throughput [ops/s], mean</th>"
            f"<th class=l>noise flags</th></tr>{body}</table>"
        )
    diff_rows = "".join(
        f"<tr><td class=l>{esc(str(r['series']))}</td><td class=l>{esc(str(r['baseline']))}</td>"
        f"<td>{format_number(r['x'])}</td><td class=l>{esc(str(r['metric']))}</td>"
        f"<td>{format_number(r['baseline_mean'])}</td><td>{format_number(r['mean'])}</td>"
        f"<td>{format_number(r['difference'])} ± {format_number(r['difference_ci95'])}</td>"
        f"<td>{format_number(r['difference_pct'], 1)}</td>"
        f'<td class="l{" bad" if r["verdict"] == "beyond noise" else ""}">'
        f"{esc(r['verdict'])}</td>"
        "</tr>"
        for r in diffs.to_dict(orient="records")
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cachelab compare</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 80rem; padding: 0 1rem;
  color: #222; }}
table {{ border-collapse: collapse; margin: 0.6rem 0 1.4rem; font-size: 0.85rem; }}
th, td {{ border: 1px solid #ddd; padding: 0.22rem 0.45rem; text-align: right; }}
th {{ background: #f4f4f4; }} td.l, th.l {{ text-align: left; }} .bad {{ color: #b00020; }}
figure {{ margin: 0.6rem 0 1.4rem; }} img {{ width: 100%; border: 1px solid #eee; }}
figcaption {{ font-size: 0.86rem; color: #555; }} .note {{ font-size: 0.88rem; color: #555; }}
</style></head><body>
<h1>cachelab compare</h1>
<h2 id="folders">Folders</h2><table><tr><th class=l>label</th><th class=l>results folder</th>
<th class=l>load average (1/5/15 min)</th><th class=l>noise flags</th></tr>
{rows}</table>
<h2 id="differences">Differences</h2>
<p class="note">Each series against the first folder's series of the same line, at the same
{esc(plots.short_name(x))}: the difference of the means over repetitions (this minus baseline)
± the half-width of its 95 % Welch interval; <b>beyond noise</b> when the interval excludes 0.
With fewer than two repetitions on a side there is no interval.
Machine-readable: <a href="differences.csv">differences.csv</a>.</p>
<table><tr><th class=l>series</th><th class=l>baseline</th><th>{esc(plots.short_name(x))}</th>
<th class=l>metric</th><th>baseline mean</th><th>mean</th><th>difference ± 95 %</th>
<th>difference [%]</th><th class=l>verdict</th></tr>{diff_rows}</table>
<h2 id="figures">Overlays</h2>{figures}
<h2 id="points">Points</h2>{"".join(tables)}
<p>Per-point numbers of every series: <a href="points.csv">points.csv</a>.</p>
</body></html>
"""
