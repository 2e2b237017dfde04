"""The results of an experiment: the folder layout, one reader per raw artefact, and the one
trimming rule (docs/interfaces.md §4, docs/analysis.md).

Modules
-------
layout
    `ResultsDir` and `RunDir`: the only place the file names are spelled.
records
    `point.json` (written by the runners, read back as `PointRecord`) and `status.json`.
metadata
    `metadata.json`: git sha, tools, host facts, command line, run settings, load before/after.
trim
    `MeasuredInterval`: the one rule deciding which seconds, intervals, windows and samples count.
memtier, hdr, middleware, cpu
    Readers of loadgen JSON, HdrHistogram interval logs, the middleware's windows and summary,
    and per-process CPU samples.
run, experiment
    `read_run` (one run, trimmed) and `read_experiment` (a folder with its validated `Spec`).
noise
    Flags for noisy runs: load above the cores, repetitions that disagree, client vs middleware.
"""

from cachelab.results.errors import ResultsError
from cachelab.results.layout import ResultsDir, RunDir, utc_stamp, write_json
from cachelab.results.metadata import (
    collect_metadata,
    finish_metadata,
    host_facts,
    read_metadata,
    update_metadata,
)
from cachelab.results.records import (
    ExperimentState,
    PointRecord,
    RunRecord,
    RunStatus,
    Status,
    finish_point_record,
    start_point_record,
)
from cachelab.results.trim import MeasuredInterval

__all__ = [
    "ExperimentState",
    "MeasuredInterval",
    "PointRecord",
    "ResultsDir",
    "ResultsError",
    "RunDir",
    "RunRecord",
    "RunStatus",
    "Status",
    "collect_metadata",
    "finish_metadata",
    "finish_point_record",
    "host_facts",
    "read_metadata",
    "start_point_record",
    "update_metadata",
    "utc_stamp",
    "write_json",
]
