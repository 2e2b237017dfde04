"""2^k r full factorial designs with replication (Jain ch. 17-18, the sign-table method).

k factors, each at two levels coded -1 (low) and +1 (high); every one of the 2^k combinations is
measured r times. The additive model is

    y_ij = q0 + sum_A q_A x_Ai + sum_{A<B} q_AB x_Ai x_Bi + ... + e_ij

and the sign-table method gives q_j = (1/2^k) sum_i s_ij ybar_i, SS_j = 2^k r q_j^2,
SSE = sum_ij (y_ij - ybar_i)^2, SST = SSY - SS0 = sum_j SS_j + SSE, and the fraction of variation
explained by term j is SS_j / SST. With r > 1 each effect gets a confidence interval
q_j -/+ t[1 - alpha/2; 2^k (r - 1)] s_e / sqrt(2^k r), s_e = sqrt(SSE / (2^k (r - 1))).

Rows are in standard order with the *first* factor varying fastest, as in ASL 2017 §6 (M, W, S)
and ASL 2019 §4 (S, MW, WT). Term columns come ordered by interaction size: A, B, C, AB, AC, BC,
ABC for k = 3.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from cachelab.columns import THROUGHPUT_OPS_PER_S

FloatArray = npt.NDArray[np.float64]

INTERCEPT = "I"
TERM_SEPARATOR = "·"


def terms(factors: Sequence[str]) -> list[tuple[int, ...]]:
    """Factor-index tuples of every effect column, ordered by size: (0,), (1,), (0, 1), ..."""
    k = len(factors)
    return [combo for size in range(1, k + 1) for combo in itertools.combinations(range(k), size)]


def term_names(factors: Sequence[str]) -> list[str]:
    """Column names of the sign table, intercept first: I, A, B, A·B for k = 2."""
    return [INTERCEPT] + [TERM_SEPARATOR.join(factors[i] for i in t) for t in terms(factors)]


def design_matrix(k: int) -> npt.NDArray[np.int64]:
    """Coded levels (-1/+1) of the 2^k runs in standard order, first factor fastest."""
    if k < 1:
        raise ValueError(f"k: must be >= 1, got {k}")
    rows = np.arange(2**k)
    return np.stack([np.where((rows >> j) & 1, 1, -1) for j in range(k)], axis=1).astype(np.int64)


def sign_table(k: int) -> npt.NDArray[np.int64]:
    """The 2^k x 2^k sign table: column 0 is I, then one column per effect (see ``terms``)."""
    levels = design_matrix(k)
    columns = [np.ones(2**k, dtype=np.int64)]
    columns += [np.prod(levels[:, list(t)], axis=1) for t in terms([""] * k)]
    return np.stack(columns, axis=1)


@dataclass(frozen=True)
class FactorialResult:
    """Effects and allocation of variation of a 2^k r design.

    Arrays indexed by term follow ``names`` (intercept first). ``ss`` and ``variation_pct``
    hold the intercept too (SS0; its variation share is reported as NaN).
    """

    factors: tuple[str, ...]
    names: tuple[str, ...]
    responses: FloatArray  # shape (2^k, r)
    effects: FloatArray  # q_j
    ss: FloatArray  # SS_j, SS0 at index 0
    ssy: float
    sst: float
    sse: float
    confidence: float
    ci_low: FloatArray
    ci_high: FloatArray

    @property
    def k(self) -> int:
        return len(self.factors)

    @property
    def repetitions(self) -> int:
        return int(self.responses.shape[1])

    @property
    def row_means(self) -> FloatArray:
        return np.asarray(self.responses.mean(axis=1), dtype=np.float64)

    @property
    def variation_pct(self) -> FloatArray:
        """100 SS_j / SST per term (NaN for the intercept)."""
        pct = 100.0 * self.ss / self.sst if self.sst > 0 else np.zeros_like(self.ss)
        pct = pct.copy()
        pct[0] = math.nan
        return pct

    @property
    def error_pct(self) -> float:
        """100 SSE / SST, the share of variation left to experimental error."""
        return 100.0 * self.sse / self.sst if self.sst > 0 else 0.0

    def effect(self, name: str) -> float:
        return float(self.effects[self._index(name)])

    def variation(self, name: str) -> float:
        return float(self.variation_pct[self._index(name)])

    def significant(self, name: str) -> bool:
        """True when the effect's confidence interval excludes zero (needs r > 1)."""
        i = self._index(name)
        low, high = self.ci_low[i], self.ci_high[i]
        return bool(np.isfinite(low) and (low > 0 or high < 0))

    def table(self) -> pd.DataFrame:
        """One row per term: effect, CI bounds, SS, % of variation; plus an error row."""
        frame = pd.DataFrame(
            {
                "term": list(self.names),
                "effect": self.effects,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "ss": self.ss,
                "variation_pct": self.variation_pct,
            }
        )
        error = pd.DataFrame(
            {
                "term": ["error"],
                "effect": [math.nan],
                "ci_low": [math.nan],
                "ci_high": [math.nan],
                "ss": [self.sse],
                "variation_pct": [self.error_pct],
            }
        )
        return pd.concat([frame, error], ignore_index=True)

    def _index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"term: {name!r} (expected one of {list(self.names)})") from None


def analyze(
    responses: Sequence[Sequence[float]] | FloatArray,
    factors: Sequence[str],
    confidence: float = 0.90,
) -> FactorialResult:
    """Analyse a 2^k r design.

    Parameters
    ----------
    responses
        Shape (2^k, r): row i holds the r measurements of run i in standard order (first factor
        varies fastest). r may be 1, in which case SSE = 0 and no intervals are computed.
    factors
        The k factor names, in the order of the design columns.
    confidence
        Two-sided confidence level of the effect intervals (Jain uses 90%).

    Examples
    --------
    >>> r = analyze([[15], [45], [25], [75]], ["A", "B"])  # Jain Example 17.1
    >>> [float(q) for q in r.effects]
    [40.0, 20.0, 10.0, 5.0]
    """
    y = np.asarray(responses, dtype=np.float64)
    if y.ndim == 1:
        y = y[:, np.newaxis]
    k = len(factors)
    if k < 1:
        raise ValueError("factors: need at least one factor")
    if len(set(factors)) != k:
        raise ValueError(f"factors: names must be distinct, got {list(factors)}")
    if y.ndim != 2 or y.shape[0] != 2**k or y.shape[1] < 1:
        raise ValueError(f"responses: shape {y.shape} (expected: ({2**k}, r) for k = {k} factors)")
    if not np.all(np.isfinite(y)):
        raise ValueError("responses: contains NaN or infinite values")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: must be in (0, 1), got {confidence}")

    runs, reps = y.shape
    signs = sign_table(k).astype(np.float64)
    means = y.mean(axis=1)
    effects = signs.T @ means / runs
    ss = runs * reps * effects**2
    ssy = float(np.sum(y**2))
    sse = float(np.sum((y - means[:, np.newaxis]) ** 2))
    sst = ssy - float(ss[0])

    if reps > 1:
        dof = runs * (reps - 1)
        s_e = math.sqrt(sse / dof)
        s_q = s_e / math.sqrt(runs * reps)
        t = float(stats.t.ppf(1 - (1 - confidence) / 2, dof))
        ci_low, ci_high = effects - t * s_q, effects + t * s_q
    else:
        ci_low = np.full_like(effects, math.nan)
        ci_high = np.full_like(effects, math.nan)

    return FactorialResult(
        factors=tuple(factors),
        names=tuple(term_names(factors)),
        responses=y,
        effects=effects,
        ss=ss,
        ssy=ssy,
        sst=sst,
        sse=sse,
        confidence=confidence,
        ci_low=ci_low,
        ci_high=ci_high,
    )


def two_level_factors(frame: pd.DataFrame, axes: Sequence[str]) -> list[str] | None:
    """The axes if they form a 2-level design (>= 2 factors, each exactly 2 values), else None."""
    if len(axes) < 2:
        return None
    for axis in axes:
        if axis not in frame.columns or frame[axis].nunique(dropna=True) != 2:
            return None
    return list(axes)


def response_values(frame: pd.DataFrame, response: str) -> pd.Series:
    """A response column; ``"1/<column>"`` gives its reciprocal (ASL 2017 analysed 1/RT)."""
    inverse = response.startswith("1/")
    column = response[2:] if inverse else response
    if column not in frame.columns:
        raise ValueError(f"response: column {column!r} not in summary (have {list(frame.columns)})")
    values = pd.to_numeric(frame[column], errors="coerce")
    if inverse:
        if (values <= 0).any():
            raise ValueError(f"response: {column} has values <= 0, cannot take 1/{column}")
        values = 1.0 / values
    return values


def analyze_summary(
    summary_csv: Path | str | pd.DataFrame,
    factors: Sequence[str],
    response: str = THROUGHPUT_OPS_PER_S,
    confidence: float = 0.90,
) -> FactorialResult:
    """Analyse the ``summary.csv`` of a 2^k spec (one row per point and repetition).

    Parameters
    ----------
    summary_csv
        Path of a results folder's ``summary.csv`` (or the frame itself).
    factors
        Column names of the factors (sweep axes, dotted paths such as ``topology.workers``).
        Each must take exactly two values; the smaller is the -1 level.
    response
        The response column, or ``"1/<column>"`` for its reciprocal.

    Raises
    ------
    ValueError
        If a factor is missing or not 2-level, a cell is empty, or cells have different
        numbers of repetitions. Rows with ``status == "failed"`` are ignored.
    """
    frame = summary_csv if isinstance(summary_csv, pd.DataFrame) else pd.read_csv(summary_csv)
    if "status" in frame.columns:
        frame = frame[frame["status"] != "failed"]
    levels: list[tuple[float, float]] = []
    for factor in factors:
        if factor not in frame.columns:
            raise ValueError(f"factors: column {factor!r} not in summary")
        values = sorted(frame[factor].dropna().unique().tolist())
        if len(values) != 2:
            raise ValueError(f"factors: {factor} takes {len(values)} values {values} (expected: 2)")
        levels.append((values[0], values[1]))

    y_all = response_values(frame, response)
    cells: list[list[float]] = []
    for row in design_matrix(len(factors)):
        mask = np.ones(len(frame), dtype=bool)
        description = []
        for factor, (low, high), coded in zip(factors, levels, row, strict=True):
            level = high if coded > 0 else low
            mask &= (frame[factor] == level).to_numpy()
            description.append(f"{factor}={level}")
        values = y_all[mask].dropna().tolist()
        if not values:
            raise ValueError(f"summary: no measurement for cell {', '.join(description)}")
        cells.append([float(v) for v in values])
    reps = {len(c) for c in cells}
    if len(reps) != 1:
        raise ValueError(
            f"summary: cells have different repetition counts {sorted(reps)} (expected: equal)"
        )
    return analyze(np.asarray(cells), factors, confidence)
