"""Fixtures shared by the tests of scripts/bench.py (`make bench`) and its ASL floor."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from cachelab.paths import repo_root

ROOT = repo_root()


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """scripts/bench.py as a module (it is a script, not part of the cachelab package)."""
    spec = importlib.util.spec_from_file_location("bench", ROOT / "scripts" / "bench.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = module
    spec.loader.exec_module(module)
    return module
