"""The links' round-trip times of a Kubernetes run measured: each link timed from a probe pod on
its near end to the toxiproxy sidecars on its far end (cachelab.k8s.rtt), the sidecars' latency
toxics set to the link's one-way delay after a calibrating trial. Called from the runner's thread
only."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from cachelab.k8s import plan, rtt
from cachelab.k8s.jobs import POLL_S
from cachelab.k8s.kube import K8sError, Kube
from cachelab.k8s.release import ReleaseKeeper, pod_identities
from cachelab.k8s.scrape import MiddlewareScraper, is_kwok_node
from cachelab.local.latency import off_links
from cachelab.spec import Spec

LINKS_KEPT = (
    "the previous point's measure: same release revision, same server and middleware pods, "
    "neither restarted, same links and probe"
)


class LinkProber:
    """Times the spec's links between the release's pods into point.json's `network`."""

    def __init__(
        self, kube: Kube, target: plan.Target, release: ReleaseKeeper, scraper: MiddlewareScraper
    ) -> None:
        self.kube = kube
        self.target = target
        self.release = release
        self.scraper = scraper
        self._last: tuple[str, dict[str, Any]] | None = None  # the last probe's key and record

    def probe(
        self, spec: Spec, values: dict[str, Any], labels: dict[str, str], k8s_dir: Path
    ) -> dict[str, Any]:
        """Calibrates and times each link from a probe pod on its near end (cachelab.k8s.rtt):
        point.json's `network`. ProbeError (a K8sError) when a probe gets no answer. The last
        point's record comes back instead, marked `reused`, when nothing it depends on changed:
        the release's revision (the sidecars' settings), the server and middleware pods and their
        restarts (the toxics set in them), the links and the probe's protocol."""
        backend = spec.topology.backend
        selector = self.release.component_selector(backend)
        server_pods = sorted(
            self.kube.get("pods", "-l", selector)["items"], key=lambda p: p["metadata"]["name"]
        )
        middleware_pods = list(self.scraper.pods().values())
        key = json.dumps(
            {
                "revision": self.release.upgraded_revision,
                "pods": pod_identities([*server_pods, *middleware_pods]),
                "links": [asdict(link) for link in spec.links()],
                "protocol": spec.workload.protocol,
            },
            sort_keys=True,
        )
        if self._last is not None and self._last[0] == key:
            return {**self._last[1], "reused": LINKS_KEPT}
        record = self._measure(spec, values, labels, k8s_dir, server_pods, middleware_pods)
        self._last = (key, record)
        return record

    def _measure(
        self,
        spec: Spec,
        values: dict[str, Any],
        labels: dict[str, str],
        k8s_dir: Path,
        server_pods: list[dict[str, Any]],
        middleware_pods: list[dict[str, Any]],
    ) -> dict[str, Any]:
        backend = spec.topology.backend
        nodes = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in server_pods}
        nodes |= {p["metadata"]["name"]: p["spec"].get("nodeName") for p in middleware_pods}
        servers = {
            p["metadata"]["name"]: f"{p['status'].get('podIP')}:{plan.SERVER_PORTS[backend]}"
            for p in server_pods
        }
        middlewares = {
            p["metadata"]["name"]: f"{p['status'].get('podIP')}:{plan.MIDDLEWARE_PORT}"
            for p in middleware_pods
        }
        found: list[dict[str, Any]] = []
        problems: list[str] = []
        for pod in rtt.probe_pods(spec, self.target.release, middlewares, servers):
            if not pod.targets:
                continue
            sidecars = [t.pod for t in pod.targets]
            if any(is_kwok_node(self.kube, nodes.get(name)) for name in sidecars):
                problems.append(
                    f"{pod.name}: its sidecars' nodes are simulated by kwok: not measured"
                )
                continue
            link = pod.targets[0].link
            manifest = k8s_dir / f"{pod.name}.yaml"
            manifest.write_text(
                yaml.safe_dump(rtt.probe_manifest(pod, spec, self.target.release, values, labels))
            )
            one_way = link.one_way_ms
            if link.rtt_ms > 0:  # a trial at half the RTT, then the toxics less the extra
                self._set_toxics(sidecars, one_way, link.one_way_jitter_ms)
                trial = rtt.records(pod, self._run_probe(pod.name, manifest))
                one_way = rtt.calibrated_one_way(link, trial[0]["achieved"]["min_ms"])
                self._set_toxics(sidecars, one_way, link.one_way_jitter_ms)
            found += rtt.records(pod, self._run_probe(pod.name, manifest), one_way)
        return {
            "emulator": "toxiproxy-server sidecars (charts/testbed links.*)",
            "probe": rtt.probe_word(spec),
            "links": found,
            "flagged": off_links(found),
            "problems": problems,
        }

    def _set_toxics(self, sidecars: list[str], one_way_ms: float, jitter_ms: float) -> None:
        """Both latency toxics of each sidecar to `one_way_ms` (± `jitter_ms`)."""
        for pod in sidecars:
            self.kube.kubectl(
                "exec", pod, "-c", rtt.SIDECAR, "--", "sh", "-c", rtt.SET_TOXICS, "set-toxics",
                f"{one_way_ms:.4f}", f"{jitter_ms:.4f}", timeout_s=60,
            )  # fmt: skip

    def _run_probe(self, name: str, manifest: Path) -> str:
        """Starts the probe pod of `manifest`, returns its output and deletes it."""
        self.kube.kubectl("delete", "pod", name, "--ignore-not-found", "--wait=true")
        self.kube.kubectl("apply", "-f", str(manifest))
        try:
            return self._probe_log(name)
        finally:
            self.kube.kubectl("delete", "pod", name, "--ignore-not-found", "--wait=false")

    def _probe_log(self, name: str) -> str:
        """The probe pod's output once it has exited 0; ProbeError when it failed or did not
        finish."""
        limit_s = rtt.PROBE_DEADLINE_S + 60
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            pod = self.kube.get("pod", name)
            phase = pod["status"].get("phase")
            if phase == "Succeeded":
                return self.kube.logs(name, "rttprobe")
            if phase == "Failed":
                try:
                    said = self.kube.logs(name, "rttprobe").strip()
                except K8sError as error:
                    said = str(error)
                raise rtt.ProbeError(f"RTT probe {name} failed: {said or pod['status']}")
            time.sleep(POLL_S)
        raise rtt.ProbeError(f"RTT probe {name} did not finish within {limit_s} s")
