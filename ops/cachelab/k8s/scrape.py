"""The middleware's statistics of a Kubernetes run: its pods' `/metrics` scraped through the API
server before and after the benchmark, and the difference written as each middleware's
summary.json (cachelab.k8s.metrics). Called from the runner's thread only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.metrics import parse_metrics, summary_from_scrapes
from cachelab.k8s.release import component_selector
from cachelab.results import write_json

KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"

Scrape = dict[str, float] | str  # the parsed counters, or why there are none


def is_kwok_node(kube: Kube, node: str | None) -> bool:
    """Whether `node` is simulated by kwok (no containers: nothing to time, exec or scrape)."""
    if not node:
        return False
    annotations = kube.get("node", node)["metadata"].get("annotations", {})
    return bool(annotations.get(KWOK_NODE_ANNOTATION))


class MiddlewareScraper:
    """The running middleware pods of the release named `release`, and their counters."""

    def __init__(self, kube: Kube, release: str) -> None:
        self.kube = kube
        self.selector = component_selector(release, "middleware")

    def pods(self) -> dict[str, dict[str, Any]]:
        """The running middleware pods by name, in name order."""
        pods = self.kube.get("pods", "-l", self.selector)["items"]
        running = [p for p in pods if p["status"].get("phase") == "Running"]
        return {
            p["metadata"]["name"]: p for p in sorted(running, key=lambda p: p["metadata"]["name"])
        }

    def scrape(self, pod: dict[str, Any]) -> Scrape:
        """Parsed /metrics of a middleware pod, or why there are none."""
        node = pod["spec"].get("nodeName", "")
        try:
            annotations = self.kube.get("node", node)["metadata"].get("annotations", {})
        except K8sError as error:
            return f"node {node}: {error}"
        if annotations.get(KWOK_NODE_ANNOTATION):
            return f"node {node} is simulated by kwok: no middleware process to scrape"
        port = next(
            (
                p["containerPort"]
                for c in pod["spec"]["containers"]
                for p in c.get("ports", [])
                if p.get("name") == "metrics"
            ),
            None,
        )
        if port is None:
            return "the pod has no port named metrics"
        name = pod["metadata"]["name"]
        path = f"/api/v1/namespaces/{self.kube.namespace}/pods/{name}:{port}/proxy/metrics"
        try:
            return parse_metrics(self.kube.get_raw(path))
        except K8sError as error:
            return str(error)

    def stats(
        self,
        pods: dict[str, dict[str, Any]],
        before: dict[str, Scrape],
        seconds: float,
        run_dir: Path,
    ) -> list[dict[str, Any]]:
        """point.json's `middlewares`: each pod scraped again, and the difference to `before`
        over `seconds` in middleware-<j>/summary.json."""
        entries = []
        for j, (name, pod) in enumerate(pods.items()):
            entry: dict[str, Any] = {"index": j, "address": name, "stats_dir": f"middleware-{j}"}
            first = before.get(name)
            after = self.scrape(pod) if isinstance(first, dict) else first
            if isinstance(first, dict) and isinstance(after, dict):
                folder = run_dir / f"middleware-{j}"
                folder.mkdir(exist_ok=True)
                write_json(folder / "summary.json", summary_from_scrapes(first, after, seconds))
            else:
                entry["unavailable"] = after
            entries.append(entry)
        return entries
