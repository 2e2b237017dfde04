"""The dashboards' panels of a Kubernetes run (cachelab.panels): each panel's PromQL queried from
the cluster's Prometheus (cachelab.k8s.prometheus) over the run's seconds, with the dashboards'
variables set to the run's namespace, release and pools, and kept in the run's folder for the
report. Called from the runner's thread only."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cachelab import grafana
from cachelab.k8s.kube import Kube
from cachelab.k8s.plan import Target
from cachelab.k8s.prometheus import find_prometheus
from cachelab.monitor import MonitorError, PromClient
from cachelab.panels import PANELS_DIR, panel_titles, record_panels, write_recording
from cachelab.spec import Spec

SCRAPE_INTERVAL_S = 15.0  # the chart's ServiceMonitors and the loadgen's PodMonitor
# Grafana's $__rate_interval for that scrape interval (4 x), and one sample a step
RATE_INTERVAL = "1m"
STEP_S = 5.0


class PanelRecorder:
    """Records the panels of `dashboards_dir` for each run, once the run's last scrape is in."""

    def __init__(self, kube: Kube, target: Target, dashboards_dir: Path) -> None:
        self.kube = kube
        self.target = target
        self.dashboards_dir = dashboards_dir
        self._source: PromClient | str | None = None

    def record(self, spec: Spec, start_s: float, end_s: float, run_dir: Path) -> dict[str, Any]:
        """point.json's `panels`: where they are and how many have data, or why there are none."""
        if self._source is None:
            self._source = find_prometheus(self.kube)
        if isinstance(self._source, str):
            return {"unavailable": self._source}
        time.sleep(max(0.0, end_s + SCRAPE_INTERVAL_S - time.time()))
        hosts = spec.topology.hosts
        pinned = {
            "namespace": self.kube.namespace,
            "release": self.target.release,
            "client_pool": hosts.client,
            "middleware_pool": hosts.middleware,
            "server_pool": hosts.server,
        }
        try:
            dashboards = grafana.load_dir(self.dashboards_dir)
            recording = record_panels(
                dashboards, self._source, start_s, end_s, pinned, RATE_INTERVAL, STEP_S
            )
        except (MonitorError, grafana.DashboardError) as error:
            return {"unavailable": str(error)}
        write_recording(run_dir, recording)
        return {
            "folder": PANELS_DIR,
            "panels": len(recording.panels),
            "with_data": len(recording.with_data),
            "without_data": panel_titles(recording.without_data),
        }
