"""Queueing models of one measured point, each set beside the measurement with its error.

- **MVA, calibrated per point**: a closed network with the point's own measured demands: the
  worker pool as one station of m = WT x MW servers whose demand is a worker's holding time
  (dequeued to written, R_mw - Q), and a delay for everything outside the middleware plus the
  think time (R_client - R_mw + Z). Solved exactly at the point's N, per repetition, then
  averaged over the repetitions; predicted throughput and response time.
- **Asymptotic bounds** from the same demands: X <= 1 / max_k(D_k / m_k), X <= N / (D + Z).
- **M/M/1** (the ASL 2017 §7 model: the pool as one server of rate WT / S) and **M/M/m**
  (m = WT servers of rate 1 / S), fed by the measured per-middleware arrival rate: predicted
  queue time, queue length and middleware response time (queue + service).

`model_rows` gives the rows of `report/models.csv`; `explain` writes one sentence per model
saying where and why it departs from the measurement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cachelab.analysis import queueing
from cachelab.analysis.operational import OperationalAnalysis, PointMeasurement

MVA_TARGET_PCT = 15.0
MODELS = ("MVA", "M/M/1", "M/M/m")


@dataclass(frozen=True)
class ModelRow:
    """One line of models.csv."""

    point: int
    model: str
    metric: str
    measured: float
    predicted: float

    @property
    def error_pct(self) -> float:
        """(predicted - measured) / measured, in percent."""
        if not (math.isfinite(self.measured) and math.isfinite(self.predicted)):
            return math.nan
        if self.measured == 0:
            return math.nan
        return 100.0 * (self.predicted - self.measured) / self.measured


@dataclass(frozen=True)
class ClosedModel:
    """The calibrated closed network of one point."""

    demands_ms: list[float]
    servers: list[int]
    delay_ms: float
    clients: int

    def solve(self, max_clients: int | None = None) -> queueing.MVAResult:
        return queueing.mva(
            [d / 1000.0 for d in self.demands_ms],
            self.delay_ms / 1000.0,
            max_clients or self.clients,
            self.servers,
        )

    def throughput_bound_ops_per_s(self, clients: int) -> float:
        """min(N / (D + Z), 1 / max(D_k / m_k))."""
        total = sum(self.demands_ms)
        per_server = max(d / m for d, m in zip(self.demands_ms, self.servers, strict=True))
        return 1000.0 * min(clients / (total + self.delay_ms), 1.0 / per_server)


def closed_model(m: PointMeasurement, analysis: OperationalAnalysis) -> ClosedModel | None:
    """The point's closed network from its own demands (None without a middleware)."""
    pool = analysis.stage("worker pool")
    if not m.has_middleware or pool is None or pool.demand_ms <= 0:
        return None
    delay = analysis.outside_ms() + m.think_time_ms
    return ClosedModel([pool.demand_ms], [m.workers * m.middlewares], max(0.0, delay), m.clients)


def model_rows(m: PointMeasurement, analysis: OperationalAnalysis) -> list[ModelRow]:
    """MVA, bounds, M/M/1 and M/M/m of one point beside its measurement."""
    rows: list[ModelRow] = []
    closed = closed_model(m, analysis)
    if closed is None:
        return rows
    solved = closed.solve()
    x_pred, r_pred_s = solved.at(m.clients)
    residence_ms = 1000.0 * float(solved.station_response_time_s[m.clients - 1, 0])
    pool_wait_ms = residence_ms - closed.demands_ms[0]
    if abs(pool_wait_ms) < 1e-9:  # no wait for a worker: what is left is rounding
        pool_wait_ms = 0.0
    # the delay holds the outside time and Z; the client's response time excludes only Z
    r_client_pred = 1000.0 * r_pred_s + analysis.outside_ms()
    rows += [
        ModelRow(m.point, "MVA", "throughput_ops_per_s", m.throughput_ops_per_s, x_pred),
        ModelRow(m.point, "MVA", "response_time_ms", m.response_time_ms, r_client_pred),
        ModelRow(m.point, "MVA", "queue_time_ms", m.mw_queue_time_ms, max(0.0, pool_wait_ms)),
        ModelRow(
            m.point,
            "bounds",
            "throughput_ops_per_s",
            m.throughput_ops_per_s,
            closed.throughput_bound_ops_per_s(m.clients),
        ),
    ]
    x_mw = m.mw_throughput_ops_per_s if math.isfinite(m.mw_throughput_ops_per_s) else math.nan
    arrivals = x_mw / m.middlewares
    service_s = m.mw_service_time_ms / 1000.0
    measured = {
        "queue_time_ms": m.mw_queue_time_ms,
        "queue_length": m.mw_queue_length,
        "mw_response_time_ms": m.mw_queue_time_ms + m.mw_service_time_ms,
    }
    for model in ("M/M/1", "M/M/m"):
        predicted = dict.fromkeys(measured, math.nan)
        stable = math.isfinite(arrivals) and arrivals > 0 and arrivals * service_s < m.workers
        if stable and model == "M/M/1":
            q1 = queueing.mm1(arrivals, m.workers / service_s)
            predicted = {
                "queue_time_ms": 1000.0 * q1.mean_waiting_time_s,
                "queue_length": q1.mean_jobs_in_queue,
                "mw_response_time_ms": 1000.0 * q1.mean_response_time_s,
            }
        elif stable:
            qm = queueing.mmm(arrivals, 1.0 / service_s, m.workers)
            predicted = {
                "queue_time_ms": 1000.0 * qm.mean_waiting_time_s,
                "queue_length": qm.mean_jobs_in_queue,
                "mw_response_time_ms": 1000.0 * qm.mean_response_time_s,
            }
        rows += [
            ModelRow(m.point, model, metric, measured[metric], predicted[metric])
            for metric in measured
        ]
    return rows


def _worst(rows: Sequence[ModelRow], model: str, metric: str) -> ModelRow | None:
    found = [
        r for r in rows if r.model == model and r.metric == metric and math.isfinite(r.error_pct)
    ]
    return max(found, key=lambda r: abs(r.error_pct)) if found else None


def explain(
    rows: Sequence[ModelRow],
    analyses: dict[int, OperationalAnalysis],
    labels: dict[int, str],
) -> dict[str, str]:
    """One sentence per model: how close it is and, where it departs most, why."""
    sentences: dict[str, str] = {}
    worst = _worst(rows, "MVA", "throughput_ops_per_s")
    if worst is not None:
        errors = [
            abs(r.error_pct)
            for r in rows
            if r.model == "MVA"
            and r.metric == "throughput_ops_per_s"
            and math.isfinite(r.error_pct)
        ]
        inside = sum(e <= MVA_TARGET_PCT for e in errors)
        analysis = analyses.get(worst.point)
        where = labels.get(worst.point, f"point {worst.point}")
        text = (
            f"Calibrated MVA throughput is within ±{MVA_TARGET_PCT:.0f} % of the measured at "
            f"{inside} of {len(errors)} points; it departs most at {where} "
            f"({worst.predicted:,.0f} predicted against {worst.measured:,.0f} ops/s, "
            f"{worst.error_pct:+.1f} %)"
        )
        if abs(worst.error_pct) <= MVA_TARGET_PCT:
            text += ", where the product-form assumptions (exponential, load-independent service "
            text += "at each station) cost little."
        elif analysis is not None:
            pool = analysis.stage("worker pool")
            pool_u = pool.utilisation if pool else math.nan
            queue = next(
                (
                    r
                    for r in rows
                    if (r.point, r.model, r.metric) == (worst.point, "MVA", "queue_time_ms")
                ),
                None,
            )
            waits = (
                f"it predicts {queue.predicted:.3f} ms of waiting for a worker where "
                f"{queue.measured:.3f} ms was measured"
                if queue is not None
                else "its wait for a worker differs from the measured queue time"
            )
            text += (
                f": {waits}, with the pool {100 * pool_u:.0f} % busy. The bottleneck is the "
                f"{analysis.bottleneck or 'unmeasured stage'}"
                f"{_stage_u(analysis, analysis.bottleneck)}: "
            )
            if analysis.bottleneck == "host CPU":
                text += (
                    "queued requests wait for their worker thread to be scheduled on a busy "
                    "CPU, a station the model does not hold."
                )
            elif worst.error_pct > 0:
                text += "time is lost outside the stations the model holds."
            else:
                text += "the model's queue is longer than the measured one."
        sentences["MVA"] = text
    for model, assumption in (
        ("M/M/1", "one fast server of rate WT/S"),
        ("M/M/m", "WT servers of rate 1/S"),
    ):
        worst = _worst(rows, model, "queue_time_ms")
        if worst is None:
            continue
        analysis = analyses.get(worst.point)
        where = labels.get(worst.point, f"point {worst.point}")
        pool = analysis.stage("worker pool") if analysis else None
        text = (
            f"{model} ({assumption}, Poisson arrivals) predicts a queue time of "
            f"{worst.predicted:.3f} ms against {worst.measured:.3f} ms measured at {where} "
            f"({worst.error_pct:+.0f} %)"
        )
        if pool is not None and pool.utilisation < 0.5 and worst.measured > worst.predicted:
            text += (
                f": the pool is only {100 * pool.utilisation:.0f} % busy, so the measured wait "
                "is not for a worker but for a CPU or a scheduler wake-up (the bottleneck is "
                f"the {analysis.bottleneck if analysis else '?'}), which no open model of the "
                "pool can see."
            )
        elif pool is not None and worst.measured > worst.predicted:
            text += (
                ": it takes the service time S as a worker's busy time, but a worker holds a "
                f"request from dequeued to written (R_MW - Q; the pool is "
                f"{100 * pool.utilisation:.0f} % busy on that count), so the real pool is busier "
                "than the model's and its queue builds earlier."
            )
        elif worst.measured < worst.predicted:
            text += (
                ": the clients are a closed population, so arrivals slow down as the queue grows "
                "and the queue stays shorter than an open Poisson stream would build."
            )
        else:
            text += "."
        sentences[model] = text
    return sentences


def _stage_u(analysis: OperationalAnalysis, name: str | None) -> str:
    stage = analysis.stage(name) if name else None
    return f" ({100 * stage.utilisation:.0f} % busy)" if stage else ""


def combine_rows(per_repetition: Sequence[Sequence[ModelRow]]) -> list[ModelRow]:
    """One point's rows from its repetitions' (each model calibrated and solved per repetition):
    measured and predicted averaged per (model, metric), in the first repetition's order."""
    order: list[tuple[str, str]] = []
    values: dict[tuple[str, str], list[ModelRow]] = {}
    for rows in per_repetition:
        for r in rows:
            key = (r.model, r.metric)
            if key not in values:
                order.append(key)
            values.setdefault(key, []).append(r)
    combined = []
    for key in order:
        found = values[key]
        measured = [r.measured for r in found if math.isfinite(r.measured)]
        predicted = [r.predicted for r in found if math.isfinite(r.predicted)]
        combined.append(
            ModelRow(
                found[0].point,
                key[0],
                key[1],
                sum(measured) / len(measured) if measured else math.nan,
                sum(predicted) / len(predicted) if len(predicted) == len(found) else math.nan,
            )
        )
    return combined
