"""The report's factorial figure: a response's allocation of variation on the first of ``axes``."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from cachelab.report import plots
from cachelab.report.sections.factorial import FactorialResponse


def variation(axes: Sequence[Axes], response: FactorialResponse) -> None:
    assert response.result is not None
    plots.plot_factorial_variation(axes[0], response.result, f"Variation of {response.title}")
