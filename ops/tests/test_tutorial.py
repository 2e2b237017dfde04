"""docs/tutorial.md is run as written: its first part (one machine) here, in the e2e tier, with
the runs shortened through CACHELAB_SET; its second part (the local cluster) in
k8s_real/test_tutorial_cluster.py; the AKS values it names render."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from doc_claims import ROOT, run_tutorial_part, tutorial_parts

# A few seconds per run, two client counts and two worker counts, one repetition.
SHORT = (
    "run.duration_s=4 run.warmup_s=1 run.cooldown_s=1 run.repetitions=1"
    " sweep.topology.clients_per_thread=[1,4] sweep.topology.workers=[8,32]"
)


def test_every_command_of_the_tutorial_is_in_a_part_a_test_runs() -> None:
    parts = tutorial_parts()
    assert set(parts) == {"1", "2"}  # part 3 (AKS) has no command to run
    assert any("make run" in block for block in parts["1"])
    assert any("make k8s-up" in block for block in parts["2"])


@pytest.mark.e2e
def test_the_tutorial_on_one_machine(tmp_path: Path) -> None:
    quickstarts = ROOT / "results" / "quickstart"
    before = set(quickstarts.iterdir()) if quickstarts.is_dir() else set()
    try:
        done = run_tutorial_part("1", tmp_path, SHORT)
    finally:  # the quickstart of `make run` goes to the repository's results/, as for a user
        for made in (set(quickstarts.iterdir()) if quickstarts.is_dir() else set()) - before:
            shutil.rmtree(made)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    runs = sorted((tmp_path / "tutorial" / "asl17-one-mw").iterdir())
    assert len(runs) == 2
    for run in runs:
        assert (run / "report" / "index.html").is_file()
        assert len((run / "summary.csv").read_text().splitlines()) == 1 + 4  # 4 points, 1 rep
    assert (tmp_path / "tutorial" / "compare" / "index.html").is_file()
    assert "complete: 4/4 runs" in done.stdout


@pytest.mark.k8s
def test_the_aks_values_of_the_tutorial_render() -> None:
    from k8s.tools import CHART, tool

    values = CHART / "examples" / "aks-av2-values.yaml"
    assert str(values.relative_to(ROOT)) in (ROOT / "docs" / "tutorial.md").read_text()
    done = subprocess.run(
        [str(tool("helm")), "template", "testbed", str(CHART), "-f", str(values)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for pool in ("a1", "a2", "a4"):  # each role on its AKS pool
        assert f'agentpool: "{pool}"' in done.stdout
