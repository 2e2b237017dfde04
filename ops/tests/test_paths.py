"""One answer to "where is the repository" (cachelab.paths), used by both runners and the tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import cachelab
from cachelab.paths import RepoRootError, repo_root

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_root_is_the_checkout_holding_this_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CACHELAB_ROOT", raising=False)
    root = repo_root()
    assert root == CHECKOUT
    assert Path(cachelab.__file__).resolve().is_relative_to(root)
    # what both runners read from it
    assert (root / "manifests" / "base" / "kustomization.yaml").is_file()
    assert (root / "scripts" / "find-jdk.sh").is_file()


def test_cachelab_root_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CACHELAB_ROOT", str(tmp_path))
    assert repo_root() == tmp_path.resolve()


def test_no_checkout_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CACHELAB_ROOT", raising=False)
    installed = tmp_path / "site-packages" / "cachelab" / "paths.py"
    with pytest.raises(RepoRootError, match=r"cannot find the cachelab repository above .*; set"):
        repo_root(installed)


def test_every_part_uses_the_one_repo_root() -> None:
    from cachelab.k8s import runner as k8s_runner
    from cachelab.k8s import target as k8s_target
    from cachelab.local import target as local_target
    from cachelab.local import tools

    for module in (k8s_runner, k8s_target, local_target, tools):
        assert module.repo_root is repo_root, module.__name__
    sources = [p for p in (CHECKOUT / "ops" / "cachelab").rglob("*.py") if p.name != "paths.py"]
    defining = [str(p) for p in sources if "def repo_root" in p.read_text()]
    assert defining == []


def test_no_test_finds_the_checkout_by_itself() -> None:
    tests = CHECKOUT / "ops" / "tests"
    found = []
    for path in tests.rglob("*.py"):
        # parents[k] of a file k folders below the checkout is the checkout
        depth = len(path.relative_to(CHECKOUT).parts) - 1
        own = re.compile(rf"Path\(__file__\)(\.resolve\(\))?\.parents\[{depth}\]")
        if path.name != "test_paths.py" and own.search(path.read_text()):
            found.append(str(path.relative_to(CHECKOUT)))
    assert found == [], "use cachelab.paths.repo_root()"
