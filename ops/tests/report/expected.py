"""The report outputs a change must not move: per results folder, its CSVs and the text of
its index.html with the figures' <img> tags taken out (a figure's pixels may change; what the
page says may not). Kept under tests/data/report-expected/<folder>/ and written by
tests/data/make_report_expected.py."""

from __future__ import annotations

import re
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
EXPECTED_DIR = DATA_DIR / "report-expected"
FOLDERS = ("results-recorded-2k", "results-recorded-quickstart")
CSV_FILES = ("points.csv", "models.csv", "bottlenecks.csv", "factorial.csv")
PAGE_TEXT = "index.txt"
IMAGE = re.compile(r"<img\b[^>]*>")


def page_text(html: str) -> str:
    """The page without its images."""
    return IMAGE.sub("<img>", html)


def outputs(report_dir: Path) -> dict[str, str]:
    """The CSVs that the report wrote and its page text, by file name."""
    found = {
        name: (report_dir / name).read_text() for name in CSV_FILES if (report_dir / name).is_file()
    }
    found[PAGE_TEXT] = page_text((report_dir / "index.html").read_text(encoding="utf-8"))
    return found
