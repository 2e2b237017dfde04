"""Where the repository is: the one answer for every part that reads its files (jars, charts,
manifests, scripts, the JVM flags)."""

from __future__ import annotations

import os
from pathlib import Path

# The file that marks the root of a checkout (the package lives in ops/cachelab/).
MARKER = Path("ops") / "pyproject.toml"


class RepoRootError(RuntimeError):
    """The checkout cannot be found (an installed copy of the package without its repository)."""


def repo_root(start: Path | None = None) -> Path:
    """$CACHELAB_ROOT, else the nearest folder above `start` (default: this package) holding
    ops/pyproject.toml."""
    env = os.environ.get("CACHELAB_ROOT")
    if env:
        return Path(env).resolve()
    here = (start or Path(__file__)).resolve()
    for parent in here.parents:
        if (parent / MARKER).is_file():
            return parent
    raise RepoRootError(
        f"cannot find the cachelab repository above {here} (no {MARKER} there); "
        "set CACHELAB_ROOT to the checkout"
    )


def tools_dir() -> Path:
    """Where `make k8s-tools` builds the Kubernetes tools: $TOOLS_DIR, else the per-machine cache
    every clone shares, ${CACHELAB_CACHE:-${XDG_CACHE_HOME:-~/.cache}/cachelab}/tools (the
    scripts' scripts/cache-dir.sh)."""
    env = os.environ.get("TOOLS_DIR")
    if env:
        return Path(env)
    cache = os.environ.get("CACHELAB_CACHE")
    if cache:
        return Path(cache) / "tools"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "cachelab" / "tools"
