"""Writes `report-expected/<folder>/`: the CSVs and the page text (images taken out) of the
report of each results folder that tests/report/test_report_expected.py holds the report to.
Run it only when a change to the report is meant to move them, and read the diff.

    cd ops && ../.venv/bin/python tests/data/make_report_expected.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from report.expected import EXPECTED_DIR, FOLDERS, outputs  # noqa: E402

from cachelab.report import build_report  # noqa: E402


def main() -> None:
    for folder in FOLDERS:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / folder
            shutil.copytree(HERE / folder, target, ignore=shutil.ignore_patterns("report"))
            build_report(target)
            expected = EXPECTED_DIR / folder
            shutil.rmtree(expected, ignore_errors=True)
            expected.mkdir(parents=True)
            for name, text in outputs(target / "report").items():
                (expected / name).write_text(text)


if __name__ == "__main__":
    main()
