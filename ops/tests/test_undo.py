"""`make undo` (scripts/undo.sh): what a killed run left on lo is removed and a qdisc of someone
else's is not; the Debian packages the project recorded as its own are removed, and no other;
--dry-run changes nothing. Root only (tc, dpkg): the tests skip, saying why, elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cachelab.local.shaping import Link, LoopbackShaper
from cachelab.paths import repo_root

pytestmark = pytest.mark.integration
UNDO = repo_root() / "scripts" / "undo.sh"
PROBE_PACKAGE = "cachelab-undo-probe"


def _undo(cache: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CACHELAB_CACHE": str(cache), "CLUSTER_DIR": str(cache / "no-cluster")}
    env["K8S_CLUSTER"] = "cachelab-undo-test-none"
    return subprocess.run(
        [str(UNDO), *flags], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def _lo() -> str:
    return subprocess.run(
        ["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def root_lo() -> Iterator[None]:
    """Skips unless root with tc and an unshaped lo; leaves lo unshaped whatever happens."""
    if os.geteuid() != 0 or shutil.which("tc") is None:
        pytest.skip("undo needs root and tc")
    if " root " in _lo() and not _lo().startswith(("qdisc noqueue", "qdisc noop")):
        pytest.skip(f"lo already has a root qdisc: {_lo().splitlines()[0]}")
    try:
        yield
    finally:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)


def test_a_shaping_a_killed_run_left_is_removed(root_lo: None, tmp_path: Path) -> None:
    shaper = LoopbackShaper()
    shaper.apply([Link("server->client", "sport", (40_001,), 100)])  # never cleared: a killed run
    assert "htb 1: root" in _lo()
    dry = _undo(tmp_path, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would remove the shaping a killed run left on lo" in dry.stdout
    assert "htb 1: root" in _lo()  # the dry run changed nothing
    done = _undo(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "htb" not in _lo()
    assert "no local cluster of this clone" in done.stdout


def test_a_qdisc_that_is_not_the_projects_is_left(root_lo: None, tmp_path: Path) -> None:
    subprocess.run(
        ["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "1"],
        check=True,
    )
    subprocess.run(
        ["tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:1", "htb", "rate",
         "5gbit"],
        check=True,
    )  # fmt: skip
    done = _undo(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no shaping of this project on lo" in done.stdout
    assert "htb 1: root" in _lo()


def _build_probe_deb(folder: Path) -> Path:
    """An empty Debian package of the project's own making, to install and remove safely."""
    control = folder / "pkg" / "DEBIAN"
    control.mkdir(parents=True)
    (control / "control").write_text(
        f"Package: {PROBE_PACKAGE}\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: cachelab tests <tests@localhost>\n"
        "Description: empty package installed and removed by the undo test\n"
    )
    deb = folder / f"{PROBE_PACKAGE}.deb"
    subprocess.run(["dpkg-deb", "--build", str(folder / "pkg"), str(deb)], check=True,
                   capture_output=True)  # fmt: skip
    return deb


def _installed(package: str) -> bool:
    shown = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
    )
    return "install ok installed" in shown.stdout


def test_only_the_recorded_packages_are_removed(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("dpkg-deb") is None:
        pytest.skip("installing a package needs root and dpkg-deb")
    deb = _build_probe_deb(tmp_path)
    subprocess.run(["dpkg", "-i", str(deb)], check=True, capture_output=True)
    try:
        assert _installed(PROBE_PACKAGE)
        cache = tmp_path / "cache"
        cache.mkdir()
        # the probe, and a package that is no longer installed; dpkg itself is not recorded
        (cache / "installed-debs").write_text(f"{PROBE_PACKAGE}\ncachelab-gone-already\n")
        dry = _undo(cache, "--packages", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert f"would remove the Debian packages this project installed ({PROBE_PACKAGE})" in (
            dry.stdout
        )
        assert _installed(PROBE_PACKAGE)
        done = _undo(cache, "--packages")
        assert done.returncode == 0, done.stdout + done.stderr
        assert not _installed(PROBE_PACKAGE)
        assert _installed("dpkg")
        assert not (cache / "installed-debs").exists()  # nothing recorded is left installed
    finally:
        subprocess.run(["dpkg", "--purge", PROBE_PACKAGE], capture_output=True)


def test_an_unknown_flag_is_one_line() -> None:
    done = subprocess.run([str(UNDO), "--everything"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == f"usage: {UNDO} [--dry-run] [--packages] [--caches]"
