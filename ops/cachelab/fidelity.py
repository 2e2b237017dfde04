"""Fidelity: a run's curves against its seed's published ones, as ours / seed's.

A run's series is put beside a seed curve (cachelab.seeds) only like for like: every field the
curve's `config` fixes (workload ratio, backend, servers, middlewares, workers per middleware,
value size, client machines, instances per machine, threads, clients per thread when fixed,
sharding, replication, multi-get size; the curve's x excluded) must agree with the configuration
the run's spec gives that series's points. A curve no series agrees with is refused, naming the
fields that differ (ours vs the seed's) for the run's closest series.

For each seed the spec names (`seeds:`) and each of the seed's curves a series matches, three
numbers on each side:

- saturation throughput: the highest mean throughput over the curve's points;
- knee: the first x (clients, or offered rate) whose mean throughput reaches `KNEE_FRAC` of
  that maximum;
- response time at low load: the mean response time at the smallest x. For a seed that published
  only throughput it is N / X (the interactive law with Z = 0: clients over throughput), said so in
  the row.

A curve over something other than the load (a value size at the seed's highest client count) has
no knee and no low load: it compares its saturation (the highest throughput over its x) and is
drawn over its own x. So does a maximum the seed states in its text without the load it was
reached at (a curve without x): ours is the series's highest mean throughput over its clients.

Two more per pair: the shape, the largest absolute difference between the two throughput curves
each divided by its own maximum, over the x values both have (0 = the same shape; NaN without a
shared x); and the bottleneck, the seed's (what its text names, cachelab.seeds.BOTTLENECKS)
beside ours (the station the operational analysis, cachelab.analysis.operational, finds busiest
at our saturation point; "unknown" when the folder holds no per-process CPU samples for that
point, since without them the CPU stations are not measured).

Absolute numbers depended on the seeds' 2016-2019 cloud VMs, so the ratios are a comparison of
shapes and scale, not a pass or fail. Pure functions over summary.csv; any thread.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cachelab.columns import RESPONSE_TIME_MS, THROUGHPUT_OPS_PER_S, TOTAL_CLIENTS
from cachelab.results import ResultsDir, ResultsError
from cachelab.results.experiment import read_spec
from cachelab.seeds import CONFIG_FIELDS, SeedBottleneck, SeedCurve, curves_for, differences
from cachelab.spec import Spec

if TYPE_CHECKING:
    import pandas as pd

    from cachelab.results.experiment import Experiment

KNEE_FRAC = 0.95
THROUGHPUT = THROUGHPUT_OPS_PER_S
RESPONSE_TIME = RESPONSE_TIME_MS
LOAD_AXES = (TOTAL_CLIENTS, "topology.clients_per_thread", "workload.rate_ops")
UNKNOWN = "unknown"
# the operational analysis's station names as the seeds' bottleneck kinds
STATION_KINDS = {
    "worker pool": "worker_pool_rtt",
    "net thread": "net_thread",
    "event loops": "middleware_cpu",
    "pod CPU middleware": "middleware_cpu",
    "pod CPU loadgen": "client",
    "host CPU": "host_cpu",
}


def link_kind(link: str) -> str:
    """The seeds' bottleneck kind of a shaped link (cachelab.local.shaping's names): a
    server's egress is the server link, the clients' egress the client link; the middleware's
    links have no kind of their own in the seeds."""
    from cachelab.analysis.operational import server_egress

    if server_egress(link):
        return "server_link"
    if link.startswith("clients -> "):
        return "client_link"
    return UNKNOWN


def station_kind(station: str) -> str:
    """The seeds' bottleneck kind of one of the operational analysis's stations."""
    from cachelab.analysis.operational import LINK_PREFIX

    if station.startswith("backend "):
        return "server_cpu"
    if station.startswith(LINK_PREFIX):
        return link_kind(station.removeprefix(LINK_PREFIX))
    return STATION_KINDS.get(station, UNKNOWN)


def _point_at(mine: list[dict[str, str]], x: str, value: float) -> int | None:
    """The one point of a series at x = value (None when there is not exactly one)."""
    points = {r["point"] for r in mine if _float(r.get(x)) == value and "point" in r}
    return int(points.pop()) if len(points) == 1 else None


class FidelityError(ValueError):
    """A results folder with nothing to compare (one line saying why)."""


@dataclass(frozen=True)
class Curve:
    """x values with the mean throughput and response time at each (NaN where not known)."""

    x: list[float]
    throughput: list[float]
    response_time_ms: list[float]
    load_axis: bool = True  # x is the load (clients, rate); else no knee and no low load

    @property
    def saturation(self) -> float:
        return max(self.throughput) if self.throughput else math.nan

    @property
    def knee(self) -> float:
        if not self.load_axis:
            return math.nan
        top = self.saturation
        for x, tp in zip(self.x, self.throughput, strict=True):
            if tp >= KNEE_FRAC * top:
                return x
        return math.nan

    @property
    def low_load_rt_ms(self) -> float:
        if not self.load_axis:
            return math.nan
        return self.response_time_ms[0] if self.response_time_ms else math.nan


@dataclass(frozen=True)
class FidelityRow:
    """One of our series against one seed curve."""

    experiment: str
    seed: str
    series: str
    source: str
    ours: Curve
    theirs: Curve
    rt_from_law: bool  # the seed's low-load response time is N / X
    x: str = TOTAL_CLIENTS  # the summary.csv column both curves are drawn over
    config: dict[str, Any] = field(default_factory=dict)  # the fields both sides agree on
    seed_bottleneck: SeedBottleneck | None = None
    our_bottleneck: str = UNKNOWN
    # the a-priori model at our lowest load, on the seed's machines and links (its host CPU a
    # delay, the spec's RTTs, the shaped links as stations): ceiling ops/s and its bottleneck
    predicted_saturation: float = math.nan
    predicted_bottleneck: str = UNKNOWN

    @property
    def shape_difference(self) -> float:
        """Largest |ours / our maximum - theirs / their maximum| over the x values both have."""
        return shape_difference(self.ours, self.theirs)

    @property
    def same_bottleneck(self) -> bool | None:
        """Whether ours is the seed's bottleneck; None when either side is not known."""
        theirs = self.seed_bottleneck.kind if self.seed_bottleneck else "none_stated"
        if self.our_bottleneck == UNKNOWN or theirs == "none_stated":
            return None
        return self.our_bottleneck == theirs

    def ratios(self) -> dict[str, float]:
        def ratio(a: float, b: float) -> float:
            return a / b if b and math.isfinite(a) and math.isfinite(b) else math.nan

        return {
            "saturation": ratio(self.ours.saturation, self.theirs.saturation),
            "predicted_saturation": ratio(self.predicted_saturation, self.theirs.saturation),
            "knee": ratio(self.ours.knee, self.theirs.knee),
            "low_load_rt": ratio(self.ours.low_load_rt_ms, self.theirs.low_load_rt_ms),
        }


def seed_curve(curve: SeedCurve) -> tuple[Curve, bool]:
    """The seed's points as a Curve, and whether its response time comes from N / X."""
    xs, tps = curve.series(THROUGHPUT)
    load = curve.x in LOAD_AXES
    if curve.stated:
        return Curve(xs, tps, [math.nan] * len(xs), load_axis=False), False
    if curve.has(RESPONSE_TIME):
        return Curve(xs, tps, curve.series(RESPONSE_TIME)[1], load), False
    if not load:
        return Curve(xs, tps, [math.nan] * len(xs), load), False
    law = [1000.0 * x / tp if tp else math.nan for x, tp in zip(xs, tps, strict=True)]
    return Curve(xs, tps, law), True


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def our_curve(rows: Sequence[dict[str, str]], x: str) -> Curve:
    """Means over repetitions at each x of the ok rows."""
    by_x: dict[float, list[dict[str, str]]] = {}
    for row in rows:
        if row.get("status") == "ok" and math.isfinite(_float(row.get(x))):
            by_x.setdefault(_float(row[x]), []).append(row)
    xs = sorted(by_x)
    return Curve(
        xs,
        [statistics.fmean(_float(r[THROUGHPUT]) for r in by_x[v]) for v in xs],
        [statistics.fmean(_float(r.get(RESPONSE_TIME)) for r in by_x[v]) for v in xs],
        x in LOAD_AXES,
    )


def shape_difference(ours: Curve, theirs: Curve) -> float:
    """Largest absolute difference of the two throughputs each over its own maximum, at the x
    values both curves have; NaN when they share none."""
    if not (ours.saturation > 0 and theirs.saturation > 0):
        return math.nan
    mine = dict(zip(ours.x, ours.throughput, strict=True))
    published = dict(zip(theirs.x, theirs.throughput, strict=True))
    gaps = [
        abs(mine[x] / ours.saturation - published[x] / theirs.saturation)
        for x in sorted(set(mine) & set(published))
        if math.isfinite(mine[x])
    ]
    return max(gaps) if gaps else math.nan


@dataclass(frozen=True)
class Refusal:
    """A seed curve no series of the run agrees with, and why (for the closest series)."""

    experiment: str
    seed: str
    curve: str
    differences: list[tuple[str, Any, Any]]  # (field, ours, the seed's)
    reason: str = ""

    def line(self) -> str:
        if self.reason:
            why = self.reason
        else:
            why = "fields differ (ours vs seed's): " + "; ".join(
                f"{name} {_shown(ours)} vs {_shown(theirs)}"
                for name, ours, theirs in self.differences
            )
        return f"{self.experiment}: not compared with {self.seed} '{self.curve}': {why}"


def _shown(value: Any) -> str:
    if value is None:
        return "absent"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


@dataclass(frozen=True)
class Comparison:
    """What one results folder holds against its seeds: the matched pairs, the refused curves
    and the seeds it names that have no published numbers."""

    experiment: str
    rows: list[FidelityRow]
    refused: list[Refusal]
    without_numbers: list[str]


def point_configs(spec: Spec, fields: Sequence[str] = CONFIG_FIELDS) -> dict[int, dict[str, Any]]:
    """Each point's configuration: `fields` (dotted spec paths; the CONFIG_FIELDS by default)
    of the spec with its sweep values set."""
    configs = {}
    for point in spec.points():
        dumped = point.spec.model_dump(mode="json")
        configs[point.index] = {name: _field(dumped, name) for name in fields}
    return configs


def _field(data: dict[str, Any], path: str) -> Any:
    node: Any = data
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _row_config(row: dict[str, str], configs: dict[int, dict[str, Any]]) -> dict[str, Any]:
    point = _float(row.get("point"))
    return configs.get(int(point), {}) if math.isfinite(point) else {}


def compare(results_dir: Path) -> Comparison:
    """Every seed curve of the spec's seeds against the run's series, like for like."""
    results = ResultsDir(results_dir)
    spec = read_spec(results)
    if not results.summary_file.is_file():
        raise FidelityError(f"{results_dir}: no summary.csv (is it a results folder?)")
    with results.summary_file.open(newline="") as handle:
        summary = list(csv.DictReader(handle))
    return compare_read(results_dir, spec, summary, _Bottlenecks(results_dir))


def compare_read(
    results_dir: Path, spec: Spec, summary: list[dict[str, str]], bottlenecks: _Bottlenecks
) -> Comparison:
    """`compare` of a folder already read: its spec and its summary's rows as text."""
    if not spec.seeds:
        raise FidelityError(f"{results_dir}: its spec names no seed experiment (seeds:)")
    configs = point_configs(spec)
    candidates = [_row_config(r, configs) for r in summary] or list(configs.values())
    rows, refused, without = [], [], []
    for seed in spec.seeds:
        curves = curves_for(seed)
        if not curves:
            without.append(seed)
        for curve in curves:
            mine = [r for r in summary if not differences(curve, _row_config(r, configs))]
            if mine and _axis(curve) in mine[0]:
                rows.append(_pair(_experiment(spec), curve, mine, bottlenecks))
                continue
            closest = min((differences(curve, c) for c in candidates), key=len)
            reason = "" if closest else f"its series are not drawn over {curve.x}"
            refused.append(Refusal(spec.name, seed, curve.label, closest, reason))
    return Comparison(spec.name, rows, refused, without)


def _experiment(spec: Spec) -> str:
    """The spec's name, and the links' times it sets itself (not its profile's), which make
    two runs of one spec different series: `asl17-one-client (rtt_ms.client_server 2)`."""
    network = spec.network
    own = [
        f"{kind}.{link} {value:g}"
        for kind, times in (("rtt_ms", network.rtt_ms), ("jitter_ms", network.jitter_ms))
        for link, value in times.model_dump().items()
        if value is not None
    ]
    return f"{spec.name} ({', '.join(own)})" if own else spec.name


def _axis(curve: SeedCurve) -> str:
    """The summary.csv column our series is drawn over: the curve's x, clients for a stated
    maximum."""
    return curve.x or TOTAL_CLIENTS


def _pair(
    experiment: str, curve: SeedCurve, mine: list[dict[str, str]], bottlenecks: _Bottlenecks
) -> FidelityRow:
    theirs, from_law = seed_curve(curve)
    x = _axis(curve)
    ours = our_curve(mine, x)
    predicted, predicted_kind = bottlenecks.predicted(mine, x, ours)
    return FidelityRow(
        experiment,
        curve.seed,
        curve.label,
        curve.source,
        ours,
        theirs,
        from_law,
        x,
        {k: v for k, v in curve.config.items() if v is not None and k != x},
        curve.bottleneck,
        bottlenecks.at_saturation(mine, x, ours),
        predicted,
        predicted_kind,
    )


class _Bottlenecks:
    """Our bottleneck at a series's saturation point, from the folder's raw runs (read once)."""

    def __init__(
        self, results_dir: Path, read: tuple[Experiment, pd.DataFrame] | None = None
    ) -> None:
        """`read`: the folder's runs and summary, when the caller has read them already."""
        self.results_dir = results_dir
        self._experiment: Any = read[0] if read else None
        self._frame: Any = read[1] if read else None
        self._read = read is not None

    def at_saturation(self, mine: list[dict[str, str]], x: str, ours: Curve) -> str:
        if not ours.throughput or not math.isfinite(ours.saturation):
            return UNKNOWN
        point = _point_at(mine, x, ours.x[ours.throughput.index(ours.saturation)])
        return UNKNOWN if point is None else self.of_point(point)

    def predicted(self, mine: list[dict[str, str]], x: str, ours: Curve) -> tuple[float, str]:
        """The a-priori ceiling and its bottleneck's kind (analysis.prediction.seed_ceiling)
        calibrated at the series's lowest load, averaged over its repetitions (NaN, UNKNOWN
        without a model there)."""
        from cachelab.analysis.operational import analyse
        from cachelab.analysis.prediction import seed_ceiling

        point = _point_at(mine, x, min(ours.x)) if ours.x else None
        read = self._analysed(point) if point is not None else None
        if read is None:
            return math.nan, UNKNOWN
        found = [c for m in read[1] if m.process_cpu and (c := seed_ceiling(m, analyse(m)))]
        if not found:
            return math.nan, UNKNOWN
        return sum(c for c, _ in found) / len(found), station_kind(found[0][1])

    def of_point(self, point: int) -> str:
        """The busiest station's kind at `point`; UNKNOWN without its CPU samples."""
        read = self._analysed(point)
        if read is None:
            return UNKNOWN
        analysis, repetitions = read
        if not any(m.process_cpu for m in repetitions) or analysis.bottleneck is None:
            return UNKNOWN
        return station_kind(analysis.bottleneck)

    def _analysed(self, point: int) -> tuple[Any, list[Any]] | None:
        """The point's combined analysis and its repetitions' measurements (None: no runs)."""
        import pandas as pd

        from cachelab.analysis.perpoint import analyse_point

        experiment = self.experiment()
        if experiment is None or not experiment.runs_of(point):
            return None
        host = experiment.metadata.get("host") or {}
        cores = int(host.get("cpu_count") or 0) if isinstance(host, dict) else 0
        frame = self._frame
        if frame is None:
            frame = pd.read_csv(ResultsDir(self.results_dir).summary_file)
        analysis, _, repetitions = analyse_point(point, frame, experiment, cores)
        return analysis, repetitions

    def experiment(self) -> Any:
        if not self._read:
            self._read = True
            from cachelab.results.experiment import read_experiment

            if (self.results_dir / "raw").is_dir():
                try:
                    self._experiment = read_experiment(self.results_dir)
                except ResultsError:
                    self._experiment = None
        return self._experiment


def fidelity_rows(results_dir: Path) -> list[FidelityRow]:
    """Every (seed curve, our like series) of one results folder; FidelityError when none."""
    return _matched(results_dir, compare(results_dir))


def fidelity_rows_read(
    results_dir: Path,
    spec: Spec,
    summary: list[dict[str, str]],
    experiment: Experiment,
    frame: pd.DataFrame,
) -> list[FidelityRow]:
    """`fidelity_rows` of a folder already read: its spec, its summary's rows as text and as a
    frame, and its runs."""
    bottlenecks = _Bottlenecks(results_dir, (experiment, frame))
    return _matched(results_dir, compare_read(results_dir, spec, summary, bottlenecks))


def _matched(results_dir: Path, comparison: Comparison) -> list[FidelityRow]:
    if comparison.rows:
        return comparison.rows
    raise FidelityError(nothing_matches(results_dir, comparison))


def nothing_matches(results_dir: Path, comparison: Comparison) -> str:
    """The one line saying why a folder has nothing to compare."""
    if not comparison.refused:
        seeds = ", ".join(comparison.without_numbers)
        return (
            f"{results_dir}: no published numbers of {seeds} "
            "(cachelab/seeds/curves.yaml holds the seeds' numbers)"
        )
    closest = min(comparison.refused, key=lambda r: len(r.differences) or 99)
    return (
        f"{results_dir}: none of its series matches a published curve like for like "
        f"({len(comparison.refused)} refused); closest: {closest.line().split(': ', 1)[1]}"
    )


def number(value: float, digits: int = 0) -> str:
    """A table cell: `value` with thousands separators, a dash when it is not finite."""
    if not math.isfinite(value):
        return "\u2013"
    return f"{value:,.{digits}f}"


def bottleneck_cell(row: FidelityRow) -> str:
    theirs = row.seed_bottleneck.kind if row.seed_bottleneck else "none_stated"
    verdict = {True: "same", False: "differs", None: "not comparable"}[row.same_bottleneck]
    return f"{row.our_bottleneck} / {theirs} ({verdict})"


def table_rows(rows: Sequence[FidelityRow]) -> list[list[str]]:
    """Text cells: experiment, seed, series, saturation, knee, low-load RT (ours / seed's =
    ratio), shape, bottleneck (ours / seed's), the a-priori model's ceiling and bottleneck,
    source."""
    cells = []
    for row in rows:
        r = row.ratios()
        law = " (seed: N/X)" if row.rt_from_law else ""
        cells.append(
            [
                row.experiment,
                row.seed,
                row.series,
                f"{number(row.ours.saturation)} / {number(row.theirs.saturation)} = "
                f"{number(r['saturation'], 2)}",
                f"{number(row.ours.knee)} / {number(row.theirs.knee)} = {number(r['knee'], 2)}",
                f"{number(row.ours.low_load_rt_ms, 2)} / "
                f"{number(row.theirs.low_load_rt_ms, 2)} ms = {number(r['low_load_rt'], 2)}{law}",
                number(row.shape_difference, 2),
                bottleneck_cell(row),
                f"{number(row.predicted_saturation)} / {number(row.theirs.saturation)} = "
                f"{number(r['predicted_saturation'], 2)}, {row.predicted_bottleneck}",
                row.source,
            ]
        )
    return cells


HEADER = [
    "experiment",
    "seed",
    "series",
    "saturation ops/s (ours / seed = ratio)",
    "knee, clients (ours / seed = ratio)",
    "low-load response time (ours / seed = ratio)",
    "shape (largest gap, throughput / own max)",
    "bottleneck (ours / seed's)",
    "a-priori model: ceiling ops/s (/ seed = ratio), bottleneck",
    "seed's source",
]


def markdown(rows: Sequence[FidelityRow], refused: Sequence[Refusal] = ()) -> str:
    """The table, and below it one line per refused curve."""
    lines = []
    if rows:
        lines += ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    if refused:
        lines += ([""] if rows else []) + [f"- {r.line()}" for r in refused]
    return "\n".join(lines) + "\n"


def provenance(results_dir: Path) -> str:
    """When, where and by which command a results folder was measured (its metadata.json)."""
    from cachelab.results.metadata import read_metadata

    results = ResultsDir(results_dir)
    meta = read_metadata(results.metadata_file)
    host = meta.get("host") or {}
    before = _load((host.get("load_avg") or [None])[0])
    after = _load(((meta.get("host_after") or {}).get("load_avg") or [None])[0])
    command = " ".join(meta.get("command_line") or []) or "?"
    command = command.replace(str(Path(command.split(" ")[0]).parent) + "/", "", 1)
    return (
        f"{read_spec(results).name}: measured {meta.get('created', '?')} on "
        f"{host.get('hostname', '?')} ({host.get('cpu_count', '?')} cores, load average "
        f"{before} before, {after} after), `{command}`"
    )


def _load(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, int | float) else "?"


def markdown_with_provenance(folders: Sequence[Path]) -> str:
    """The table and, above it, one line per results folder saying how it was measured; below
    it the curves of their seeds that no series matched like for like."""
    comparisons = [compare(folder) for folder in folders]
    rows = [row for c in comparisons for row in c.rows]
    refused = [r for c in comparisons for r in c.refused]
    lines = [f"- {provenance(folder)}" for folder in folders]
    return "\n".join(lines) + "\n\n" + markdown(rows, refused)
