"""Open loop and the search with `--target k8s`, without a cluster: the offered rate split over
the benchmark Jobs' loadgen instances, and a search that cannot run there named in one line
before anything is installed or created."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cachelab.cli import main
from cachelab.k8s import plan
from cachelab.spec import parse_spec

OPEN: dict[str, Any] = {
    "name": "open-k8s",
    "topology": {
        "client_machines": 2,
        "instances_per_machine": 2,
        "threads": 2,
        "clients_per_thread": 4,
        "middlewares": 1,
        "servers": 1,
    },
    "workload": {"rate_ops": 8000, "ratio": "0:1", "key_maximum": 1000},
    "run": {"duration_s": 6, "warmup_s": 1, "cooldown_s": 1},
}


def test_the_offered_rate_is_split_over_the_jobs_loadgen_instances() -> None:
    config = plan.job_config(parse_spec(OPEN), plan.Target(loadgen="cachelab"))
    # 2 client machines (Job completions) x 2 instances each: 2,000 requests/s per instance
    assert (config["CLIENT_MACHINES"], config["INSTANCES"]) == ("2", "2")
    assert "--open-loop-rate=2000" in config["LOADGEN_ARGS"].split()
    closed = parse_spec({**OPEN, "workload": {"ratio": "0:1"}})
    assert "--open-loop-rate" not in plan.job_config(closed, plan.Target())["LOADGEN_ARGS"]


def test_memtier_cannot_offer_a_rate() -> None:
    with pytest.raises(plan.PlanError, match=r"rate_ops: 8000 \(open loop\).*--loadgen cachelab"):
        plan.job_config(parse_spec(OPEN), plan.Target(loadgen="memtier"))


def write_spec(tmp_path: Path) -> Path:
    path = tmp_path / "open-k8s.yaml"
    path.write_text(yaml.safe_dump(OPEN))
    return path


@pytest.fixture
def values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A values file; no cluster, no k8s settings in the environment."""
    path = tmp_path / "values.yaml"
    path.write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    for name in ("CACHELAB_K8S_VALUES", "CACHELAB_K8S_LOADGEN"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        ([], {}, "error: --target k8s: each step installs the release with the point's values"),
        (
            ["--values", "VALUES", "--loadgen", "memtier"],
            {},
            "error: workload.rate_ops: 8000 (open loop) needs the cachelab loadgen",
        ),
        (
            [],
            {"CACHELAB_K8S_VALUES": "VALUES", "CACHELAB_K8S_LOADGEN": "locust"},
            "error: loadgen: 'locust': the runner reads memtier JSON",
        ),
        (["--values", "gone.yaml"], {}, "error: --values: gone.yaml is not a file"),
    ],
)
def test_a_k8s_search_that_cannot_run_is_one_line_before_anything(
    values: Path, capsys: pytest.CaptureFixture[str], argv: list[str], env: dict[str, str],
    message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for name, value in env.items():
        monkeypatch.setenv(name, value.replace("VALUES", str(values)))
    argv = [a.replace("VALUES", str(values)) for a in argv]
    spec = write_spec(tmp_path)
    code = main(
        ["search", str(spec), "--slo", "p99<=2ms", "--target", "k8s", *argv,
         "--results", str(tmp_path / "r")]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 2
    assert out.startswith(message), out
    assert len(out.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_k8s_options_on_a_local_search_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["search", str(write_spec(tmp_path)), "--slo", "p99<=2ms", "--loadgen", "memtier",
         "--results", str(tmp_path / "r")]
    )  # fmt: skip
    assert code == 2
    assert capsys.readouterr().out.startswith("error: --values and --loadgen are for --target k8s")
    assert not (tmp_path / "r").exists()
