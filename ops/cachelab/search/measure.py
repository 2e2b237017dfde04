"""A search step measured by a target's executor: one run of the spec at the step's load.

`RunnerSteps` turns a step into a `Point` (the search's spec with the load's field set), has the
experiment executor (cachelab.local.runner.LocalRunner) run it into raw/p<step>-r<attempt>, and
reads it back through cachelab.results into a `Measurement`: the summary row's numbers and, from
the loadgens' merged HDR histograms, p99.9 and the SLO percentile's 95 % interval. A Kubernetes
run's middleware throughput is left out (its counters span the whole Job).
"""

from __future__ import annotations

import math
from typing import Any

from cachelab.columns import (
    CPU_LOADGEN_CORES,
    MW_THROUGHPUT_OPS_PER_S,
    OFFERED_OPS_PER_S,
    P50_MS,
    P90_MS,
    P99_MS,
    RESPONSE_TIME_MS,
    THROUGHPUT_OPS_PER_S,
    TOTAL_CLIENTS,
)
from cachelab.experiment import Executor, Reporter
from cachelab.results import ResultsDir, ResultsError
from cachelab.results.hdr import merge_histograms, percentiles_ms
from cachelab.results.layout import RunDir
from cachelab.results.run import RunData, read_run
from cachelab.search.steps import Measurement
from cachelab.slo import Slo, percentile_interval
from cachelab.spec import Point, Spec
from cachelab.summary import row_of

P99_9 = 99.9


def _number(row: dict[str, Any], column: str) -> float:
    value = row.get(column)
    return float(value) if isinstance(value, int | float) else math.nan


def measurement_of(data: RunData, slo: Slo) -> Measurement:
    """A step's numbers from one run read through the results package."""
    row = row_of(data)
    offered = _number(row, OFFERED_OPS_PER_S)
    m = Measurement(
        run=data.run.path.name,
        status=data.status,
        offered_ops_per_s=offered,
        total_clients=int(row[TOTAL_CLIENTS]),
        throughput_ops_per_s=_number(row, THROUGHPUT_OPS_PER_S),
        mw_throughput_ops_per_s=_number(row, MW_THROUGHPUT_OPS_PER_S),
        response_time_ms=_number(row, RESPONSE_TIME_MS),
        p50_ms=_number(row, P50_MS),
        p90_ms=_number(row, P90_MS),
        p99_ms=_number(row, P99_MS),
        rate_verdict=str(row.get("rate_verdict") or ""),
        cpu_loadgen_cores=_number(row, CPU_LOADGEN_CORES),
    )
    if data.record.extra.get("target") == "k8s":
        # the middleware's counters of a Kubernetes run span the whole Job (scraped before and
        # after it), not the measured seconds: no client-vs-middleware check of the step
        m.mw_throughput_ops_per_s = math.nan
    merged = merge_histograms(c.histogram for c in data.clients)
    if merged is not None and merged.get_total_count() > 0:
        m.requests = int(merged.get_total_count())
        m.p99_9_ms = percentiles_ms(merged, [P99_9])[P99_9]
        if slo.percentile is not None:
            estimate = percentile_interval(merged, slo.percentile)
            m.slo_low_ms, m.slo_high_ms = estimate.low_ms, estimate.high_ms
    return m


class RunnerSteps:
    """A `StepExecutor` over an experiment executor (the local runner). Main thread only."""

    def __init__(
        self,
        spec: Spec,
        axis: str,
        slo: Slo,
        results: ResultsDir,
        executor: Executor,
        reporter: Reporter,
        steps_estimate: int,
    ) -> None:
        self.spec = spec
        self.axis = axis
        self.slo = slo
        self.results = results
        self.executor = executor
        self.reporter = reporter
        self.steps_estimate = steps_estimate
        self._number = 0

    def point(self, step: int, load: float) -> Point:
        value: float | int = int(load) if self.axis != "workload.rate_ops" else load
        return Point(step, {self.axis: value}, self.spec.with_values({self.axis: value}))

    def measure(self, step: int, attempt: int, load: float) -> Measurement:
        point = self.point(step, load)
        self._number += 1
        total = max(self.steps_estimate, self._number)
        self.reporter.start_run(self._number, total, point, attempt)
        record = self.executor.run_one(point, attempt)
        run = RunDir(step, attempt, self.results.raw_dir / f"p{step}-r{attempt}")
        try:
            m = measurement_of(read_run(run), self.slo)
        except (ResultsError, KeyError, ValueError) as error:
            self.reporter.note(f"p{step}-r{attempt}: nothing to read back ({error})")
            m = Measurement(
                run.path.name,
                record.status if record.status != "ok" else "failed",
                math.nan,
                point.spec.topology.total_clients,
            )
        self.reporter.finish_run(record, point, None)
        return m

    def close(self) -> None:
        self.executor.close()
