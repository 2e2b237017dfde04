"""The report's 2^k r factorial section, when the sweep is a 2-level design over two or more
factors: per response (throughput, response time, its inverse) the effects with their intervals
and the allocation of variation (`cachelab.analysis.factorial`), and factorial.csv's table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cachelab.analysis import factorial
from cachelab.columns import RESPONSE_TIME_MS, THROUGHPUT_OPS_PER_S
from cachelab.report import plots
from cachelab.report.analyse import AnalysedResults

FACTORIAL_RESPONSES = (
    (THROUGHPUT_OPS_PER_S, "throughput", "factorial_tp"),
    (RESPONSE_TIME_MS, "response time", "factorial_rt"),
    ("1/response_time_ms", "1 / response time", "factorial_inv_rt"),
)
FACTORIAL_ERROR_LIMIT_PCT = 5.0


@dataclass(frozen=True)
class Factor:
    name: str
    low: Any
    high: Any


@dataclass(frozen=True)
class Term:
    term: str  # short names
    effect: float
    ci_low: float
    ci_high: float
    variation_pct: float
    significant: bool


@dataclass(frozen=True)
class FactorialResponse:
    """One response analysed (``result``), or why it was not (``error``)."""

    response: str  # the summary's column, or 1/column
    title: str
    key: str  # the figure's name without .png
    result: factorial.FactorialResult | None = None
    error: str | None = None
    factors: list[Factor] = field(default_factory=list)
    rows: list[Term] = field(default_factory=list)

    @property
    def figure(self) -> str:
        return f"{self.key}.png"

    @property
    def repetitions(self) -> int:
        return self.result.repetitions if self.result else 0

    @property
    def confidence_pct(self) -> int:
        return round(100 * self.result.confidence) if self.result else 0

    @property
    def sst(self) -> float:
        return self.result.sst if self.result else float("nan")

    @property
    def sse(self) -> float:
        return self.result.sse if self.result else float("nan")

    @property
    def error_pct(self) -> float:
        return self.result.error_pct if self.result else float("nan")

    @property
    def error_warning(self) -> bool:
        return self.error_pct > FACTORIAL_ERROR_LIMIT_PCT


def significant(row: pd.Series) -> bool:
    """Whether a term's effect interval excludes zero (never for the error row)."""
    return bool(
        row["term"] != "error"
        and not pd.isna(row["ci_low"])
        and (row["ci_low"] > 0 or row["ci_high"] < 0)
    )


def factorial_frame(results: Sequence[tuple[str, factorial.FactorialResult]]) -> pd.DataFrame:
    """factorial.csv: the 2^k r tables of the report, one row per response and term (the
    error last), with the factors' full names; columns as `cachelab.columns` catalogues them."""
    frames = []
    for response, result in results:
        table = result.table()
        frames.append(
            pd.DataFrame(
                {
                    "response": response,
                    "term": table["term"],
                    "effect": table["effect"],
                    "effect_ci_low": table["ci_low"],
                    "effect_ci_high": table["ci_high"],
                    "ss": table["ss"],
                    "variation_pct": table["variation_pct"],
                    "significant": [significant(r) for _, r in table.iterrows()],
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _terms(result: factorial.FactorialResult) -> list[Term]:
    return [
        Term(
            term=plots.short_factor_term(str(r["term"])),
            effect=r["effect"],
            ci_low=r["ci_low"],
            ci_high=r["ci_high"],
            variation_pct=r["variation_pct"],
            significant=significant(r),
        )
        for _, r in result.table().iterrows()
    ]


def factorial_section(analysed: AnalysedResults) -> list[FactorialResponse]:
    """Per response, its analysis; none when the sweep is no 2-level design."""
    summary = analysed.summary
    factors = factorial.two_level_factors(summary, analysed.axes)
    if factors is None:
        return []
    levels = {f: sorted(summary[f].dropna().unique().tolist()) for f in factors}
    named = [Factor(f, levels[f][0], levels[f][1]) for f in factors]
    responses = []
    for response, title, key in FACTORIAL_RESPONSES:
        try:
            result = factorial.analyze_summary(summary, factors, response=response)
        except ValueError as exc:
            responses.append(FactorialResponse(response, title, key, error=str(exc)))
            continue
        responses.append(
            FactorialResponse(response, title, key, result, None, named, _terms(result))
        )
    return responses


def analysed_frame(responses: Sequence[FactorialResponse]) -> pd.DataFrame:
    """factorial.csv's table of the responses analysed (empty: none was)."""
    return factorial_frame([(r.response, r.result) for r in responses if r.result is not None])
