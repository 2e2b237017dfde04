"""Where the local runner finds a JDK >= 21 and the two jars (the repository: cachelab.paths)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cachelab.paths import repo_root
from cachelab.processes import ProcessError

MIN_JAVA = 21


def _java_version(java: str) -> int | None:
    try:
        done = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)', done.stderr + done.stdout)
    return int(match.group(1)) if match else None


def find_java(root: Path) -> str:
    """A `java` >= 21: scripts/find-jdk.sh, then $JAVA_HOME, PATH, /usr/lib/jvm/*."""
    candidates = []
    script = root / "scripts" / "find-jdk.sh"
    if script.is_file():
        done = subprocess.run(
            [str(script)], capture_output=True, text=True, timeout=30, check=False
        )
        if done.returncode == 0 and done.stdout.strip():
            candidates.append(str(Path(done.stdout.strip()) / "bin" / "java"))
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    candidates += sorted(str(p) for p in Path("/usr/lib/jvm").glob("*/bin/java"))
    for java in candidates:
        version = _java_version(java)
        if version is not None and version >= MIN_JAVA:
            return java
    raise ProcessError(
        f"no Java >= {MIN_JAVA} found (tried {', '.join(candidates) or 'nothing'}); "
        "`make jdk` explains how to get one"
    )


@dataclass(frozen=True)
class Toolchain:
    """The java binary and the jars of one local run."""

    root: Path
    java: str
    middleware_jar: Path
    loadgen_jar: Path

    @classmethod
    def discover(cls, root: Path | None = None, need_middleware: bool = True) -> Toolchain:
        root = root or repo_root()
        middleware_jar = root / "middleware" / "target" / "middleware.jar"
        loadgen_jar = root / "loadgen" / "target" / "loadgen.jar"
        needed = [loadgen_jar] + ([middleware_jar] if need_middleware else [])
        missing = [str(p) for p in needed if not p.is_file()]
        if missing:
            raise ProcessError(f"missing {', '.join(missing)}: run `make build` first")
        return cls(root, find_java(root), middleware_jar, loadgen_jar)

    def jars(self) -> dict[str, Path]:
        return {"middleware": self.middleware_jar, "loadgen": self.loadgen_jar}
