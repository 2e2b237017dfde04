"""The report of a search folder (`cachelab report` on what `cachelab search` wrote): the answer,
the calibrated MVA's saturation throughput and the bottleneck beside it (cachelab.search.model),
the figure of every step and the steps' table. Main thread."""

from __future__ import annotations

import html
import math
from pathlib import Path

from cachelab.columns import ACHIEVED_FRAC, P50_MS, P99_MS, THROUGHPUT_OPS_PER_S
from cachelab.results.metadata import read_metadata
from cachelab.search.driver import SEARCH_CSV, SearchSettings, read_steps
from cachelab.search.model import ModelBeside
from cachelab.slo import parse_slo

ANSWER_FILE = "answer.txt"
SEARCH_FIGURE = "search.png"
COLUMNS = [
    ("step", "step"),
    ("attempt", "attempt"),
    ("load", "load"),
    (THROUGHPUT_OPS_PER_S, "achieved ops/s"),
    (ACHIEVED_FRAC, "achieved / offered"),
    (P50_MS, "p50 ms"),
    (P99_MS, "p99 ms"),
    ("slo_value_ms", "SLO statistic ms"),
    ("verdict", "verdict"),
    ("note", "note"),
]


def is_search(folder: Path) -> bool:
    return (folder / "search.json").is_file() and (folder / SEARCH_CSV).is_file()


def _cell(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return html.escape(value)
    if not math.isfinite(number):
        return ""
    return f"{number:,.4g}" if abs(number) < 1000 else f"{number:,.0f}"


def model_rows(model: ModelBeside) -> list[tuple[str, str]]:
    """The table beside the answer: what the search found and what the model predicts."""
    calibrated = f"the closed-loop capacity probe ({model.run})" if model.probe else model.run
    return [
        ("answer's load", f"{model.load:,.6g}"),
        ("the model calibrated with", calibrated),
        ("throughput measured at the answer", f"{model.throughput_ops_per_s:,.0f} ops/s"),
        ("calibrated MVA: saturation throughput", f"{model.saturation_ops_per_s:,.0f} ops/s"),
        ("the station setting it", model.model_bottleneck),
        ("the answer's share of the saturation", f"{model.answer_frac:.0%}"),
        (
            "bottleneck at the answer (operational analysis)",
            f"{model.bottleneck} (utilisation {model.bottleneck_utilisation:.0%})",
        ),
    ]


def build_search_report(folder: Path) -> Path:
    """Write ``<folder>/report/index.html`` (with search.png copied beside it); return its path."""
    settings = SearchSettings.load(folder)
    slo = parse_slo(settings.slo)
    steps = read_steps(folder)
    answer_path = folder / ANSWER_FILE
    answer = answer_path.read_text().strip() if answer_path.is_file() else "no answer yet"
    model = ModelBeside.read(folder)
    metadata = read_metadata(folder / "metadata.json")
    out = folder / "report"
    out.mkdir(exist_ok=True)
    figure = folder / SEARCH_FIGURE
    if figure.is_file():
        (out / SEARCH_FIGURE).write_bytes(figure.read_bytes())
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>cachelab search: {html.escape(folder.name)}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;"
        "padding:0 1rem}table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid"
        " #ddd;padding:.2rem .45rem;text-align:right}td.l,th.l{text-align:left}"
        "img{max-width:100%}</style></head><body>",
        f"<h1>Search: {html.escape(slo.text)} on {html.escape(settings.axis)}</h1>",
        f"<p class='sub'>{html.escape(str(metadata.get('started', '')))}</p>",
        "<h2 id='answer'>Answer</h2>",
        f"<p>{html.escape(answer)}</p>",
        "<h2 id='model'>Beside the model</h2>",
    ]
    if model is None:
        parts.append(
            "<p>No model: no step met the SLO, or the answer's run has neither the "
            "middleware's stamps nor CPU samples to calibrate it with.</p>"
        )
    else:
        parts.append("<table>")
        for name, value in model_rows(model):
            parts.append(
                f"<tr><th class='l'>{html.escape(name)}</th><td>{html.escape(value)}</td></tr>"
            )
        parts.append("</table>")
        parts.append(
            "<p>Each station's demand comes from that run's CPU samples and the middleware's "
            "stamps; the saturation is the ceiling the model's throughput approaches as the "
            "load grows. The bottleneck at the answer is the station most utilised in the "
            "answer's own run.</p>"
        )
    if figure.is_file():
        parts.append(f"<figure><img src='{SEARCH_FIGURE}' alt='SLO statistic per step'></figure>")
    parts.append("<h2 id='steps'>Steps</h2><table><tr>")
    parts += [f"<th>{html.escape(title)}</th>" for _, title in COLUMNS]
    parts.append("</tr>")
    for row in steps:
        cells = [
            f"<td class='l'>{_cell(row.get(c, ''))}</td>"
            if c in ("verdict", "note")
            else f"<td>{_cell(row.get(c, ''))}</td>"
            for c, _ in COLUMNS
        ]
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</table></body></html>")
    index = out / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    return index
