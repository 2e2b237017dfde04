"""Access to the recorded results fixture and its generator (tests/data/make_results_sample.py)."""

from __future__ import annotations

import copy
import importlib.util
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
SAMPLE_DIR = DATA_DIR / "results-sample"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_results_sample", DATA_DIR / "make_results_sample.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def copy_sample(tmp_path: Path) -> Path:
    """The committed fixture copied into tmp_path (the report writes into its folder)."""
    target = tmp_path / "results-sample"
    shutil.copytree(SAMPLE_DIR, target, ignore=shutil.ignore_patterns("report"))
    return target


def sample_spec(**changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = copy.deepcopy(generator().SAMPLE_SPEC)
    spec.update(changes)
    return spec
