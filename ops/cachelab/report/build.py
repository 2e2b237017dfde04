"""Build ``report/index.html``, its PNG figures and its CSV tables from a results folder
(docs/interfaces.md §4), as a pipeline: the folder read once (`report.read`), analysed once
(`report.analyse`), its sections computed from the analysis (`report.sections`), the figures
drawn from them (`report.figures`), the tables written (`report.tables`) and the page rendered
from one context (`report.render`).

The report shows throughput and response time against the spec's ``report.x`` (one line per
series; every number is the mean over repetitions with its 95 % Student-t interval and the error
bars are those intervals, percentiles come from the merged histograms:
``cachelab.analysis.pointstats``), the middleware time breakdown, the client response-time
histogram and percentiles, the interactive-law check per point, M/M/1 and M/M/m predictions of
the middleware queue, an MVA model of the throughput curve, and, when the sweep is a 2-level
design over two or more factors, the 2^k r factorial analysis.
"""

from __future__ import annotations

from pathlib import Path

from cachelab.report.analyse import analyse
from cachelab.report.figures.plan import draw, figure_plans
from cachelab.report.read import SUMMARY_FILE, ReportError, read_results
from cachelab.report.render import render, report_context
from cachelab.report.search_report import build_search_report, is_search
from cachelab.report.sections import report_sections
from cachelab.report.tables import write_factorial_csv, write_point_csvs

REPORT_DIR = "report"


def build_report(results_dir: Path) -> Path:
    """Write ``<results_dir>/report/index.html`` plus PNG figures and CSV tables (points.csv,
    models.csv, bottlenecks.csv and, for a 2^k design, factorial.csv); return the path.

    Runs that failed, were cut short (partial) or measured nothing are left out and counted in
    the header, so an interrupted experiment still gets a report.

    Raises
    ------
    ReportError
        If ``spec.yaml`` or ``summary.csv`` is missing or malformed, or no run is usable.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    if is_search(results_dir) and not (results_dir / SUMMARY_FILE).is_file():
        return build_search_report(results_dir)
    read = read_results(results_dir)
    analysed = analyse(read)
    sections = report_sections(analysed)
    out = results_dir / REPORT_DIR
    out.mkdir(exist_ok=True)
    figures = draw(figure_plans(analysed, sections), out)
    write_factorial_csv(out, sections.factorial)
    write_point_csvs(out, analysed)
    return render(report_context(analysed, sections, figures), out)
