"""The HTML report of a results folder and the comparison of several (docs/interfaces.md §4).

``build`` assembles ``report/index.html``; ``analysis`` derives its tables; ``plots`` and
``plots_analysis`` draw its figures (each takes an ``ax``); ``compare`` overlays several folders.
Called from the CLI's thread only.
"""

from cachelab.report.build import (
    ReportError,
    build_report,
    format_number,
    latency_distributions,
)

__all__ = ["ReportError", "build_report", "format_number", "latency_distributions"]
