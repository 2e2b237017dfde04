"""The report's seed section: the run's series beside the matching curves the seed published
(cachelab.seeds) and the fidelity table (cachelab.fidelity); figures.seeds draws the overlay."""

from __future__ import annotations

from dataclasses import dataclass, field

from cachelab.fidelity import HEADER, FidelityError, FidelityRow, fidelity_rows_read, table_rows
from cachelab.report.read import ReadResults
from cachelab.report.sections.extras import ExtraSection

SEEDS_FIGURE = "seeds.png"
NOTE = (
    "The seed's published throughput beside ours, each divided by its own maximum (the "
    "seeds ran on 2016-2019 cloud VMs, so shapes, knees and ratios compare, not absolute "
    "numbers); the dotted line is the knee's 95 %. Fidelity: ours / seed's."
)


@dataclass(frozen=True)
class SeedsSection(ExtraSection):
    curves: list[FidelityRow] = field(default_factory=list)

    @property
    def x_columns(self) -> list[str]:
        """The x of each panel, one per x the curves have."""
        return sorted({row.x for row in self.curves})


def seeds_section(read: ReadResults) -> SeedsSection | None:
    """The section, or None when no published curve matches the run's series."""
    try:
        rows = fidelity_rows_read(
            read.results_dir, read.spec, read.summary_rows, read.experiment, read.summary
        )
    except FidelityError:
        return None
    table = [dict(zip(HEADER, cells, strict=True)) for cells in table_rows(rows)]
    return SeedsSection("seeds", "The seed beside this run", NOTE, table, [SEEDS_FIGURE], rows)
