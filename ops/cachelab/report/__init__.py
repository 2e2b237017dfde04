"""The HTML report of a results folder and the comparison of several (docs/interfaces.md §4).

``build`` drives the report's stages: ``read`` (the folder, once), ``analyse``, ``sections``
(typed data), ``figures`` (each takes an ``ax``), ``tables`` (the CSVs) and ``render`` (the
page); ``compare`` overlays several folders. Called from the CLI's thread only.
"""

from cachelab.report.build import build_report
from cachelab.report.read import ReportError
from cachelab.report.render import format_number
from cachelab.report.sections.latency import latency_distributions

__all__ = ["ReportError", "build_report", "format_number", "latency_distributions"]
