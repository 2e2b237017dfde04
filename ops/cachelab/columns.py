"""Every CSV column cachelab writes, with its unit and meaning: the header of ``summary.csv``
(one place for the runner, the report and the spec check) and the catalogue of the report's and
`cachelab compare`'s CSVs (``CATALOGUE``; ``docs/columns.md`` is generated from it with
``python -m cachelab.columns``, and a test keeps the two equal).

Names are snake_case with the unit as their suffix (``_ms``, ``_ops_per_s``, ``_cores``,
``_frac``, ``_pct``); a per-point statistic adds ``_mean`` or ``_ci95`` after the name of the
measure it is taken over, in that measure's unit (``mean_column``, ``ci95_column``). Code
names a numeric column by its constant here (``THROUGHPUT_OPS_PER_S``), never by a string of
its own; ``ops/tests/test_columns.py`` parses the sources to keep it so. A spec's ``report.x``
and ``report.series`` name columns of the summary header, so the spec is checked against it
before anything runs (``cachelab.spec``); this module imports nothing of cachelab.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

# --- the names code refers to ------------------------------------------------------------------
# The numeric columns of summary.csv, each written once here; code takes a column's name from these
# (and a per-point statistic's from `mean_column` / `ci95_column`), never as a string of its own
# (ops/tests/test_columns.py checks the sources).
TOTAL_CLIENTS = "total_clients"
THINK_TIME_MS = "think_time_ms"
THROUGHPUT_OPS_PER_S = "throughput_ops_per_s"
GET_OPS_PER_S = "get_ops_per_s"
SET_OPS_PER_S = "set_ops_per_s"
RESPONSE_TIME_MS = "response_time_ms"
P50_MS = "p50_ms"
P90_MS = "p90_ms"
P99_MS = "p99_ms"
HITS = "hits"
MISSES = "misses"
MISS_RATIO = "miss_ratio"
ERRORS = "errors"
MW_THROUGHPUT_OPS_PER_S = "mw_throughput_ops_per_s"
MW_RESPONSE_TIME_MS = "mw_response_time_ms"
MW_QUEUE_TIME_MS = "mw_queue_time_ms"
MW_STAGING_TIME_MS = "mw_staging_time_ms"
MW_PUBLISH_WAIT_MS = "mw_publish_wait_ms"
MW_SERVICE_TIME_MS = "mw_service_time_ms"
MW_QUEUE_LENGTH = "mw_queue_length"
CPU_LOADGEN_CORES = "cpu_loadgen_cores"
CPU_MIDDLEWARE_CORES = "cpu_middleware_cores"
CPU_SERVER_CORES = "cpu_server_cores"
CPU_SERVER_MAX_CORES = "cpu_server_max_cores"
CPU_TOXIPROXY_CORES = "cpu_toxiproxy_cores"
RTT_CLIENT_MW_P50_MS = "rtt_client_mw_p50_ms"
RTT_MW_SERVER_P50_MS = "rtt_mw_server_p50_ms"
RTT_CLIENT_SERVER_P50_MS = "rtt_client_server_p50_ms"
SERVER_REQUESTS_MAX_OVER_MEAN = "server_requests_max_over_mean"
HOT_KEY_SHARE = "hot_key_share"
OFFERED_OPS_PER_S = "offered_ops_per_s"
ACHIEVED_FRAC = "achieved_frac"
FAULT_DETECT_S = "fault_detect_s"
FAULT_RECOVER_S = "fault_recover_s"
TAIL_QUEUE_P50_MS = "tail_queue_p50_ms"
TAIL_QUEUE_P90_MS = "tail_queue_p90_ms"
TAIL_QUEUE_P99_MS = "tail_queue_p99_ms"
TAIL_SERVICE_P50_MS = "tail_service_p50_ms"
TAIL_SERVICE_P90_MS = "tail_service_p90_ms"
TAIL_SERVICE_P99_MS = "tail_service_p99_ms"
TAIL_REST_P50_MS = "tail_rest_p50_ms"
TAIL_REST_P90_MS = "tail_rest_p90_ms"
TAIL_REST_P99_MS = "tail_rest_p99_ms"

# the per-point columns of the report's points.csv that code computes or reads by name
PERCENTILES_FROM = "percentiles_from"
THROUGHPUT_WINDOW_STD_OPS_PER_S = "throughput_window_std_ops_per_s"
RESPONSE_TIME_WINDOW_STD_MS = "response_time_window_std_ms"
LAW_RESPONSE_TIME_MS = "law_response_time_ms"
LAW_THROUGHPUT_OPS_PER_S = "law_throughput_ops_per_s"
LAW_DEVIATION_PCT = "law_deviation_pct"
LAW_DEVIATION_WORST_PCT = "law_deviation_worst_pct"
LAW_HOLDS = "law_holds"
Z_CLIENT_MS = "z_client_ms"
Z_MW_MS = "z_mw_ms"
CV_PCT = "cv_pct"
CLIENT_MW_PCT = "client_mw_pct"
MW_QUEUE_SERVICE_MS = "mw_queue_service_ms"
MVA_THROUGHPUT_OPS_PER_S = "mva_throughput_ops_per_s"
MVA_RESPONSE_TIME_MS = "mva_response_time_ms"
BOUND_THROUGHPUT_OPS_PER_S = "bound_throughput_ops_per_s"
BOUND_RESPONSE_TIME_MS = "bound_response_time_ms"
OOS_THROUGHPUT_OPS_PER_S = "oos_throughput_ops_per_s"
OOS_RESPONSE_TIME_MS = "oos_response_time_ms"
MM1_QUEUE_TIME_MS = "mm1_queue_time_ms"
MM1_QUEUE_LENGTH = "mm1_queue_length"
MM1_MW_RESPONSE_TIME_MS = "mm1_mw_response_time_ms"
MMM_QUEUE_TIME_MS = "mmm_queue_time_ms"
MMM_QUEUE_LENGTH = "mmm_queue_length"
MMM_MW_RESPONSE_TIME_MS = "mmm_mw_response_time_ms"

BASE_COLUMNS = ["point", "repetition"]
CONFIG_COLUMNS = [TOTAL_CLIENTS, "workers", "middlewares", "servers", THINK_TIME_MS]
METRIC_COLUMNS = [
    THROUGHPUT_OPS_PER_S,
    GET_OPS_PER_S,
    SET_OPS_PER_S,
    RESPONSE_TIME_MS,
    P50_MS,
    P90_MS,
    P99_MS,
    HITS,
    MISSES,
    MISS_RATIO,
    ERRORS,
    MW_THROUGHPUT_OPS_PER_S,
    MW_RESPONSE_TIME_MS,
    MW_QUEUE_TIME_MS,
    MW_STAGING_TIME_MS,
    MW_PUBLISH_WAIT_MS,
    MW_SERVICE_TIME_MS,
    MW_QUEUE_LENGTH,
    CPU_LOADGEN_CORES,
    CPU_MIDDLEWARE_CORES,
    CPU_SERVER_CORES,
    CPU_SERVER_MAX_CORES,
    CPU_TOXIPROXY_CORES,
    # achieved RTT of each emulated link (spec `network`): p50 of its calibration round trips,
    # averaged over the link's proxies
    RTT_CLIENT_MW_P50_MS,
    RTT_MW_SERVER_P50_MS,
    RTT_CLIENT_SERVER_P50_MS,
    SERVER_REQUESTS_MAX_OVER_MEAN,
    HOT_KEY_SHARE,
    OFFERED_OPS_PER_S,  # open loop: workload.rate_ops, requests/s offered in total
    ACHIEVED_FRAC,  # open loop: throughput_ops_per_s / offered_ops_per_s
    "rate_verdict",  # open loop: ok, loadgen-bound or system-saturated (achieved < 95 %)
    "fault",  # the run's first fault: "<action> <target>"
    FAULT_DETECT_S,  # seconds from its start to the first second with errors or a jump
    FAULT_RECOVER_S,  # seconds from its end until throughput holds >= 90 % of before
    # p50/p90/p99 of the middleware's queue and service times and of the rest (client minus
    # middleware response time at that percentile), over the measured seconds (cachelab.tail)
    TAIL_QUEUE_P50_MS,
    TAIL_QUEUE_P90_MS,
    TAIL_QUEUE_P99_MS,
    TAIL_SERVICE_P50_MS,
    TAIL_SERVICE_P90_MS,
    TAIL_SERVICE_P99_MS,
    TAIL_REST_P50_MS,
    TAIL_REST_P90_MS,
    TAIL_REST_P99_MS,
    "status",
    "bandwidth",
    "network",
    "monitor",
    "command_line",
]


# summary.csv columns that hold text or counts, not measures averaged over repetitions
TEXT_COLUMNS = (HITS, MISSES, "status", "bandwidth", "network", "monitor", "command_line")


def summary_columns(axes: Sequence[str]) -> list[str]:
    """The summary.csv header for a spec with these sweep axes."""
    extra = [a for a in axes if a not in BASE_COLUMNS + CONFIG_COLUMNS + METRIC_COLUMNS]
    return BASE_COLUMNS + extra + CONFIG_COLUMNS + METRIC_COLUMNS


MEAN_SUFFIX, CI95_SUFFIX = "_mean", "_ci95"


def mean_column(column: str) -> str:
    """A measure's mean over a point's usable repetitions (points.csv), in its unit."""
    return column + MEAN_SUFFIX


def ci95_column(column: str) -> str:
    """The half-width of the 95 % interval of a measure's mean (points.csv), in its unit."""
    return column + CI95_SUFFIX


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
    TOTAL_CLIENTS: ("clients", "closed-loop connections over all loadgens (N)"),
    "workers": ("threads", "worker threads per middleware"),
    "middlewares": ("processes", "middlewares"),
    "servers": ("processes", "backend servers"),
    THINK_TIME_MS: ("ms", "configured think time per request (Z)"),
    THROUGHPUT_OPS_PER_S: ("ops/s", "client throughput over the measured seconds, summed"),
    GET_OPS_PER_S: ("ops/s", "client GET throughput"),
    SET_OPS_PER_S: ("ops/s", "client SET throughput"),
    RESPONSE_TIME_MS: ("ms", "client response time, request-weighted mean over instances"),
    P50_MS: ("ms", "median client response time (a point's: of the merged histograms)"),
    P90_MS: ("ms", "90th percentile of the client response time (likewise)"),
    P99_MS: ("ms", "99th percentile of the client response time (likewise)"),
    HITS: ("requests", "cache hits over the whole run"),
    MISSES: ("requests", "cache misses over the whole run"),
    MISS_RATIO: ("fraction", "misses / (hits + misses)"),
    ERRORS: ("requests", "connection errors and error replies"),
    MW_THROUGHPUT_OPS_PER_S: ("ops/s", "middleware throughput, summed over middlewares"),
    MW_RESPONSE_TIME_MS: ("ms", "middleware response time (received to replied)"),
    MW_QUEUE_TIME_MS: ("ms", "middleware queue time (decoded to dequeued by a worker)"),
    MW_STAGING_TIME_MS: ("ms", "part of the queue time before the net thread published"),
    MW_PUBLISH_WAIT_MS: ("ms", "part of the queue time after publishing"),
    MW_SERVICE_TIME_MS: ("ms", "middleware service time (sent to the backends to answered)"),
    MW_QUEUE_LENGTH: ("requests", "mean middleware queue length, summed over middlewares"),
    CPU_LOADGEN_CORES: ("cores", "CPU seconds per second of the loadgens"),
    CPU_MIDDLEWARE_CORES: ("cores", "CPU seconds per second of the middlewares"),
    CPU_SERVER_CORES: ("cores", "CPU seconds per second of the backend servers"),
    CPU_SERVER_MAX_CORES: ("cores", "CPU seconds per second of the busiest server alone"),
    CPU_TOXIPROXY_CORES: (
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
    SERVER_REQUESTS_MAX_OVER_MEAN: (
        "ratio",
        "requests the middlewares sent to the busiest server over the mean server's (1 = equal)",
    ),
    HOT_KEY_SHARE: ("fraction", "the most requested key's share of all keys requested"),
    OFFERED_OPS_PER_S: ("ops/s", "open loop: the total offered rate (workload.rate_ops)"),
    ACHIEVED_FRAC: ("fraction", "open loop: throughput_ops_per_s / offered_ops_per_s"),
    "rate_verdict": (
        "text",
        "open loop: ok, or below 95 % of the offered rate loadgen-bound (its threads busy or "
        "waiting for a CPU) or system-saturated",
    ),
    "fault": ("text", "the run's first fault, '<action> <target>' (faults.json has all)"),
    FAULT_DETECT_S: ("s", "from the fault's start to the first second with an error or jump"),
    FAULT_RECOVER_S: ("s", "from the fault's end until throughput holds >= 90 % of before"),
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
PERCENTILES = (P50_MS, P90_MS, P99_MS)


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
        (PERCENTILES_FROM, "text", "merged histograms, or the weighted mean of the reps'"),
        (THROUGHPUT_WINDOW_STD_OPS_PER_S, "ops/s", "seeds' SD of the 1 s windows (ASL 2017)"),
        (RESPONSE_TIME_WINDOW_STD_MS, "ms", "seeds' SD of the 1 s windows' response time"),
        ("label", "text", "the point's line (series) in the figures"),
        (LAW_RESPONSE_TIME_MS, "ms", "R = N/X - Z per repetition, mean"),
        (LAW_THROUGHPUT_OPS_PER_S, "ops/s", "X = N/(R + Z) per repetition, mean"),
        (LAW_DEVIATION_PCT, "%", "(R - N/X + Z) / (N/X - Z) per repetition, mean"),
        (LAW_DEVIATION_WORST_PCT, "%", "the repetition's deviation farthest from 0"),
        (LAW_HOLDS, "bool", "every repetition within the tolerance (10 %)"),
        (Z_CLIENT_MS, "ms", "measured think time N/X - R per repetition, mean"),
        ("z_client_ms_ci95", "ms", "half-width of its 95 % interval"),
        (Z_MW_MS, "ms", "think time behind the middleware N/X_mw - R_mw, mean"),
        ("z_mw_ms_ci95", "ms", "half-width of its 95 % interval"),
        (CV_PCT, "%", "coefficient of variation of the repetitions' throughput"),
        (CLIENT_MW_PCT, "%", "(middleware - client) / client throughput"),
        ("flags", "text", "why the point should not be taken at face value"),
        ("bottleneck", "text", "the busiest station of the model"),
        ("delay_{stage}_ms", "ms", "a delay stage's time per request (clients+network: R - R_mw)"),
        ("util_{stage}_frac", "fraction", "a stage's utilisation (busy share of its servers)"),
        ("cpu_{process}_cores", "cores", "a process's CPU seconds per second"),
        ("rt_{op}_ms", "ms", "response time of one op type, per rep then mean"),
        (MW_QUEUE_SERVICE_MS, "ms", "middleware queue + service time"),
        (MVA_THROUGHPUT_OPS_PER_S, "ops/s", "MVA calibrated at the point (in sample)"),
        (MVA_RESPONSE_TIME_MS, "ms", "MVA calibrated at the point (in sample)"),
        (BOUND_THROUGHPUT_OPS_PER_S, "ops/s", "asymptotic throughput bound at the point's N"),
        (BOUND_RESPONSE_TIME_MS, "ms", "asymptotic response-time bound at the point's N"),
        (OOS_THROUGHPUT_OPS_PER_S, "ops/s", "MVA calibrated at the line's lowest load"),
        (OOS_RESPONSE_TIME_MS, "ms", "MVA calibrated at the line's lowest load"),
        (MM1_QUEUE_TIME_MS, "ms", "M/M/1 queue time"),
        (MM1_QUEUE_LENGTH, "requests", "M/M/1 queue length"),
        (MM1_MW_RESPONSE_TIME_MS, "ms", "M/M/1 queue + service time"),
        (MMM_QUEUE_TIME_MS, "ms", "M/M/m queue time"),
        (MMM_QUEUE_LENGTH, "requests", "M/M/m queue length"),
        (MMM_MW_RESPONSE_TIME_MS, "ms", "M/M/m queue + service time"),
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
