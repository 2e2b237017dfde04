"""The report's run section: what ran, where and how (``metadata.json``, ``status.json``), and
how many rows of the summary the report uses."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cachelab.report.analyse import AnalysedResults
from cachelab.results.noise import host_warnings


@dataclass(frozen=True)
class HostFacts:
    hostname: str | None
    cpu: str
    memory: str | None
    kernel: str | None


@dataclass(frozen=True)
class RunInfo:
    """The run facts the report prints: git, tools, host facts with the load average before and
    after, command line and run settings."""

    git_sha: str | None
    git_dirty: bool | None
    started: str | None
    finished: str | None
    target: str | None
    state: str | None
    message: str
    runs: str | None  # "done / total"
    subset: str | None
    tools: dict[str, str]
    synthetic: bool
    generator: str | None
    host: HostFacts | None
    load_before: str | None
    load_after: str | None
    command_line: str | None
    settings: dict[str, str]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RowsAccount:
    """The summary's rows: how many, and those left out by reason."""

    total: int
    left_out: dict[str, int]
    skipped: dict[str, list[str]]  # run folders the reader passed over, by reason


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first_line(value: Any) -> str:
    return str(value).splitlines()[0] if value else ""


def _load(facts: dict[str, Any]) -> str | None:
    values = facts.get("load_avg")
    return " / ".join(f"{v:.2f}" for v in values) if values else None


def _host(host: dict[str, Any]) -> HostFacts | None:
    if not host:
        return None
    return HostFacts(
        hostname=host.get("hostname"),
        cpu=f"{host.get('cpu_count') or '?'} x {host.get('cpu_model') or 'unknown CPU'}",
        memory=host.get("memory_total"),
        kernel=host.get("kernel"),
    )


def _runs(status: dict[str, Any]) -> str | None:
    if "runs_done" in status and "runs_total" in status:
        return f"{status['runs_done']} / {status['runs_total']}"
    return None


def _subset(status: dict[str, Any]) -> str | None:
    """`2 of 8 points (--only workers=8 --only clients_per_thread=1,4)` for a subset run."""
    selected, total = status.get("points_selected") or 0, status.get("points_total") or 0
    if not 0 < selected < total:
        return None
    only = " ".join(f"--only {t}" for t in status.get("only") or [])
    return f"{selected} of {total} points" + (f" ({only})" if only else "")


def run_info(metadata: dict[str, Any], status: dict[str, Any]) -> RunInfo:
    """The run facts from ``metadata.json`` and ``status.json``."""
    git, tools = _mapping(metadata.get("git")), _mapping(metadata.get("tools"))
    host = _mapping(metadata.get("host"))
    settings = _mapping(metadata.get("settings"))
    command = metadata.get("command_line")
    return RunInfo(
        git_sha=git.get("sha") or metadata.get("git_sha"),
        git_dirty=git.get("dirty"),
        started=status.get("started") or metadata.get("created"),
        finished=status.get("finished"),
        target=status.get("target") or metadata.get("target"),
        state=status.get("state"),
        message=status.get("message") or "",
        runs=_runs(status),
        subset=_subset(status),
        tools={k: _first_line(v) for k, v in tools.items() if v},
        synthetic=bool(metadata.get("synthetic")),
        generator=metadata.get("generator"),
        host=_host(host),
        load_before=_load(host),
        load_after=_load(_mapping(metadata.get("host_after"))),
        command_line=" ".join(command) if isinstance(command, list) else None,
        settings={
            k: json.dumps(v) if isinstance(v, dict) else str(v)
            for k, v in settings.items()
            if k != "target"
        },
        warnings=host_warnings(metadata),
    )


def rows_account(analysed: AnalysedResults) -> RowsAccount:
    return RowsAccount(
        total=len(analysed.summary_all),
        left_out=analysed.left_out,
        skipped=analysed.experiment.skipped,
    )
