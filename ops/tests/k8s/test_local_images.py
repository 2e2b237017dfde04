"""Tier 4 (no cluster needed): one name and tag per image across `make images`
(scripts/images.sh), `make image-tar` (the poms), the chart, the loadgen component and
charts/testbed/examples/local-values.yaml, so that no pod asks for a tag that was never built
and pushed to the local cluster's registry (`scripts/images.sh push`: <registry>/<last segment of
the built name>:<tag>); and the image-registry component moves every project image of the
overlays."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from .tools import CHART, MANIFESTS, ROOT, run, tool

pytestmark = pytest.mark.k8s


def built_images() -> dict[str, str]:
    out = run([ROOT / "scripts" / "images.sh", "list"]).stdout
    return dict(line.split(" ", 1) for line in out.strip().splitlines())


def pushed_images(registry: str) -> set[str]:
    """What `REGISTRY=<registry> scripts/images.sh push` puts into the registry."""
    return {
        f"{registry}/{ref.rsplit(':', 1)[0].rsplit('/', 1)[-1]}:{ref.rsplit(':', 1)[1]}"
        for ref in built_images().values()
    }


def job_images(overlay: Path) -> set[str]:
    """Images of the Job containers of `kubectl kustomize <overlay>`."""
    out = run(["kubectl", "kustomize", overlay]).stdout
    return {
        c["image"]
        for doc in yaml.safe_load_all(out)
        if doc and doc["kind"] == "Job"
        for c in doc["spec"]["template"]["spec"]["containers"]
    }


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
    registry = yaml.safe_load((CHART / "examples" / "local-values.yaml").read_text())["global"][
        "imageRegistry"
    ]
    assert registry == run([ROOT / "scripts" / "local-cluster.sh", "registry"]).stdout.strip()
    pushed = pushed_images(registry)
    used = {c["image"] for c in containers}
    assert used <= pushed, f"not pushed by scripts/images.sh: {used - pushed}"
    assert len(used) == 5  # memcached, redis, middleware, helper, toxiproxy
    assert {c["imagePullPolicy"] for c in containers} == {"IfNotPresent"}


def test_every_overlays_jobs_run_images_that_make_images_builds() -> None:
    """So that `kubectl apply -k` of any shipped overlay runs on the local cluster: the
    project's loadgen (preload and benchmark) and, in the locust overlay, its locust image."""
    built = set(built_images().values())
    for overlay in sorted((MANIFESTS / "overlays").iterdir()):
        images = job_images(overlay)
        assert images and images <= built, f"{overlay.name}: not built: {images - built}"


def test_the_image_registry_component_moves_every_project_image_of_every_overlay(
    tmp_path: Path,
) -> None:
    """The overlays' one setting: the registry in the image-registry component (included last by
    every overlay). Set in a copy of manifests/, every Job container of every overlay runs an
    image pushed there."""
    copy = tmp_path / "manifests"
    shutil.copytree(MANIFESTS, copy)
    component = copy / "components" / "image-registry" / "kustomization.yaml"
    doc = yaml.safe_load(component.read_text())
    registry = "myacr.azurecr.io/cachelab"
    for entry in doc["images"]:
        entry["newName"] = f"{registry}/{entry['name'].rsplit('/', 1)[-1]}"
    component.write_text(yaml.safe_dump(doc))
    pushed = pushed_images(registry)
    for overlay in sorted((copy / "overlays").iterdir()):
        images = job_images(overlay)
        assert images and images <= pushed, f"{overlay.name}: not moved: {images - pushed}"
