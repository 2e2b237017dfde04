"""Tier 4 (no cluster needed): the AKS walk-through of docs/kubernetes.md ("AKS, end to end")
agrees with the chart and the overlays: its pools are the ones the chart selects by AKS's label,
one registry runs through `az acr create`, `--attach-acr`, `make push` and
`global.imageRegistry`, every `--set` names a value of values.yaml, every `-f`/`-k` path exists,
and every image of the release it installs is in that registry, pushed by `make push` or
imported by its `az acr import` from the chart's own default."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from .tools import CHART, MANIFESTS, ROOT, run, tool

pytestmark = pytest.mark.k8s

PAGE = ROOT / "docs" / "kubernetes.md"
SECTION = "### AKS, end to end"
# The images `make push` puts into the registry (scripts/push.sh), by their last path segment.
PUSHED = {"middleware", "loadgen", "toxiproxy", "memcached-exporter", "locust"}


def section_text() -> str:
    text = PAGE.read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start)
    return text[start:end]


def commands() -> list[list[str]]:
    """The section's fenced commands, continuation lines joined, comments dropped, as words."""
    found, pending, fenced = [], "", False
    for line in section_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            pending += line.rstrip("\\").rstrip() + " "
            if not line.rstrip().endswith("\\"):
                found.append(shlex.split(pending, comments=True))
                pending = ""
    return [c for c in found if c]


def starting(*words: str) -> list[list[str]]:
    return [c for c in commands() if c[: len(words)] == list(words)]


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def options(command: list[str], name: str) -> list[str]:
    return [command[i + 1] for i, word in enumerate(command) if word == name]


def values_key(values: dict[str, Any], dotted: str) -> bool:
    node: Any = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_the_pools_are_those_the_chart_selects_by_the_label_aks_gives() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["nodePools"]["labelKey"] == "agentpool"  # AKS: agentpool=<pool name>
    pools = {option(c, "-n") for c in starting("az", "aks", "nodepool", "add")}
    used = {values["memcached"]["pool"], values["middleware"]["pool"], values["clients"]["pool"]}
    assert pools == used == {"a1", "a2", "a4"}
    aks = yaml.safe_load((CHART / "examples" / "aks-av2-values.yaml").read_text())
    assert pools <= set(values["nodePools"]["sizes"]) and pools <= set(aks["nodePools"]["sizes"])


def registry() -> tuple[str, str]:
    """(ACR name, REGISTRY of `make push`), checked to be one registry throughout."""
    (create,) = starting("az", "acr", "create")
    name = option(create, "-n")
    (update,) = starting("az", "aks", "update")
    assert option(update, "--attach-acr") == name
    assert [option(c, "-n") for c in starting("az", "acr", "login")] == [name]
    (push,) = [c for c in commands() if c[:2] == ["make", "push"]]
    (setting,) = [w for w in push if w.startswith("REGISTRY=")]
    pushed_to = setting.removeprefix("REGISTRY=")
    assert pushed_to.startswith(f"{name}.azurecr.io/")
    return name, pushed_to


def test_one_registry_from_acr_create_to_the_release_value() -> None:
    _, pushed_to = registry()
    helm = [c for c in commands() if c[0] == "helm" and "--set" in c]
    chosen = [s for c in helm for s in options(c, "--set") if s.startswith("global.imageRegistry=")]
    assert len(chosen) >= 2 and set(chosen) == {f"global.imageRegistry={pushed_to}"}


def test_every_value_path_and_overlay_it_names_exists() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for command in commands():
        for setting in options(command, "--set"):
            assert values_key(values, setting.split("=", 1)[0]), setting
        for path in options(command, "-f"):
            assert (ROOT / path).is_file(), path
        for path in options(command, "-k"):
            assert (ROOT / path / "kustomization.yaml").is_file(), path
    applied = [option(c, "-k") for c in starting("kubectl", "apply")]
    assert applied and all(p.startswith("manifests/overlays/") for p in applied)
    # the overlay's Jobs move with the image-registry component, named with the pushed registry
    _, pushed_to = registry()
    component = yaml.safe_load(
        (MANIFESTS / "components" / "image-registry" / "kustomization.yaml").read_text()
    )
    for entry in component["images"]:
        assert f"`{pushed_to}/{entry['name'].rsplit('/', 1)[-1]}`" in section_text(), entry
    targets = set(re.findall(r"make ([a-z-]+)", section_text()))
    makefile = (ROOT / "Makefile").read_text()
    assert {"push", "images", "monitoring-install", "grafana"} <= targets
    assert all(re.search(rf"^{t}:", makefile, re.MULTILINE) for t in targets), targets


def images(*args: str | Path) -> list[tuple[str, str]]:
    """(object/container, image) of every container `helm template` renders."""
    out = run([tool("helm"), "template", "testbed", CHART, *args]).stdout
    found = []
    for doc in yaml.safe_load_all(out):
        if doc and doc["kind"] in ("Deployment", "StatefulSet", "Pod"):
            spec = doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]
            for c in [*spec.get("initContainers", []), *spec["containers"]]:
                found.append((f"{doc['metadata']['name']}/{c['name']}", c["image"]))
    return sorted(found)


def docker_hub(reference: str) -> str:
    """A Docker Hub reference as `az acr import --source` spells it."""
    repository = reference.rsplit(":", 1)[0]
    prefix = "docker.io/" if "/" in repository else "docker.io/library/"
    return reference if repository.count("/") >= 2 else prefix + reference


def test_every_image_of_the_installed_release_is_pushed_or_imported() -> None:
    name, pushed_to = registry()
    (install,) = [c for c in commands() if c[:2] == ["helm", "install"]]
    files = [a for f in options(install, "-f") for a in ("-f", ROOT / f)]
    sets = [a for s in options(install, "--set") for a in ("--set", s)]
    moved = images(*files, *sets)
    unmoved = images(*files)
    imports = {
        f"{name}.azurecr.io/{option(c, '--image')}": option(c, "--source")
        for c in starting("az", "acr", "import")
    }
    assert [c for c, _ in moved] == [c for c, _ in unmoved]
    for (container, image), (_, default) in zip(moved, unmoved, strict=True):
        assert image.startswith(f"{pushed_to}/"), (container, image)
        if image.removeprefix(f"{pushed_to}/").split(":")[0] in PUSHED:
            continue
        assert image in imports, f"{container}: {image} is neither pushed nor imported"
        assert imports[image] == docker_hub(default), (container, imports[image], default)
