"""A rollout that cannot succeed stops waiting at once: a pod of the release whose image cannot
be pulled ends `helm upgrade --wait` (or `kubectl rollout status`) with a message naming the
image and `make push`, instead of a silent ImagePullBackOff until the timeout."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.release import pull_failure


def pod(name: str, *statuses: dict[str, Any], init: bool = False) -> dict[str, Any]:
    key = "initContainerStatuses" if init else "containerStatuses"
    return {"metadata": {"name": name}, "status": {key: list(statuses)}}


def waiting(image: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"image": image, "state": {"waiting": {"reason": reason, "message": message}}}


def test_a_container_that_cannot_pull_its_image_is_named_with_the_remedy() -> None:
    image = "10.244.0.1:5100/middleware:missing"
    message = f'failed to resolve reference "{image}": not found'
    found = pull_failure(
        [
            pod("testbed-memcached-0", {"image": "x", "state": {"running": {}}}),
            pod("testbed-middleware-1", waiting(image, "ErrImagePull", message)),
        ]
    )
    assert found is not None
    assert found.startswith(f"pod testbed-middleware-1: image {image} cannot be pulled")
    assert "ErrImagePull: failed to resolve reference" in found
    assert "global.imageRegistry" in found and "make push REGISTRY=<registry>" in found


@pytest.mark.parametrize("reason", ["ImagePullBackOff", "InvalidImageName"])
def test_init_containers_and_every_pull_reason_count(reason: str) -> None:
    found = pull_failure([pod("p", waiting("reg/busybox:1", reason), init=True)])
    assert found is not None and f"image reg/busybox:1 cannot be pulled ({reason}" in found


def test_pods_that_only_wait_to_start_are_no_failure() -> None:
    pods = [
        pod("a", waiting("reg/memcached:1", "ContainerCreating")),
        pod("b", waiting("reg/middleware:1", "PodInitializing")),
        {"metadata": {"name": "c"}, "status": {"phase": "Pending"}},  # not scheduled yet
    ]
    assert pull_failure(pods) is None


def test_a_failure_ends_the_wait_with_its_message_and_stops_the_command() -> None:
    kube = Kube(namespace="default", helm_binary="helm")
    asked = []

    def failure() -> str | None:
        asked.append(True)
        return "pod p: image reg/x:1 cannot be pulled" if len(asked) > 1 else None

    with pytest.raises(K8sError, match=r"^pod p: image reg/x:1 cannot be pulled$"):
        kube._run([sys.executable, "-c", "import time; time.sleep(600)"], 900, failure)
    assert len(asked) == 2


def test_without_a_failure_the_command_runs_to_its_end() -> None:
    kube = Kube(namespace="default", helm_binary="helm")
    out = kube._run([sys.executable, "-c", "print('done')"], 60, lambda: "never asked")
    assert out == "done\n"
