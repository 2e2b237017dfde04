"""Tests that build whole reports (every figure with matplotlib, tens of seconds each) carry the
`report` marker, which keeps them out of the fast unit tier (`make test-unit`) and in
`make test-integration`."""

from __future__ import annotations

from pathlib import Path

import pytest

WHOLE_REPORT_MODULES = {
    "test_report.py",
    "test_models.py",
    "test_compare.py",
    "test_recorded_reports.py",
    "test_report_expected.py",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).name in WHOLE_REPORT_MODULES:
            item.add_marker(pytest.mark.report)
