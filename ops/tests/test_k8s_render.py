"""`cachelab render`: a spec point as a kustomize overlay, and the shipped overlays as exactly
what their specs render (the command that made each is in its header)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from cachelab.cli import main
from cachelab.k8s import render
from cachelab.paths import repo_root

ROOT = repo_root()
OVERLAYS = sorted(p for p in (ROOT / "manifests" / "overlays").iterdir() if p.is_dir())
SPEC = ROOT / "ops" / "experiments" / "asl17-one-client.yaml"


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_every_shipped_overlay_is_what_its_spec_renders(overlay: Path) -> None:
    problems = render.stale_files(overlay, ROOT)
    assert problems == [], "the spec changed: `make overlays` renders the overlays again"


def test_the_shipped_overlays_run_the_projects_loadgen_except_the_locust_example() -> None:
    for overlay in OVERLAYS:
        doc = yaml.safe_load((overlay / "kustomization.yaml").read_text())
        loadgens = [Path(c).name for c in doc["components"] if "loadgen-" in c]
        expected = "loadgen-locust" if overlay.name == "locust-distributed" else "loadgen-cachelab"
        assert loadgens == [expected], overlay.name


def rendered_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A spec and the overlay rendered from it, both inside a copy of the checkout's layout
    (the header's paths are relative to the checkout)."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "manifests", root / "manifests")
    spec = root / "specs" / SPEC.name
    spec.parent.mkdir()
    shutil.copyfile(SPEC, spec)
    out = root / "manifests" / "overlays" / "mine"
    files = render.overlay_files(render.load_spec(spec), _args(spec, 16, out), out, root)
    render.write_overlay(files, out)
    return spec, out


def _args(spec: Path, point: int, out: Path, loadgen: str = "cachelab") -> object:
    import argparse

    return argparse.Namespace(spec=spec, point=point, out=out, loadgen=loadgen, bandwidth="asl2017")


def test_an_overlay_goes_stale_when_its_spec_or_its_files_change(tmp_path: Path) -> None:
    spec, out = rendered_copy(tmp_path)
    root = tmp_path / "repo"
    assert render.stale_files(out, root) == []
    spec.write_text(spec.read_text().replace("duration_s: 60", "duration_s: 30"))
    assert render.stale_files(out, root) == [
        f"{out / name}: differs from what {spec.name} renders"
        for name in ("kustomization.yaml", "point-spec.yaml")
    ]
    spec.write_text(SPEC.read_text())
    (out / "testbed-values.yaml").write_text("memcached: {replicas: 9}\n")
    (out / "extra.yaml").write_text("{}\n")
    assert render.stale_files(out, root) == [
        f"{out / 'testbed-values.yaml'}: differs from what {spec.name} renders",
        f"{out / 'extra.yaml'}: not rendered (the spec renders kustomization.yaml, "
        "testbed-values.yaml, point-spec.yaml)",
    ]


def test_an_overlay_without_its_render_command_is_reported(tmp_path: Path) -> None:
    _, out = rendered_copy(tmp_path)
    text = (out / "kustomization.yaml").read_text()
    (out / "kustomization.yaml").write_text(
        "\n".join(line for line in text.splitlines() if "Rendered by" not in line)
    )
    (problem,) = render.stale_files(out, tmp_path / "repo")
    assert problem.endswith("no `Rendered by: cachelab render` line in its header")


def test_render_writes_the_point_of_the_spec(tmp_path: Path) -> None:
    out = tmp_path / "overlay"
    assert main(["render", str(SPEC), "--point", "16", "--out", str(out)]) == 0
    doc = yaml.safe_load((out / "kustomization.yaml").read_text())
    literals = dict(line.split("=", 1) for line in doc["configMapGenerator"][0]["literals"])
    assert "--clients=32" in literals["LOADGEN_ARGS"].split()
    assert "--ratio=1:0" in literals["LOADGEN_ARGS"].split()
    assert (literals["LOADGEN"], literals["TARGET"], literals["SERVERS"]) == (
        "cachelab",
        "servers",
        "2",
    )
    assert literals["RELEASE_HINT"].startswith("helm upgrade --install testbed charts/testbed -f ")
    values = yaml.safe_load((out / "testbed-values.yaml").read_text())
    assert values["memcached"]["replicas"] == 2 and values["middleware"]["enabled"] is False
    point = render.load_spec(out / "point-spec.yaml")
    assert [p.values for p in point.points()] == [
        {"topology.clients_per_thread": 32, "workload.ratio": "1:0"}
    ]
    assert point.run.repetitions == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--point", "26"], "error: --point 26: asl17-one-client has points 0..25"),
        (
            ["--point", "0", "--loadgen", "locust"],
            "error: p0 (clients_per_thread=1, ratio=1:0): topology.client_machines: 1; locust "
            "needs 2 or more (machine 0 is its master)",
        ),
    ],
)
def test_render_refuses_what_it_cannot_render_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "overlay"
    assert main(["render", str(SPEC), *argv, "--out", str(out)]) == 2
    assert capsys.readouterr().out.strip() == message
    assert not out.exists()
