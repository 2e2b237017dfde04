"""Every CSV column cachelab writes, with its unit and meaning: the header of ``summary.csv``
(one place for the runner, the report and the spec check) and the catalogue of the report's and
`cachelab compare`'s CSVs (``CATALOGUE``; ``docs/columns.md`` is generated from it with
``python -m cachelab.columns``, and a test keeps the two equal).

Names are snake_case with the unit as their suffix (``_ms``, ``_ops_per_s``, ``_cores``,
``_frac``, ``_pct``); a per-point statistic adds ``_mean`` or ``_ci95`` after the name of the
measure it is taken over, in that measure's unit. A spec's ``report.x`` and ``report.series``
name columns of the summary header, so the spec is checked against it before anything runs
(``cachelab.spec``); this module imports nothing of cachelab.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

BASE_COLUMNS = ["point", "repetition"]
CONFIG_COLUMNS = ["total_clients", "workers", "middlewares", "servers", "think_time_ms"]
METRIC_COLUMNS = [
    "throughput_ops_per_s",
    "get_ops_per_s",
    "set_ops_per_s",
    "response_time_ms",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "hits",
    "misses",
    "miss_ratio",
    "errors",
    "mw_throughput_ops_per_s",
    "mw_response_time_ms",
    "mw_queue_time_ms",
    "mw_staging_time_ms",
    "mw_publish_wait_ms",
    "mw_service_time_ms",
    "mw_queue_length",
    "cpu_loadgen_cores",
    "cpu_middleware_cores",
    "cpu_server_cores",
    "cpu_server_max_cores",
    "cpu_toxiproxy_cores",
    # achieved RTT of each emulated link (spec `network`): p50 of its calibration round trips,
    # averaged over the link's proxies
    "rtt_client_mw_p50_ms",
    "rtt_mw_server_p50_ms",
    "rtt_client_server_p50_ms",
    "server_requests_max_over_mean",
    "hot_key_share",
    "offered_ops_per_s",  # open loop: workload.rate_ops, requests/s offered in total
    "achieved_frac",  # open loop: throughput_ops_per_s / offered_ops_per_s
    "rate_verdict",  # open loop: ok, loadgen-bound or system-saturated (achieved < 95 %)
    "fault",  # the run's first fault: "<action> <target>"
    "fault_detect_s",  # seconds from its start to the first second with errors or a jump
    "fault_recover_s",  # seconds from its end until throughput holds >= 90 % of before
    # p50/p90/p99 of the middleware's queue and service times and of the rest (client minus
    # middleware response time at that percentile), over the measured seconds (cachelab.tail)
    "tail_queue_p50_ms",
    "tail_queue_p90_ms",
    "tail_queue_p99_ms",
    "tail_service_p50_ms",
    "tail_service_p90_ms",
    "tail_service_p99_ms",
    "tail_rest_p50_ms",
    "tail_rest_p90_ms",
    "tail_rest_p99_ms",
    "status",
    "bandwidth",
    "network",
    "monitor",
    "command_line",
]


# summary.csv columns that hold text or counts, not measures averaged over repetitions
TEXT_COLUMNS = ("hits", "misses", "status", "bandwidth", "network", "monitor", "command_line")


def summary_columns(axes: Sequence[str]) -> list[str]:
    """The summary.csv header for a spec with these sweep axes."""
    extra = [a for a in axes if a not in BASE_COLUMNS + CONFIG_COLUMNS + METRIC_COLUMNS]
    return BASE_COLUMNS + extra + CONFIG_COLUMNS + METRIC_COLUMNS


def slug(name: str) -> str:
    """A stage, process or op name as part of a column name: `host CPU` -> `host_cpu`,
    `loadgen-0` -> `loadgen_0`, `client GET` -> `client_get`."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def util_column(stage: str) -> str:
    """A station's utilisation (busy fraction of its servers) in points.csv."""
    return f"util_{slug(stage)}_frac"


def delay_column(stage: str) -> str:
    """A delay stage's time per request in points.csv (a delay has no utilisation)."""
    return f"delay_{slug(stage)}_ms"


def cpu_column(process: str) -> str:
    """A process's CPU seconds per second (cores) in points.csv."""
    return f"cpu_{slug(process)}_cores"


def rt_column(op: str) -> str:
    """The mean response time of one op type in points.csv."""
    return f"rt_{slug(op)}_ms"


# --- the catalogue -----------------------------------------------------------------------------

SUMMARY, POINTS, MODELS, BOTTLENECKS = (
    "summary.csv",
    "report/points.csv",
    "report/models.csv",
    "report/bottlenecks.csv",
)
FACTORIAL = "report/factorial.csv"
COMPARE_POINTS, DIFFERENCES = "compare points.csv", "compare differences.csv"
PER_POINT = (POINTS, MODELS, BOTTLENECKS, COMPARE_POINTS)


@dataclass(frozen=True)
class Column:
    """One column (or a family: ``{axis}``, ``{metric}``, ``{stage}``, ``{process}``, ``{op}``
    stand for a part of the name), its unit and meaning, and the files that have it."""

    name: str
    unit: str
    meaning: str
    files: tuple[str, ...]


_SUMMARY_MEANINGS: dict[str, tuple[str, str]] = {
    "point": ("index", "the point's index in the sweep (0, 1, ...)"),
    "repetition": ("index", "the repetition of the point (0, 1, ...)"),
    "total_clients": ("clients", "closed-loop connections over all loadgens (N)"),
    "workers": ("threads", "worker threads per middleware"),
    "middlewares": ("processes", "middlewares"),
    "servers": ("processes", "backend servers"),
    "think_time_ms": ("ms", "configured think time per request (Z)"),
    "throughput_ops_per_s": ("ops/s", "client throughput over the measured seconds, summed"),
    "get_ops_per_s": ("ops/s", "client GET throughput"),
    "set_ops_per_s": ("ops/s", "client SET throughput"),
    "response_time_ms": ("ms", "client response time, request-weighted mean over instances"),
    "p50_ms": ("ms", "median client response time (a point's: of the merged histograms)"),
    "p90_ms": ("ms", "90th percentile of the client response time (likewise)"),
    "p99_ms": ("ms", "99th percentile of the client response time (likewise)"),
    "hits": ("requests", "cache hits over the whole run"),
    "misses": ("requests", "cache misses over the whole run"),
    "miss_ratio": ("fraction", "misses / (hits + misses)"),
    "errors": ("requests", "connection errors and error replies"),
    "mw_throughput_ops_per_s": ("ops/s", "middleware throughput, summed over middlewares"),
    "mw_response_time_ms": ("ms", "middleware response time (received to replied)"),
    "mw_queue_time_ms": ("ms", "middleware queue time (decoded to dequeued by a worker)"),
    "mw_staging_time_ms": ("ms", "part of the queue time before the net thread published"),
    "mw_publish_wait_ms": ("ms", "part of the queue time after publishing"),
    "mw_service_time_ms": ("ms", "middleware service time (sent to the backends to answered)"),
    "mw_queue_length": ("requests", "mean middleware queue length, summed over middlewares"),
    "cpu_loadgen_cores": ("cores", "CPU seconds per second of the loadgens"),
    "cpu_middleware_cores": ("cores", "CPU seconds per second of the middlewares"),
    "cpu_server_cores": ("cores", "CPU seconds per second of the backend servers"),
    "cpu_server_max_cores": ("cores", "CPU seconds per second of the busiest server alone"),
    "cpu_toxiproxy_cores": (
        "cores",
        "CPU seconds per second of the latency emulator (toxiproxy-server; spec `network`)",
    ),
    **{
        f"rtt_{link}_p50_ms": (
            "ms",
            f"achieved RTT {words} (spec `network`): p50 of the calibration round trips through "
            "its proxies, mean over the proxies",
        )
        for link, words in (
            ("client_mw", "loadgens <-> middleware"),
            ("mw_server", "middleware <-> servers"),
            ("client_server", "loadgens <-> servers"),
        )
    },
    "server_requests_max_over_mean": (
        "ratio",
        "requests the middlewares sent to the busiest server over the mean server's (1 = equal)",
    ),
    "hot_key_share": ("fraction", "the most requested key's share of all keys requested"),
    "offered_ops_per_s": ("ops/s", "open loop: the total offered rate (workload.rate_ops)"),
    "achieved_frac": ("fraction", "open loop: throughput_ops_per_s / offered_ops_per_s"),
    "rate_verdict": (
        "text",
        "open loop: ok, or below 95 % of the offered rate loadgen-bound (its threads busy or "
        "waiting for a CPU) or system-saturated",
    ),
    "fault": ("text", "the run's first fault, '<action> <target>' (faults.json has all)"),
    "fault_detect_s": ("s", "from the fault's start to the first second with an error or jump"),
    "fault_recover_s": ("s", "from the fault's end until throughput holds >= 90 % of before"),
    **{
        f"tail_{stage}_p{q}_ms": (
            "ms",
            f"p{q} of the {what} over the measured seconds (cachelab.tail)",
        )
        for stage, what in (
            ("queue", "middleware's queue time"),
            ("service", "middleware's service time (its backend round trip)"),
            ("rest", "client's response time minus the middleware's, percentile by percentile"),
        )
        for q in (50, 90, 99)
    },
    "status": ("text", "ok, partial (cut short: measures empty) or failed"),
    "bandwidth": ("JSON", "the bandwidth profile the run was shaped with"),
    "network": ("JSON", "configured RTT per emulated link, ms, and the links outside ±10 %"),
    "monitor": ("JSON", "the monitor settings of the run"),
    "command_line": ("text", "the loadgen command line"),
}
_ID = ("point", "{axis}", "total_clients")
PERCENTILES = ("p50_ms", "p90_ms", "p99_ms")


def _catalogue() -> list[Column]:
    columns = [
        Column(name, unit, meaning, (SUMMARY,))
        for name, (unit, meaning) in _SUMMARY_MEANINGS.items()
    ]
    columns.append(
        Column(
            "{axis}", "as in the spec", "a swept spec field (its value at the point)", (SUMMARY,)
        )
    )
    shared = {*_ID, *CONFIG_COLUMNS}
    columns = [replace(c, files=c.files + PER_POINT) if c.name in shared else c for c in columns]
    columns = [
        replace(c, files=(*c.files, POINTS, COMPARE_POINTS)) if c.name in PERCENTILES else c
        for c in columns
    ]
    point_only = [
        ("repetitions", "count", "repetitions the point's numbers are taken over (status ok)"),
        ("{metric}_mean", "the measure's", "mean over the point's usable repetitions"),
        ("{metric}_ci95", "the measure's", "half-width of the 95 % Student-t interval of the mean"),
        ("percentiles_from", "text", "merged histograms, or the weighted mean of the reps'"),
        ("throughput_window_std_ops_per_s", "ops/s", "seeds' SD of the 1 s windows (ASL 2017)"),
        ("response_time_window_std_ms", "ms", "seeds' SD of the 1 s windows' response time"),
        ("label", "text", "the point's line (series) in the figures"),
        ("law_response_time_ms", "ms", "R = N/X - Z per repetition, mean"),
        ("law_throughput_ops_per_s", "ops/s", "X = N/(R + Z) per repetition, mean"),
        ("law_deviation_pct", "%", "(R - N/X + Z) / (N/X - Z) per repetition, mean"),
        ("law_deviation_worst_pct", "%", "the repetition's deviation farthest from 0"),
        ("law_holds", "bool", "every repetition within the tolerance (10 %)"),
        ("z_client_ms", "ms", "measured think time N/X - R per repetition, mean"),
        ("z_client_ms_ci95", "ms", "half-width of its 95 % interval"),
        ("z_mw_ms", "ms", "think time behind the middleware N/X_mw - R_mw, mean"),
        ("z_mw_ms_ci95", "ms", "half-width of its 95 % interval"),
        ("cv_pct", "%", "coefficient of variation of the repetitions' throughput"),
        ("client_mw_pct", "%", "(middleware - client) / client throughput"),
        ("flags", "text", "why the point should not be taken at face value"),
        ("bottleneck", "text", "the busiest station of the model"),
        ("delay_{stage}_ms", "ms", "a delay stage's time per request (clients+network: R - R_mw)"),
        ("util_{stage}_frac", "fraction", "a stage's utilisation (busy share of its servers)"),
        ("cpu_{process}_cores", "cores", "a process's CPU seconds per second"),
        ("rt_{op}_ms", "ms", "response time of one op type, per rep then mean"),
        ("mw_queue_service_ms", "ms", "middleware queue + service time"),
        ("mva_throughput_ops_per_s", "ops/s", "MVA calibrated at the point (in sample)"),
        ("mva_response_time_ms", "ms", "MVA calibrated at the point (in sample)"),
        ("bound_throughput_ops_per_s", "ops/s", "asymptotic throughput bound at the point's N"),
        ("bound_response_time_ms", "ms", "asymptotic response-time bound at the point's N"),
        ("oos_throughput_ops_per_s", "ops/s", "MVA calibrated at the line's lowest load"),
        ("oos_response_time_ms", "ms", "MVA calibrated at the line's lowest load"),
        ("mm1_queue_time_ms", "ms", "M/M/1 queue time"),
        ("mm1_queue_length", "requests", "M/M/1 queue length"),
        ("mm1_mw_response_time_ms", "ms", "M/M/1 queue + service time"),
        ("mmm_queue_time_ms", "ms", "M/M/m queue time"),
        ("mmm_queue_length", "requests", "M/M/m queue length"),
        ("mmm_mw_response_time_ms", "ms", "M/M/m queue + service time"),
        ("{model}_error_pct", "%", "(predicted - measured) / measured of the model column"),
    ]
    columns += [Column(n, u, m, (POINTS, COMPARE_POINTS)) for n, u, m in point_only]
    columns += [
        Column("model", "text", "MVA, MVA out of sample, bounds, M/M/1, M/M/m, wake-up", (MODELS,)),
        Column(
            "metric",
            "text",
            "the measure predicted or compared (its name carries its unit)",
            (MODELS, DIFFERENCES),
        ),
        Column("calibrated_at", "index", "the point the model was calibrated at", (MODELS,)),
        Column("measured", "the metric's", "the measured value (mean over repetitions)", (MODELS,)),
        Column("predicted", "the metric's", "the model's value", (MODELS,)),
        Column("error_pct", "%", "(predicted - measured) / measured", (MODELS,)),
        Column("share_of_rt_frac", "fraction", "a wait's measured share of the RT", (MODELS,)),
        Column("stage", "text", "a stage of the operational analysis", (BOTTLENECKS,)),
        Column("bottleneck", "bool", "true for the point's bottleneck stage", (BOTTLENECKS,)),
        Column("kind", "text", "queue (a station), work, delay or cpu (a process)", (BOTTLENECKS,)),
        Column("demand_ms", "ms", "the stage's time (demand) per request", (BOTTLENECKS,)),
        Column("servers", "servers", "the stage's servers (clients for a delay)", (BOTTLENECKS,)),
        Column(
            "utilisation_frac",
            "fraction",
            "busy share of its servers; a process's CPU over the host's cores; none for a delay",
            (BOTTLENECKS,),
        ),
        Column(
            "cpu_cores", "cores", "a process's CPU seconds per second (kind cpu)", (BOTTLENECKS,)
        ),
        Column(
            "response",
            "text",
            "the summary.csv measure analysed (throughput_ops_per_s, response_time_ms, "
            "1/response_time_ms), as the report's 2^k r tables",
            (FACTORIAL,),
        ),
        Column(
            "term",
            "text",
            "I (the mean), a factor (a swept field), factors joined by · (their interaction), "
            "or error",
            (FACTORIAL,),
        ),
        Column(
            "effect",
            "the response's",
            "q: half the response's change from the term's level -1 to +1 (I: the mean)",
            (FACTORIAL,),
        ),
        Column(
            "effect_ci_low", "the response's", "lower end of the effect's interval", (FACTORIAL,)
        ),
        Column(
            "effect_ci_high", "the response's", "upper end of the effect's interval", (FACTORIAL,)
        ),
        Column(
            "ss",
            "the response's, squared",
            "the term's sum of squares (I: SS0; error: SSE)",
            (FACTORIAL,),
        ),
        Column("variation_pct", "%", "the term's share of the variation SST", (FACTORIAL,)),
        Column("significant", "bool", "the effect's interval excludes 0", (FACTORIAL,)),
        Column(
            "series",
            "text",
            "the folder label and line of a compared point",
            (COMPARE_POINTS, DIFFERENCES),
        ),
        Column("baseline", "text", "the first folder's series it is set against", (DIFFERENCES,)),
        Column("x", "as the x column", "the x value both points share", (DIFFERENCES,)),
        Column("baseline_mean", "the metric's", "the baseline's mean", (DIFFERENCES,)),
        Column("mean", "the metric's", "this series' mean", (DIFFERENCES,)),
        Column("difference", "the metric's", "mean minus baseline mean", (DIFFERENCES,)),
        Column(
            "difference_ci95",
            "the metric's",
            "half-width of the Welch 95 % interval",
            (DIFFERENCES,),
        ),
        Column("difference_pct", "%", "difference / baseline mean", (DIFFERENCES,)),
        Column(
            "verdict",
            "text",
            "beyond noise (interval excludes 0), within noise, no interval",
            (DIFFERENCES,),
        ),
    ]
    return columns


CATALOGUE: list[Column] = _catalogue()

_PLACEHOLDERS = {
    "{axis}": r"[a-z_]+(?:\.[a-z_]+)+",
    "{metric}": "(?:" + "|".join(re.escape(m) for m in METRIC_COLUMNS) + ")",
    "{stage}": "[a-z0-9_]+",
    "{process}": "[a-z0-9_]+",
    "{op}": "[a-z0-9_]+",
    "{model}": "(?:mva|oos|bound|mm1|mmm)_[a-z0-9_]+",
}


def _pattern(name: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[a-z]+\})", name)
    return re.compile("".join(_PLACEHOLDERS.get(p, re.escape(p)) for p in parts) + "$")


_COMPILED = [(c, _pattern(c.name)) for c in CATALOGUE]


def describe(column: str, file: str) -> Column | None:
    """The catalogue entry of a column of `file` (None: the column is not documented)."""
    for entry, pattern in _COMPILED:
        if file in entry.files and pattern.match(column):
            return entry
    return None


def markdown() -> str:
    """docs/columns.md: the catalogue as tables, one per file."""
    files = [SUMMARY, POINTS, MODELS, BOTTLENECKS, FACTORIAL, COMPARE_POINTS, DIFFERENCES]
    lines = [
        "# CSV columns",
        "",
        "Generated from `ops/cachelab/columns.py` by `python -m cachelab.columns`; do not edit.",
        "",
        "Names are snake_case with the unit as their suffix. A per-point statistic appends",
        "`_mean` (the mean over the point's usable repetitions) or `_ci95` (the half-width of",
        "its 95 % Student-t interval) to the measure's name and keeps its unit. `{axis}` is a",
        "swept spec field, `{metric}` a measure of summary.csv, `{stage}`, `{process}` and",
        "`{op}` a stage, process or op type (lower case, `_` for other characters).",
    ]
    for file in files:
        lines += ["", f"## {file}", "", "| column | unit | meaning |", "|---|---|---|"]
        lines += [f"| `{c.name}` | {c.unit} | {c.meaning} |" for c in CATALOGUE if file in c.files]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
