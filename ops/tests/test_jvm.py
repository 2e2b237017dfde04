"""One place for the JVM flags: the poms' jib <jvmFlags>, read by the local runner and the bench."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

from cachelab import jvm
from cachelab.local.commands import loadgen_argv, middleware_argv
from cachelab.paths import repo_root
from cachelab.spec import parse_spec

ROOT = repo_root()
JVM_FLAG = re.compile(r"-XX:[+-]?\w+|-Xm[sx]\d")


def test_the_flags_are_the_images_without_its_container_heap() -> None:
    image = jvm.image_flags(ROOT, "loadgen")
    assert "-XX:+UseSerialGC" in image and "-XX:TieredStopAtLevel=1" in image
    local = jvm.flags(ROOT, "loadgen")
    assert local == [
        *(f for f in image if not f.startswith("-XX:MaxRAMPercentage=")),
        *jvm.LOCAL_HEAP["loadgen"],
    ]
    assert "-XX:+UseParallelGC" in jvm.flags(ROOT, "middleware")


def test_the_local_runner_and_the_bench_use_them(bench: ModuleType) -> None:
    spec = parse_spec({"name": "t"})
    java = ["java"]
    loadgen = loadgen_argv("java", Path("l.jar"), spec, "h", 1, Path("o.json"), Path("h"))
    assert loadgen[: loadgen.index("-jar")] == java + jvm.flags(ROOT, "loadgen")
    middleware = middleware_argv("java", Path("m.jar"), spec, "h", 1, ["h:2"], Path("s"))
    assert middleware[: middleware.index("-jar")] == java + jvm.flags(ROOT, "middleware")
    config = importlib.import_module("bench.config")
    assert jvm.flags(ROOT, "loadgen") == config.LOADGEN_JAVA_OPTS
    assert jvm.flags(ROOT, "middleware") == config.MIDDLEWARE_JAVA_OPTS


@pytest.mark.parametrize(
    "path",
    [
        "ops/cachelab/local/commands.py",
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "scripts" / "bench").glob("*.py")),
        "ops/cachelab/k8s/plan.py",
    ],
)
def test_no_second_list_of_jvm_flags(path: str) -> None:
    text = (ROOT / path).read_text()
    spelled = {f for f in JVM_FLAG.findall(text) if "SharedArchive" not in f}
    assert spelled == set(), f"{path} spells JVM flags of its own: {sorted(spelled)}"


def test_a_pom_without_jvm_flags_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "loadgen").mkdir()
    (tmp_path / "loadgen" / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"></project>'
    )
    with pytest.raises(jvm.JvmFlagsError, match=r"pom.xml: no <jvmFlags> in the jib"):
        jvm.flags(tmp_path, "loadgen")
