"""Writes `model-numbers.json`: the model numbers the report computes for the recorded runs
that emulate no RTT (no `rtt_*` columns, no `network` in their spec), so that a change to the
models is proven not to move them (tests/analysis/test_link_delays.py).

Per results folder: every row of models.csv (point, model, metric, measured, predicted,
calibrated_at), each line's asymptotic bounds and its out-of-sample MVA curve over 1..N_max.
Floats are written with repr, so reading them back gives the same bits.

    cd ops && ../.venv/bin/python tests/data/make_model_numbers.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from cachelab.report.analyse import analyse_results

HERE = Path(__file__).parent
FOLDERS = (
    "results-recorded-quickstart",
    "results-recorded-quickstart-staging",
    "results-recorded-worker-pool",
)
OUTPUT = HERE / "model-numbers.json"


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def model_numbers(results_dir: Path) -> dict[str, Any]:
    """The numbers of one results folder, as plain JSON."""
    section = analyse_results(results_dir).section
    return {
        "rows": [
            [
                r.point,
                r.model,
                r.metric,
                _number(r.measured),
                _number(r.predicted),
                r.calibrated_at,
            ]
            for r in section.model_rows
        ],
        "bounds": {
            label: [b.cycle_floor_ms, b.ceiling_ops_per_s, b.think_time_ms]
            for label, b in section.bounds.items()
        },
        "curves": {
            label: [list(ns), list(xs), list(bounds)]
            for label, (ns, xs, bounds) in section.curves.items()
        },
    }


def _lines(found: dict[str, dict[str, Any]]) -> str:
    """JSON with one row, bound or curve per line (reviewable diffs)."""
    folders = []
    for name, numbers in found.items():
        parts = []
        for key, value in numbers.items():
            if isinstance(value, list):
                items = [json.dumps(v) for v in value]
            else:
                items = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            inner = ",\n   ".join(items)
            bracket = "[]" if isinstance(value, list) else "{}"
            parts.append(f'  "{key}": {bracket[0]}\n   {inner}\n  {bracket[1]}')
        folders.append(f" {json.dumps(name)}: {{\n" + ",\n".join(parts) + "\n }")
    return "{\n" + ",\n".join(folders) + "\n}\n"


def main() -> None:
    found = {name: model_numbers(HERE / name) for name in FOLDERS}
    text = _lines(found)
    assert json.loads(text) == found
    OUTPUT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
