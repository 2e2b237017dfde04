"""Fixtures shared by the tests of scripts/bench (`make bench`) and its ASL floor."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from cachelab.paths import repo_root

ROOT = repo_root()


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """The scripts/bench package (not part of the cachelab package), every part imported."""
    scripts = str(ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    package = importlib.import_module("bench")
    importlib.import_module("bench.main")  # imports every part and the summary
    return package
