"""The runner sizes the point's Jobs by the release's client pool (`nodePools.sizes.<pool>`), so
the Jobs fit the pool's nodes where they are smaller than an Azure A2 (the local cluster's)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from cachelab.k8s import plan
from cachelab.k8s.jobs import with_job_resources
from cachelab.paths import repo_root
from cachelab.spec import parse_spec

ROOT = repo_root()
SPEC = {
    "name": "job-resources",
    "topology": {"client_machines": 2, "hosts": {"client": "a2"}},
    "run": {"duration_s": 5},
}
SMALL = {
    "requests": {"cpu": "100m", "memory": "192Mi"},
    "limits": {"cpu": "200m", "memory": "320Mi"},
}


@pytest.mark.integration  # runs kubectl kustomize
def test_jobs_take_the_client_pool_resources_of_the_release(tmp_path: Path) -> None:
    spec = parse_spec(SPEC)
    text = plan.kustomization(spec, plan.Target(), ROOT / "manifests", tmp_path, {})
    (tmp_path / "kustomization.yaml").write_text(with_job_resources(text, SMALL))
    out = subprocess.run(
        ["kubectl", "kustomize", str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout
    jobs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(out) if d and d["kind"] == "Job"}
    assert sorted(jobs) == ["benchmark", "preload"]
    for job in jobs.values():
        (container,) = job["spec"]["template"]["spec"]["containers"]
        assert container["resources"] == SMALL  # not the clients-pool-a2 component's 1 CPU / 2Gi
