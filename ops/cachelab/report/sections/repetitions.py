"""The report's repetitions section for `run.repetitions: {min, max, ci_pct}`: per point the
repetitions it got and the 95 % intervals of its mean throughput and response time
(cachelab.repetitions, cachelab.analysis.intervals), and whether it became certain."""

from __future__ import annotations

from cachelab.columns import RESPONSE_TIME_MS, THROUGHPUT_OPS_PER_S
from cachelab.repetitions import RepetitionPolicy
from cachelab.report.sections.extras import ExtraSection
from cachelab.spec import Spec


def repetitions_section(spec: Spec, summary: list[dict[str, str]]) -> ExtraSection | None:
    """The section of the summary's rows (as text), or None for a fixed number of repetitions."""
    until = spec.run.until_certain
    if until is None:
        return None
    policy = RepetitionPolicy(spec.run)
    rows = []
    for point in sorted({int(r["point"]) for r in summary}):
        state = policy.certainty(point, summary)
        if state is None:
            continue
        tp, rt = state.throughput, state.response_time
        rows.append(
            {
                "point": point,
                "n": state.n,
                THROUGHPUT_OPS_PER_S: tp.mean,
                "± ops/s": tp.half_width,
                "± % (tp)": tp.relative_pct,
                RESPONSE_TIME_MS: rt.mean,
                "± ms": rt.half_width,
                "± % (rt)": rt.relative_pct,
                "verdict": state.verdict,
            }
        )
    note = (
        f"Each point ran at least {spec.run.repetitions} and at most {until.max} times, until "
        f"the 95 % Student-t interval of its mean throughput and of its mean response time were "
        f"each within ±{until.ci_pct:g} % of the mean. "
        f"{sum(r['verdict'] == 'certain' for r in rows)} of {len(rows)} points became certain."
    )
    return ExtraSection("repetitions", "Repetitions until certain", note, rows)
