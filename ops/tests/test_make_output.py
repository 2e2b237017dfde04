"""`make` output read from a log or a pipe: plain text, no terminal escapes (the Makefile's help
is coloured only on a terminal; Maven is told not to write its colour resets,
scripts/maven-opts.sh)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from cachelab.paths import repo_root

pytestmark = pytest.mark.integration

ROOT = repo_root()


def test_make_help_to_a_pipe_is_plain_and_lists_every_documented_target() -> None:
    out = subprocess.run(
        ["make", "-s", "-C", str(ROOT), "help"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout
    makefile = (ROOT / "Makefile").read_text()
    documented = re.findall(r"^([a-zA-Z_0-9-]+):.*?## ", makefile, re.MULTILINE)
    body = out.stdout.split("make <target>", 1)[1]
    listed = re.findall(r"^  ([a-zA-Z_0-9-]+) +\S", body, re.MULTILINE)
    assert listed == documented


def test_maven_opts_silence_the_colour_resets() -> None:
    java_home = subprocess.run(
        [str(ROOT / "scripts" / "find-jdk.sh")], capture_output=True, text=True, timeout=60
    ).stdout.strip()
    env = {**os.environ, "JAVA_HOME": java_home}
    opts = subprocess.run(
        [str(ROOT / "scripts" / "maven-opts.sh")], env=env, capture_output=True, text=True
    ).stdout.strip()
    assert "-Djansi.noreset=true" in opts.split()
    version = subprocess.run(
        ["mvn", "-B", "-q", "-ntp", "-Dstyle.color=never", "-v"],
        env={**env, "MAVEN_OPTS": opts},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert version.returncode == 0, version.stderr
    assert "\x1b" not in version.stdout + version.stderr


def test_make_run_with_a_bad_spec_fails_at_once_and_creates_nothing(tmp_path: Path) -> None:
    results = ROOT / "results" / "nope"
    for spec, expected in [
        (str(tmp_path / "nope.yaml"), f"error: invalid spec {tmp_path / 'nope.yaml'}:"),
        ("", "usage: make run [SPEC=ops/experiments/<name>.yaml]"),
    ]:
        out = subprocess.run(
            ["make", "-s", "-C", str(ROOT), "run", f"SPEC={spec}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert out.returncode == 2, out.stdout + out.stderr
        assert expected in out.stdout + out.stderr
        assert "Traceback" not in out.stdout + out.stderr
    assert not results.exists()
