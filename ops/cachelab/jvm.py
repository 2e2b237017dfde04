"""The JVM flags of the loadgen and the middleware, kept in one place: the jib `<jvmFlags>` of
each component's pom.xml, which the image build uses as they are. The local runner and `make
bench` read them from there (`flags`) and size the heap themselves (`LOCAL_HEAP`); the image's
heap flag, a share of the container's memory limit, stays in the image (`IMAGE_ONLY`).

Standard library only (scripts/bench imports it without the package's dependencies).
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Literal

Component = Literal["loadgen", "middleware"]

_POM = "{http://maven.apache.org/POM/4.0.0}"
# Flags that size the JVM from a container's memory limit: the image's, not a local process's.
IMAGE_ONLY = ("-XX:MaxRAMPercentage=",)
# Heap sizes of the local processes (the machine runs servers, middleware and clients at once).
LOCAL_HEAP: dict[Component, list[str]] = {
    "loadgen": ["-Xms64m", "-Xmx512m"],
    "middleware": ["-Xms256m", "-Xmx1g"],
}


class JvmFlagsError(RuntimeError):
    """A pom.xml without the jib `<jvmFlags>` this module reads."""


@functools.cache
def image_flags(root: Path, component: Component) -> tuple[str, ...]:
    """Every `<jvmFlag>` of the jib configuration in `<root>/<component>/pom.xml`."""
    pom = root / component / "pom.xml"
    try:
        tree = ElementTree.parse(pom)
    except (OSError, ElementTree.ParseError) as error:
        raise JvmFlagsError(f"{pom}: cannot read the JVM flags ({error})") from None
    found = [(e.text or "").strip() for e in tree.iter(f"{_POM}jvmFlag")]
    if not found:
        raise JvmFlagsError(f"{pom}: no <jvmFlags> in the jib configuration")
    return tuple(found)


def flags(root: Path, component: Component) -> list[str]:
    """The image's JVM flags without its container heap flag, plus the local heap sizes."""
    shared = [f for f in image_flags(root, component) if not f.startswith(IMAGE_ONLY)]
    return [*shared, *LOCAL_HEAP[component]]
