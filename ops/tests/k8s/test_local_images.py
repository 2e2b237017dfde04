"""Tier 4 (no cluster needed): one name and tag per image across `make images`
(scripts/images.sh), `make image-tar` (the poms), the chart, the loadgen component and
charts/testbed/examples/local-values.yaml, so that no pod asks for a tag that was never built."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from .tools import CHART, MANIFESTS, ROOT, run, tool

pytestmark = pytest.mark.k8s


def built_images() -> dict[str, str]:
    out = run([ROOT / "scripts" / "images.sh", "list"]).stdout
    return dict(line.split(" ", 1) for line in out.strip().splitlines())


def test_app_version_is_the_tag_of_every_build_of_the_java_images() -> None:
    app_version = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
    pom = (ROOT / "pom.xml").read_text()
    assert re.search(r"<image.tag>([^<]+)</image.tag>", pom)[1] == app_version  # type: ignore[index]
    for module in ("middleware", "loadgen"):
        assert "<image.tag>" not in (ROOT / module / "pom.xml").read_text(), module
    component = yaml.safe_load(
        (MANIFESTS / "components" / "loadgen-cachelab" / "kustomization.yaml").read_text()
    )
    assert component["images"][0]["newTag"] == app_version
    images = built_images()
    assert images["middleware"] == f"ghcr.io/cachelab/middleware:{app_version}"
    assert images["loadgen"] == f"ghcr.io/cachelab/loadgen:{app_version}"


def test_the_middleware_image_exposes_the_chart_metrics_port() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    ports = re.findall(r"<port>(\d+)</port>", (ROOT / "middleware" / "pom.xml").read_text())
    assert [int(p) for p in ports] == [
        values["middleware"]["port"],
        values["middleware"]["metricsPort"],
    ]


def test_local_values_name_only_images_that_make_images_builds(tmp_path: Path) -> None:
    extra = tmp_path / "redis-too.yaml"
    # redis too, and RTTs on both links: the latency sidecars' image
    extra.write_text("redis:\n  enabled: true\nlinks:\n  rttMs: {clientMw: 2, mwServer: 2}\n")
    out = run(
        [tool("helm"), "template", "testbed", CHART,
         "-f", CHART / "examples" / "local-values.yaml", "-f", extra]
    ).stdout  # fmt: skip
    containers = []
    for doc in yaml.safe_load_all(out):
        if not doc or doc["kind"] not in ("Deployment", "StatefulSet", "Pod"):
            continue
        spec = doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]
        containers += spec.get("initContainers", []) + spec["containers"]
    built = set(built_images().values())
    used = {c["image"] for c in containers}
    assert used <= built, f"not built by scripts/images.sh: {used - built}"
    assert len(used) == 5  # memcached, redis, middleware, helper, toxiproxy
    assert {c["imagePullPolicy"] for c in containers} == {"Never"}


def test_every_overlays_jobs_run_images_that_make_images_builds() -> None:
    """So that `kubectl apply -k` of any shipped overlay runs on the local cluster: the
    project's loadgen (preload and benchmark) and, in the locust overlay, its locust image."""
    built = set(built_images().values())
    for overlay in sorted((MANIFESTS / "overlays").iterdir()):
        out = run(["kubectl", "kustomize", overlay]).stdout
        images = {
            c["image"]
            for doc in yaml.safe_load_all(out)
            if doc and doc["kind"] == "Job"
            for c in doc["spec"]["template"]["spec"]["containers"]
        }
        assert images and images <= built, f"{overlay.name}: not built: {images - built}"
