"""The analysis section of a report, computed from data: per point the operational analysis
(stage utilisations, bottleneck), the calibrated models beside the measurement, noise flags,
CPU per process, response time per op type, measured think time and the seeds' maximum
throughput table. `report.figures` draws and `report.render` renders; this module only computes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cachelab.analysis import models as model_lib
from cachelab.analysis.intervals import mean_interval
from cachelab.analysis.links import SOURCE_WORDS
from cachelab.analysis.operational import (
    OperationalAnalysis,
    PointMeasurement,
    analyse,
)
from cachelab.analysis.perpoint import analyse_point, measurement, server_threads_of
from cachelab.analysis.pointmeans import PointMeans
from cachelab.analysis.prediction import CurvePrediction, predict_curve, seed_machines
from cachelab.columns import (
    BOUND_RESPONSE_TIME_MS,
    BOUND_THROUGHPUT_OPS_PER_S,
    CLIENT_MW_PCT,
    CV_PCT,
    MEAN_SUFFIX,
    MM1_MW_RESPONSE_TIME_MS,
    MM1_QUEUE_LENGTH,
    MM1_QUEUE_TIME_MS,
    MMM_MW_RESPONSE_TIME_MS,
    MMM_QUEUE_LENGTH,
    MMM_QUEUE_TIME_MS,
    MVA_RESPONSE_TIME_MS,
    MVA_THROUGHPUT_OPS_PER_S,
    MW_QUEUE_SERVICE_MS,
    MW_RESPONSE_TIME_MS,
    RESPONSE_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
    cpu_column,
    delay_column,
    mean_column,
    rt_column,
    util_column,
)
from cachelab.report import plots
from cachelab.results.experiment import Experiment
from cachelab.results.noise import (
    coefficient_of_variation_pct,
    point_flags,
    relative_difference_pct,
)

MODELS_COLUMNS = [
    "point",
    "model",
    "metric",
    "measured",
    "predicted",
    "error_pct",
    "calibrated_at",
    "share_of_rt_frac",
]
WAIT_METRICS = ("queue_time_ms", "cpu_wait_ms", "wait_ms")
BOTTLENECK_COLUMNS = [
    "point",
    "stage",
    "kind",
    "demand_ms",
    "servers",
    "utilisation_frac",
    "cpu_cores",
    "bottleneck",
]
STATION_ORDER = ("net thread", "worker pool", "host CPU")


@dataclass
class AnalysisSection:
    """Everything the analysis part of the report shows."""

    analyses: dict[int, OperationalAnalysis] = field(default_factory=dict)
    model_rows: list[model_lib.ModelRow] = field(default_factory=list)
    sentences: dict[str, str] = field(default_factory=dict)
    stages: list[str] = field(default_factory=list)
    processes: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    curves: dict[str, tuple[list[float], list[float], list[float]]] = field(default_factory=dict)
    process_cores: dict[tuple[int, str], float] = field(default_factory=dict)
    # per point, its mean measurement and the model calibrated on it (None: no model)
    means: dict[int, tuple[PointMeasurement, OperationalAnalysis]] = field(default_factory=dict)
    bounds: dict[str, model_lib.LineBounds] = field(default_factory=dict)
    calibrated_at: dict[str, int] = field(default_factory=dict)
    oos_models: dict[str, model_lib.ClosedModel] = field(default_factory=dict)
    repetitions: dict[int, list[PointMeasurement]] = field(default_factory=dict)
    # per line whose spec sets RTTs: the curve predicted from them and the lowest load's demands
    predictions: dict[str, CurvePrediction] = field(default_factory=dict)

    def models_frame(self) -> pd.DataFrame:
        """models.csv: a wait's row carries its measured share of the point's response time;
        `calibrated_at` is the point whose demands the model took."""
        rt = {
            r.point: r.measured
            for r in self.model_rows
            if r.metric == RESPONSE_TIME_MS and math.isfinite(r.measured)
        }
        return pd.DataFrame(
            [
                [
                    r.point,
                    r.model,
                    r.metric,
                    r.measured,
                    r.predicted,
                    r.error_pct,
                    r.point if r.calibrated_at is None else r.calibrated_at,
                    r.measured / rt[r.point]
                    if r.metric in WAIT_METRICS and rt.get(r.point)
                    else math.nan,
                ]
                for r in self.model_rows
            ],
            columns=MODELS_COLUMNS,
        )

    def bottlenecks_frame(self) -> pd.DataFrame:
        """One row per point and stage. A delay has no utilisation (empty); a process's row
        (kind cpu) has its CPU in cores and, as its utilisation, that CPU over all the host's
        cores."""
        rows = []
        for point, analysis in sorted(self.analyses.items()):
            for stage in analysis.stages:
                rows.append(
                    [
                        point,
                        stage.name,
                        stage.kind,
                        stage.demand_ms,
                        stage.servers,
                        math.nan if stage.kind == "delay" else stage.utilisation,
                        self.process_cores.get((point, stage.name), math.nan),
                        stage.name == analysis.bottleneck,
                    ]
                )
        return pd.DataFrame(rows, columns=BOTTLENECK_COLUMNS)


def add_noise_flags(points: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """`cv_pct` (throughput over repetitions), `client_mw_pct` and `flags` per point."""
    cvs, diffs, flags = [], [], []
    for _, row in points.iterrows():
        reps = summary[summary["point"] == row["point"]][THROUGHPUT_OPS_PER_S]
        cv = coefficient_of_variation_pct(pd.to_numeric(reps, errors="coerce").tolist())
        means = PointMeans.of(row)
        diff = relative_difference_pct(means.throughput_ops_per_s, means.mw_throughput_ops_per_s)
        cvs.append(cv)
        diffs.append(diff)
        flags.append("; ".join(point_flags(cv, diff)))
    return points.assign(**{CV_PCT: cvs, CLIENT_MW_PCT: diffs}, flags=flags)


def _op_columns(experiment: Experiment, point: int) -> dict[str, float]:
    """Mean response time per op type of a point: per repetition the request-weighted mean over
    its instances (the clients' GET/SET, the middleware's get/multiget/set), then the mean over
    the repetitions, as for every other number of the point."""
    per_run: dict[str, list[float]] = {}
    for run in experiment.runs_of(point):
        sums: dict[str, list[float]] = {}
        for client in run.clients:
            for name, window in (("client GET", client.gets), ("client SET", client.sets)):
                if window.count:
                    entry = sums.setdefault(name, [0.0, 0.0])
                    entry[0] += window.latency_sum_ms
                    entry[1] += window.count
        for mw in run.middlewares:
            for op, stats in mw.by_op.items():
                entry = sums.setdefault(f"MW {op}", [0.0, 0.0])
                entry[0] += stats.response_time_ms * stats.count
                entry[1] += stats.count
        for name, (total_ms, count) in sums.items():
            if count > 0:
                per_run.setdefault(name, []).append(total_ms / count)
    return {name: mean_interval(values).mean for name, values in per_run.items()}


def analyse_points(
    points: pd.DataFrame,
    summary: pd.DataFrame,
    experiment: Experiment,
    x: str,
    series: Sequence[str],
) -> tuple[pd.DataFrame, AnalysisSection]:
    """Operational analysis and models per point; returns the points with their columns added
    (`util_<stage>_frac`, `delay_<stage>_ms`, `cpu_<process>_cores`, `bottleneck`, `mva_*`,
    `mm1_*`, `mmm_*`, `rt_<op>_ms`, think times) and the section."""
    section = AnalysisSection()
    host = experiment.metadata.get("host") or {}
    host_cores = int(host.get("cpu_count") or 0) if isinstance(host, dict) else 0
    extra: list[dict[str, Any]] = []
    for _, row in points.iterrows():
        point = int(row["point"])
        runs = experiment.runs_of(point)
        threads = server_threads_of(runs[0].record.spec) if runs else 4
        m = measurement(row, runs, host_cores, threads, suffix=MEAN_SUFFIX)
        analysis, rows, reps = analyse_point(point, summary, experiment, host_cores)
        section.analyses[point] = analysis
        section.means[point] = (m, analyse(m))
        section.repetitions[point] = reps
        section.model_rows += rows
        columns: dict[str, Any] = {"bottleneck": analysis.bottleneck or ""}
        for stage in analysis.stages:
            if stage.kind == "cpu":
                name = stage.name.removeprefix("cpu ")
                columns[cpu_column(name)] = m.process_cpu.get(name, ("", math.nan))[1]
                section.process_cores[(point, stage.name)] = columns[cpu_column(name)]
                if name not in section.processes:
                    section.processes.append(name)
            elif stage.kind == "delay":
                columns[delay_column(stage.name)] = stage.demand_ms
            else:
                columns[util_column(stage.name)] = stage.utilisation
                if stage.kind in ("queue", "work") and stage.name not in section.stages:
                    section.stages.append(stage.name)
        for r in rows:
            key = {
                ("MVA", THROUGHPUT_OPS_PER_S): MVA_THROUGHPUT_OPS_PER_S,
                ("MVA", RESPONSE_TIME_MS): MVA_RESPONSE_TIME_MS,
                ("M/M/1", MW_RESPONSE_TIME_MS): MM1_MW_RESPONSE_TIME_MS,
                ("M/M/m", MW_RESPONSE_TIME_MS): MMM_MW_RESPONSE_TIME_MS,
                ("M/M/1", "queue_time_ms"): MM1_QUEUE_TIME_MS,
                ("M/M/m", "queue_time_ms"): MMM_QUEUE_TIME_MS,
                ("M/M/1", "queue_length"): MM1_QUEUE_LENGTH,
                ("M/M/m", "queue_length"): MMM_QUEUE_LENGTH,
            }.get((r.model, r.metric))
            if key:
                columns[key] = r.predicted
                columns[f"{key}_error_pct"] = r.error_pct
        if m.has_middleware:
            columns[MW_QUEUE_SERVICE_MS] = m.mw_queue_time_ms + m.mw_service_time_ms
        ops = _op_columns(experiment, point)
        for name, value in ops.items():
            if name not in section.ops:
                section.ops.append(name)
            columns[rt_column(name)] = value
        extra.append(columns)
    enriched = pd.concat([points.reset_index(drop=True), pd.DataFrame(extra)], axis=1)
    enriched = _line_models(enriched, section, series)
    section.stages.sort(key=lambda s: (STATION_ORDER.index(s) if s in STATION_ORDER else 9, s))
    labels = {
        int(r["point"]): f"point {int(r['point'])} ({r['label'] + ', ' if r['label'] else ''}"
        f"{plots.short_name(x)}={plots.format_value(r[x])})"
        for _, r in enriched.iterrows()
    }
    section.sentences = model_lib.explain(section.model_rows, section.analyses, labels)
    section.curves = _curves(enriched, section, x, series)
    section.predictions = _predictions(enriched, section, x, series)
    return enriched, section


def _line_models(
    points: pd.DataFrame, section: AnalysisSection, series: Sequence[str]
) -> pd.DataFrame:
    """Per line: the asymptotic bounds over its points, and the MVA calibrated at its lowest
    load predicting every point (out of sample); adds `bound_*` and `oos_*` columns and the
    rows of models.csv."""
    columns: dict[int, dict[str, float]] = {}
    for label, group in plots.iter_series(points, series):
        line = [int(p) for p in group.sort_values(TOTAL_CLIENTS)["point"]]
        found = [(p, *section.means[p]) for p in line if p in section.means]
        models = [(m, model_lib.closed_model(m, a)) for _, m, a in found]
        bounds = model_lib.line_bounds(models)
        if bounds is not None:
            section.bounds[label] = bounds
            for p, m, _ in found:
                columns.setdefault(p, {}).update(
                    {
                        BOUND_THROUGHPUT_OPS_PER_S: bounds.throughput_ops_per_s(m.clients),
                        BOUND_RESPONSE_TIME_MS: bounds.response_time_ms(m.clients),
                    }
                )
                section.model_rows += [
                    model_lib.ModelRow(
                        p,
                        "bounds",
                        THROUGHPUT_OPS_PER_S,
                        m.throughput_ops_per_s,
                        bounds.throughput_ops_per_s(m.clients),
                    ),
                    model_lib.ModelRow(
                        p,
                        "bounds",
                        RESPONSE_TIME_MS,
                        m.response_time_ms,
                        bounds.response_time_ms(m.clients),
                    ),
                ]
        calibrated = next(
            ((p, c) for (p, _, _), (_, c) in zip(found, models, strict=True) if c is not None),
            None,
        )
        if calibrated is None:
            continue
        at, closed = calibrated
        section.calibrated_at[label] = at
        section.oos_models[label] = closed
        # calibrated per repetition of the lowest load (as every model: a repetition's own
        # numbers obey the law, the means of noisy ones need not), predictions averaged
        per_rep = [
            model_lib.out_of_sample_rows(c, at, [(m, a) for _, m, a in found])
            for rep in section.repetitions.get(at, [])
            if (c := model_lib.closed_model(rep, analyse(rep))) is not None
        ]
        rows = _average_rows(per_rep)
        section.model_rows += rows
        for r in rows:
            if r.metric in (THROUGHPUT_OPS_PER_S, RESPONSE_TIME_MS):
                columns.setdefault(r.point, {})[f"oos_{r.metric}"] = r.predicted
                columns[r.point][f"oos_{r.metric}_error_pct"] = r.error_pct
    extra = pd.DataFrame([columns.get(int(p), {}) for p in points["point"]])
    return pd.concat([points.reset_index(drop=True), extra], axis=1)


def _average_rows(per_repetition: list[list[model_lib.ModelRow]]) -> list[model_lib.ModelRow]:
    """Rows of several calibrations of the same model: predictions averaged per point and
    metric (the measured value is the same in each)."""
    found: dict[tuple[int, str], list[model_lib.ModelRow]] = {}
    for rows in per_repetition:
        for r in rows:
            found.setdefault((r.point, r.metric), []).append(r)
    return [
        model_lib.ModelRow(
            rs[0].point,
            rs[0].model,
            rs[0].metric,
            rs[0].measured,
            mean_interval(r.predicted for r in rs).mean,
            rs[0].calibrated_at,
        )
        for rs in found.values()
    ]


def _curves(
    points: pd.DataFrame, section: AnalysisSection, x: str, series: Sequence[str]
) -> dict[str, tuple[list[float], list[float], list[float]]]:
    """Per line, the out-of-sample MVA curve (calibrated at its lowest load) and the line's
    bounds over 1..N_max."""
    if x != TOTAL_CLIENTS:
        return {}
    curves = {}
    for label, group in plots.iter_series(points, series):
        closed, bounds = section.oos_models.get(label), section.bounds.get(label)
        if closed is None or bounds is None:
            continue
        n_max = int(group[x].max())
        ns = [float(n) for n in range(1, n_max + 1)]
        curves[label] = (
            ns,
            closed.throughput_curve(n_max),
            [bounds.throughput_ops_per_s(n) for n in ns],
        )
    return curves


def _predictions(
    points: pd.DataFrame, section: AnalysisSection, x: str, series: Sequence[str]
) -> dict[str, CurvePrediction]:
    """Per line whose spec sets RTTs (network.rtt_ms or a profile): the MVA curve and bounds
    over 1..N_max predicted from those RTTs and the demands of the line's lowest load, with that
    point's own RTTs (achieved, else the spec's) taken out of its demands first, and its host
    CPU station a delay (`without_host_cpu`): the prediction is of the seed's machines, each
    role on its own, not of this machine's shared cores; the out-of-sample curve keeps them."""
    if x != TOTAL_CLIENTS:
        return {}
    found = {}
    for label, group in plots.iter_series(points, series):
        closed, at = section.oos_models.get(label), section.calibrated_at.get(label)
        if closed is None or at is None or at not in section.means:
            continue
        links = section.means[at][0].spec_links
        if not links:
            continue
        own_machines = seed_machines(closed)
        if own_machines is None:
            continue
        found[label] = predict_curve(own_machines, int(group[x].max()), links, calibrated_at=at)
    return found


def prediction_caption(predictions: dict[str, CurvePrediction]) -> str:
    """The caption of the prediction figure: per line the RTTs used and where they came from,
    the RTTs taken out of the calibration, the ceiling and the knee."""
    parts = []
    sources: dict[str, str] = {}  # each source once, then each profile link's section
    for label, p in predictions.items():
        pool = (
            f"{p.workers:g} workers / {p.holding_ms:.3g} ms held per request = "
            f"{1000.0 * p.workers / p.holding_ms:,.0f} ops/s"
            if math.isfinite(p.holding_ms)
            else "no worker pool"
        )
        parts.append(
            f"{label or 'the line'}: calibrated at point {p.calibrated_at} with its RTTs "
            f"({p.calibration_links.describe()}) taken out, then {p.links.describe()} put in; "
            f"ceiling {p.ceiling_ops_per_s:,.0f} ops/s at the {p.bottleneck} ({pool}), knee N* = "
            f"{p.knee_clients:.1f} clients"
        )
        for d in (*p.links.links, *p.calibration_links.links):
            sources.setdefault(d.source, f"{d.source} = {SOURCE_WORDS[d.source]}")
            if d.source == "profile":
                sources.setdefault(f"{d.link} {d.detail}", f"{d.link}: {d.detail}")
    return (
        "Throughput predicted from the links' RTTs: the closed network with the demands "
        "measured at each line's lowest load, the client's RTT a delay on every request (with "
        "the rest of the time outside the middleware), the middleware -> server RTT inside a "
        "worker's holding time (the worker pool's ceiling is workers / (RTT + the server's "
        "service + the worker's CPU)), a shaped link a station whose ceiling is its rate over "
        "the bytes it carried per request, and the host CPU's time at the calibration point a "
        "delay (the seeds ran each role on a machine of its own; the cores this machine shares "
        "among every role and the RTT emulator are in the out-of-sample curve, not in this "
        "one); MVA (dash-dot), the bounds min(N / (D + Z), X_max) "
        "(dotted) and the knee N* = (D + Z) X_max (cross). "
        + "; ".join(parts)
        + ". Where the RTTs come from: "
        + "; ".join(sources.values())
        + "."
    )


def max_throughput_table(points: pd.DataFrame, series: Sequence[str]) -> list[dict[str, Any]]:
    """The seeds' maximum-throughput table: per series, the point of highest client
    throughput with both sides' throughput, RT, queue time and length, service time, clients."""
    rows = []
    for label, group in plots.iter_series(points, series):
        best = group.sort_values(mean_column(THROUGHPUT_OPS_PER_S)).iloc[-1]
        means = PointMeans.of(best)
        rows.append(
            {
                "label": label or "all points",
                "point": means.point,
                "clients": means.clients,
                "throughput": means.throughput_ops_per_s,
                "mw_throughput": means.mw_throughput_ops_per_s,
                "response_time": means.response_time_ms,
                "mw_response_time": means.mw_response_time_ms,
                "queue_time": means.mw_queue_time_ms,
                "queue_length": means.mw_queue_length,
                "service_time": means.mw_service_time_ms,
                "bottleneck": best.get("bottleneck", ""),
                "flags": best.get("flags", ""),
            }
        )
    return rows


def window_samples(experiment: Experiment, points: pd.DataFrame) -> dict[str, list[float]]:
    """Per point, the measured 1 s throughput windows of all its repetitions (box plots)."""
    from cachelab.results.run import window_series

    samples: dict[str, list[float]] = {}
    for _, row in points.iterrows():
        values: list[float] = []
        for run in experiment.runs_of(int(row["point"])):
            values += [c for _, c, _ in window_series([c.run for c in run.clients], run.interval)]
        if values:
            samples[f"p{int(row['point'])} {row['label']}".strip()] = values
    return samples


def trace_of(experiment: Experiment, point: int) -> dict[str, Any] | None:
    """The whole per-second trace of repetition 0 (else the first) of a point: client
    throughput summed over instances, middleware windows placed on the clients' clock."""
    from cachelab.results.run import window_series
    from cachelab.results.trim import MeasuredInterval

    runs = experiment.runs_of(point)
    if not runs:
        return None
    run = runs[0]
    loadgens = [c.run for c in run.clients]
    lasted = max((lg.run_seconds or 0) for lg in loadgens) if loadgens else 0
    whole = MeasuredInterval(0, max(lasted, run.interval.end_s))
    client = window_series(loadgens, whole)
    seconds = [s for s, _, _ in client]
    middleware = None
    if run.middlewares and run.origin_epoch_ms is not None:
        per_second = dict.fromkeys(seconds, 0.0)
        found = False
        for mw in run.middlewares:
            for w in mw.windows:
                if w.op != "all":
                    continue
                middle = w.start_epoch_ms + w.duration_ms / 2.0 - run.origin_epoch_ms
                second = int(np.floor(middle / 1000.0))
                if second in per_second and w.duration_ms > 0:
                    per_second[second] += w.count * 1000.0 / w.duration_ms
                    found = True
        middleware = [per_second[s] for s in seconds] if found else None
    return {
        "run": run.run.path.name,
        "seconds": seconds,
        "client": [c for _, c, _ in client],
        "middleware": middleware,
        "start_s": run.interval.start_s,
        "end_s": run.interval.end_s,
    }


def out_of_sample_table(section: AnalysisSection, points: pd.DataFrame) -> list[dict[str, Any]]:
    """Per point, the out-of-sample predictions beside the in-sample ones: throughput and
    response time (measured, predicted, error), then each wait (measured, predicted, absolute
    and relative error, its measured share of the response time)."""

    def row(point: int, model: str, metric: str) -> model_lib.ModelRow | None:
        return next(
            (
                r
                for r in section.model_rows
                if (r.point, r.model, r.metric) == (point, model, metric)
            ),
            None,
        )

    table = []
    for _, p in points.sort_values(["label", TOTAL_CLIENTS]).iterrows():
        point = int(p["point"])
        found = {
            metric: row(point, model_lib.OUT_OF_SAMPLE, metric)
            for metric in (
                THROUGHPUT_OPS_PER_S,
                RESPONSE_TIME_MS,
                "queue_time_ms",
                "cpu_wait_ms",
            )
        }
        calibration = found[THROUGHPUT_OPS_PER_S]
        if calibration is None:
            continue
        means = PointMeans.of(p)
        rt = means.response_time_ms
        entry: dict[str, Any] = {
            "point": point,
            "label": p["label"],
            "clients": means.clients,
            "calibrated_at": calibration.calibrated_at,
        }
        for metric, r in found.items():
            inside = row(point, "MVA", metric)
            entry[metric] = (
                None
                if r is None
                else {
                    "measured": r.measured,
                    "predicted": r.predicted,
                    "error_pct": r.error_pct,
                    "error_ms": r.predicted - r.measured,
                    "share_pct": 100.0 * r.measured / rt if rt else math.nan,
                    "in_sample_pct": inside.error_pct if inside is not None else math.nan,
                }
            )
        table.append(entry)
    return table
