"""docs/tutorial.md, part 2, run as written on the real local cluster: the tier's cluster stands
in for `make k8s-up`/`make k8s-down` (one cluster per machine), the runs are shortened through
CACHELAB_SET."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_claims import run_tutorial_part
from k8s.conftest import Cluster

pytestmark = pytest.mark.k8s_real

SHORT = "run.duration_s=6 run.warmup_s=1 run.cooldown_s=1 run.repetitions=1"
SHORT += " sweep.topology.clients_per_thread=[1]"


def test_the_tutorial_on_the_local_cluster(real_cluster: Cluster, tmp_path: Path) -> None:
    done = run_tutorial_part(
        "2",
        tmp_path,
        SHORT,
        {
            'eval "$(make k8s-up)"': f"export KUBECONFIG={real_cluster.kubeconfig}",
            "make k8s-down": "true",
        },
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    runs = sorted((tmp_path / "tutorial-k8s" / "asl17-one-mw").iterdir())
    assert len(runs) == 1
    assert len((runs[0] / "summary.csv").read_text().splitlines()) == 1 + 2  # 8 and 32 workers
    assert (runs[0] / "report" / "index.html").is_file()
