"""Where a release's images come from: the chart's `global.imageRegistry` (charts/testbed
values.yaml, section Images) moves every image to `<registry>/<last segment of its repository>`,
and the runner moves the Jobs' project images (loadgen, locust) the same way, so that one value
says where a cluster pulls everything from (`make push REGISTRY=<registry>` puts them there)."""

from __future__ import annotations

from typing import Any

# The project's images in the Jobs of manifests/ (components loadgen-cachelab, loadgen-locust),
# by the name the components give them.
JOB_IMAGES = ("ghcr.io/cachelab/loadgen", "ghcr.io/cachelab/locust")


def registry_of(values: dict[str, Any]) -> str:
    """The release's `global.imageRegistry` ("" when unset)."""
    return str((values.get("global") or {}).get("imageRegistry") or "").rstrip("/")


def moved(repository: str, registry: str) -> str:
    """`repository` under `registry` as the chart's `testbed.image` moves it (unchanged when
    `registry` is empty)."""
    return f"{registry}/{repository.rsplit('/', 1)[-1]}" if registry else repository


def image_reference(image: dict[str, Any], values: dict[str, Any]) -> str:
    """`<repository>:<tag>` of one image entry of the release's values, moved by its registry."""
    return f"{moved(str(image['repository']), registry_of(values))}:{image['tag']}"


def job_images(registry: str) -> list[dict[str, str]]:
    """kustomize `images:` entries that move the Jobs' project images to `registry` (none when
    it is empty)."""
    return [{"name": name, "newName": moved(name, registry)} for name in JOB_IMAGES if registry]
