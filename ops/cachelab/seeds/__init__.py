"""The seed experiments as data: their ids and where each is published (`catalogue.csv`), and
the numbers published for some of them (`curves.yaml`), for the overlay and the fidelity table.

Each curve carries the configuration it was measured under (`config`: spec fields by their
dotted path, the names of summary.csv's swept columns; null = not fixed along the curve or not
applicable), the bottleneck its seed's text names for it, and, where the numbers are printed in
the seed's text, the verbatim lines they come from (`tables/<excerpt>.txt`). A curve without an
x is a maximum the seed's text states as such, in words ("throughput stops at 7700 rps") or in a
table of maxima: one throughput value, compared as a saturation only.

Some seeds state an effect in words instead of numbers (`effects.yaml`: a change of one field
lowered the maximum, moved the knee by so many clients); `effects_for` gives them.

`known_seed` checks a spec's `seeds:` entry; `curves_for` gives a seed's curves and
`differences` the configured fields on which one of a run's series and a curve disagree. Read
once per process; any thread.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from cachelab.columns import THROUGHPUT_OPS_PER_S

DATA_DIR = Path(__file__).parent
CATALOGUE = DATA_DIR / "catalogue.csv"
CURVES = DATA_DIR / "curves.yaml"
EFFECTS = DATA_DIR / "effects.yaml"
TABLES_DIR = DATA_DIR / "tables"

# The configuration every curve states (spec fields by dotted path); x is never compared.
CONFIG_FIELDS = (
    "workload.ratio",
    "topology.backend",
    "topology.servers",
    "topology.middlewares",
    "topology.workers",
    "workload.value_bytes",
    "topology.client_machines",
    "topology.instances_per_machine",
    "topology.threads",
    "topology.clients_per_thread",
    "workload.sharded",
    "workload.replication",
    "workload.multi_get",
)
# What a seed's text names as the limit of a curve: the middleware's worker pool waiting out its
# round trips to the servers, a link's bandwidth (the servers' or the load generators'), a CPU,
# the load generators, the middleware's single net thread, or nothing stated.
BOTTLENECKS = (
    "worker_pool_rtt",
    "server_link",
    "client_link",
    "server_cpu",
    "middleware_cpu",
    "client",
    "net_thread",
    "none_stated",
)


@dataclass(frozen=True)
class SeedEntry:
    """One seed experiment: its id, the report it comes from and where in that report."""

    id: str
    report: str
    where: str


@dataclass(frozen=True)
class SeedBottleneck:
    """The limit the seed's own text gives for a curve (one of BOTTLENECKS) and where it says so."""

    kind: str
    where: str


@dataclass(frozen=True)
class Excerpt:
    """Where in `tables/<file>.txt` each metric's published numbers are printed: a table printed
    row-wise gives each metric's line (1-based; its numbers are the line's last ones; two lines
    when the text splits the row), one printed column-wise gives the lines `rows` (first, last)
    and each metric's column. A metric the table prints only as parts (requests per second of
    each request type) gives the lines of its parts in `sums`: its value at each x is theirs
    added up. `scale` turns the printed unit into the metric's (µs to ms: 0.001)."""

    file: str
    lines: dict[str, int | list[int]] = field(default_factory=dict)
    rows: list[int] = field(default_factory=list)
    columns: dict[str, int] = field(default_factory=dict)
    sums: dict[str, list[int]] = field(default_factory=dict)
    scale: dict[str, float] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return TABLES_DIR / f"{self.file}.txt"


@dataclass(frozen=True)
class SeedCurve:
    """One published series: its configuration, x values and metrics named as summary.csv
    columns, the bottleneck the seed names and the excerpt its numbers are printed in (None when
    they were read from a figure). `x` None: a maximum the seed states as such, its one throughput
    value, compared whatever load it was reached at (`stated`)."""

    seed: str
    source: str
    label: str
    x: str | None
    config: dict[str, Any]
    bottleneck: SeedBottleneck
    points: dict[str, list[float]]
    excerpt: Excerpt | None = None

    def has(self, metric: str) -> bool:
        return metric in self.points

    @property
    def stated(self) -> bool:
        """A maximum the seed states as such (no x)."""
        return self.x is None

    def series(self, metric: str) -> tuple[list[float], list[float]]:
        values = list(self.points[metric])
        if self.x is None:
            return [math.nan] * len(values), values
        return list(self.points[self.x]), values


@dataclass(frozen=True)
class SeedEffect:
    """What a seed says one change did, between its series at `base` and at `variant` of
    `field`: the variant's saturation `lower` or `higher`, its knee moved by
    `knee_shift_clients` (negative: earlier) give or take `knee_tolerance_clients`; the sentence
    is `tables/<excerpt>.txt`."""

    seed: str
    source: str
    field: str
    base: str
    variant: str
    x: str
    saturation: str
    knee_shift_clients: float
    knee_tolerance_clients: float
    excerpt: str

    @property
    def excerpt_path(self) -> Path:
        return TABLES_DIR / f"{self.excerpt}.txt"


@cache
def all_effects() -> tuple[SeedEffect, ...]:
    data = yaml.safe_load(EFFECTS.read_text(encoding="utf-8"))
    effects = tuple(SeedEffect(**entry) for entry in data)
    for effect in effects:
        if effect.saturation not in ("lower", "higher"):
            raise ValueError(f"{EFFECTS}: {effect.seed}: saturation is lower or higher")
    return effects


def effects_for(seed: str) -> list[SeedEffect]:
    return [e for e in all_effects() if e.seed == seed]


@cache
def catalogue() -> dict[str, SeedEntry]:
    with CATALOGUE.open(newline="", encoding="utf-8") as handle:
        return {row["id"]: SeedEntry(**row) for row in csv.DictReader(handle)}


@cache
def all_curves() -> tuple[SeedCurve, ...]:
    data = yaml.safe_load(CURVES.read_text(encoding="utf-8"))
    return tuple(_curve(entry) for entry in data)


def _curve(entry: dict[str, Any]) -> SeedCurve:
    missing = [f for f in CONFIG_FIELDS if f not in entry["config"]]
    unknown = [f for f in entry["config"] if f not in CONFIG_FIELDS]
    kind = entry["bottleneck"]["kind"]
    if missing or unknown or kind not in BOTTLENECKS:
        raise ValueError(
            f"{CURVES}: {entry['seed']} {entry['label']!r}: config lacks {missing}, has unknown "
            f"{unknown}, or bottleneck {kind!r} is not one of {BOTTLENECKS}"
        )
    if entry.get("x") is None and set(entry["points"]) != {THROUGHPUT_OPS_PER_S}:
        raise ValueError(
            f"{CURVES}: {entry['seed']} {entry['label']!r}: a curve without x states one "
            "maximum: its points are throughput_ops_per_s only"
        )
    excerpt = entry.get("excerpt")
    return SeedCurve(
        seed=entry["seed"],
        source=entry["source"],
        label=entry["label"],
        x=entry.get("x"),
        config=dict(entry["config"]),
        bottleneck=SeedBottleneck(**entry["bottleneck"]),
        points=entry["points"],
        excerpt=Excerpt(**excerpt) if excerpt else None,
    )


def known_seed(seed: str) -> str | None:
    """Why `seed` is not a seed experiment id, or None."""
    if seed in catalogue():
        return None
    near = sorted(s for s in catalogue() if s.split("-")[0] == seed.split("-")[0])
    hint = f" (ids of that report: {', '.join(near[:8])}{', ...' if len(near) > 8 else ''})"
    return f"{seed!r} is no seed experiment{hint if near else ''}"


def curves_for(seed: str) -> list[SeedCurve]:
    return [c for c in all_curves() if c.seed == seed]


def _write_share(ratio: Any) -> Fraction | None:
    """SET:GET as the share of writes ("1:0" = 1, "0:1" = 0), None when not a ratio."""
    try:
        sets, gets = (int(part) for part in str(ratio).split(":"))
        return Fraction(sets, sets + gets)
    except (ValueError, ZeroDivisionError):
        return None


def same_value(column: str, ours: Any, theirs: Any) -> bool:
    """Whether a configured field agrees: numbers as numbers, a ratio as its share of writes."""
    if column == "workload.ratio":
        share = _write_share(ours)
        return share is not None and share == _write_share(theirs)
    if isinstance(ours, bool) or isinstance(theirs, bool):
        return str(ours).lower() == str(theirs).lower()
    try:
        return float(ours) == float(theirs)
    except (TypeError, ValueError):
        return str(ours) == str(theirs)


def differences(curve: SeedCurve, ours: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(field, ours, the seed's) for every field the curve fixes that `ours` (one series's
    configuration) does not share; the curve's x and its null fields are not compared, a field
    `ours` lacks differs."""
    found = []
    for column, theirs in curve.config.items():
        if theirs is None or column == curve.x:
            continue
        if column not in ours or not same_value(column, ours[column], theirs):
            found.append((column, ours.get(column), theirs))
    return found
