"""Readers for the raw files of a results folder (docs/interfaces.md §1, §2 and §4).

Loadgen output is memtier's ``--json-out-file`` layout, so the same code reads real memtier runs:
``ALL STATS`` (or ``AGGREGATED AVERAGE RESULTS (<n> runs)`` for ``--run-count`` > 1) holding
``Gets``/``Sets``/``Totals`` with counts, rates, latencies in milliseconds, ``Percentile
Latencies`` and a per-second ``Time-Serie``; ``GET``/``SET`` hold the cumulative latency
histogram unless ``--hide-histogram`` was given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RAW_DIR_PATTERN = re.compile(r"^p(?P<point>\d+)-r(?P<rep>\d+)$")
LOADGEN_FILE_PATTERN = re.compile(r"^loadgen-(?P<index>\d+)\.json$")
# memtier prints these for empty buckets; PerfKitBenchmarker sanitises them the same way.
_BAD_NUMBERS = re.compile(r"(?<![\w\"])(-?nan|-?inf|9223372036854776\.000)(?![\w\"])")


class RawDataError(ValueError):
    """A raw results file is missing a field or is not in the documented layout."""


@dataclass(frozen=True)
class TimeSeriesSecond:
    """One 1 s bucket of memtier's ``Time-Serie`` (latencies in ms)."""

    count: int
    average_latency_ms: float


@dataclass(frozen=True)
class OpStats:
    """``Gets``, ``Sets`` or ``Totals`` of one loadgen instance."""

    count: int
    ops_per_s: float
    average_latency_ms: float
    percentiles_ms: dict[float, float]
    time_series: dict[int, TimeSeriesSecond]


@dataclass(frozen=True)
class LoadgenRun:
    """One loadgen instance's JSON output."""

    path: Path
    stats: dict[str, OpStats]
    # cumulative histograms: op ("GET"/"SET") -> [(upper bound ms, cumulative percent)]
    histograms: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    @property
    def totals(self) -> OpStats:
        return self.stats["Totals"]


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RawDataError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        return json.loads(_BAD_NUMBERS.sub("0.000", text))
    except json.JSONDecodeError as exc:
        raise RawDataError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc


def _number(mapping: Mapping[str, Any], key: str, where: str) -> float:
    if key not in mapping:
        raise RawDataError(f"{where}: missing field {key!r}")
    try:
        return float(mapping[key])
    except (TypeError, ValueError):
        raise RawDataError(f"{where}.{key}: not a number: {mapping[key]!r}") from None


def _parse_percentile_key(key: str) -> float | None:
    if not key.startswith("p"):
        return None
    try:
        return float(key[1:])
    except ValueError:
        return None


def _op_stats(block: Mapping[str, Any], where: str) -> OpStats:
    percentiles: dict[float, float] = {}
    for key, value in (block.get("Percentile Latencies") or {}).items():
        p = _parse_percentile_key(key)
        if p is not None and isinstance(value, int | float):
            percentiles[p] = float(value)
    series: dict[int, TimeSeriesSecond] = {}
    for second, bucket in (block.get("Time-Serie") or {}).items():
        count = int(bucket.get("Count", 0))
        latency = float(bucket.get("Average Latency", 0.0)) if count else 0.0
        series[int(second)] = TimeSeriesSecond(count=count, average_latency_ms=latency)
    average = block.get("Average Latency", block.get("Latency"))
    if average is None:
        raise RawDataError(f"{where}: missing field 'Average Latency'")
    return OpStats(
        count=int(_number(block, "Count", where)),
        ops_per_s=_number(block, "Ops/sec", where),
        average_latency_ms=float(average),
        percentiles_ms=percentiles,
        time_series=series,
    )


def _stats_section(document: Mapping[str, Any], path: Path) -> Mapping[str, Any]:
    if "ALL STATS" in document:
        return dict(document["ALL STATS"])
    for key, value in document.items():
        if key.startswith("AGGREGATED AVERAGE RESULTS"):
            return dict(value)
    raise RawDataError(f"{path}: no 'ALL STATS' section (not memtier JSON layout)")


def read_loadgen_json(path: Path) -> LoadgenRun:
    """Parse one ``loadgen-<i>.json`` (memtier layout)."""
    document = _load_json(path)
    if not isinstance(document, dict):
        raise RawDataError(f"{path}: expected a JSON object at the top level")
    section = _stats_section(document, path)
    stats: dict[str, OpStats] = {}
    for name in ("Gets", "Sets", "Totals"):
        if name in section:
            stats[name] = _op_stats(section[name], f"{path.name}: {name}")
    if "Totals" not in stats:
        raise RawDataError(f"{path}: 'ALL STATS' has no 'Totals'")
    histograms: dict[str, list[tuple[float, float]]] = {}
    for op in ("GET", "SET"):
        rows = section.get(op)
        if isinstance(rows, list) and rows:
            histograms[op] = [(float(r["<=msec"]), float(r["percent"])) for r in rows]
    return LoadgenRun(path=path, stats=stats, histograms=histograms)


def read_hgrm(path: Path) -> list[tuple[float, float]]:
    """An HdrHistogram percentile distribution (``.hgrm``, as written by memtier's and the
    loadgen's ``--hdr-file-prefix``) as a cumulative histogram [(value ms, cumulative %)].

    Rows are ``Value Percentile TotalCount 1/(1-Percentile)``; repeated values (the tail rows)
    keep their highest percentile.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RawDataError(f"{path}: cannot read ({exc.strerror})") from exc
    points: dict[float, float] = {}
    for line in lines:
        fields = line.split()
        if len(fields) < 3 or line.lstrip().startswith("#"):
            continue
        try:
            value, percentile = float(fields[0]), float(fields[1])
        except ValueError:
            continue  # the header row
        points[value] = max(points.get(value, 0.0), 100.0 * percentile)
    if not points:
        raise RawDataError(f"{path}: no 'Value Percentile TotalCount' rows")
    return sorted(points.items())


def read_middleware_summary(path: Path) -> dict[str, Any]:
    """Parse a middleware ``summary.json`` (interfaces.md §1) and check its main fields."""
    document = _load_json(path)
    if not isinstance(document, dict) or "ops" not in document:
        raise RawDataError(f"{path}: missing field 'ops'")
    for op in ("all",):
        if op not in document["ops"]:
            raise RawDataError(f"{path}: missing field 'ops.{op}'")
    return document


@dataclass(frozen=True)
class RawRunDir:
    """``raw/p<point>-r<rep>/`` of one point and repetition."""

    point: int
    repetition: int
    path: Path

    def loadgen_files(self) -> list[Path]:
        found = [p for p in self.path.iterdir() if LOADGEN_FILE_PATTERN.match(p.name)]
        return sorted(found, key=lambda p: int(LOADGEN_FILE_PATTERN.match(p.name)["index"]))  # type: ignore[index]

    def loadgen_hgrm(self, index: int) -> Path | None:
        """The full-run ``.hgrm`` of loadgen instance ``index`` (``--hdr-file-prefix``), if any."""
        found = sorted(self.path.glob(f"loadgen-{index}*FULL_RUN*.hgrm"))
        return found[0] if found else None

    def middleware_summaries(self) -> list[Path]:
        return sorted(self.path.glob("middleware-*/summary.json"))


def raw_run_dirs(results_dir: Path) -> list[RawRunDir]:
    """Every ``raw/p<point>-r<rep>`` folder, sorted by point then repetition."""
    raw = results_dir / "raw"
    if not raw.is_dir():
        return []
    found: list[RawRunDir] = []
    for child in raw.iterdir():
        match = RAW_DIR_PATTERN.match(child.name)
        if match and child.is_dir():
            found.append(RawRunDir(int(match["point"]), int(match["rep"]), child))
    return sorted(found, key=lambda r: (r.point, r.repetition))
