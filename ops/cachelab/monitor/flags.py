"""Flag builders of the processes that serve ``/metrics``, and one-off scrapes and checks."""

from __future__ import annotations

import subprocess

from cachelab.monitor.promql import _http_get


def middleware_metrics_flags(port: int) -> list[str]:
    """Middleware options serving ``/metrics`` on loopback ``port`` (docs/interfaces.md §1)."""
    return ["--metrics-port", str(port), "--metrics-address", "127.0.0.1"]


def loadgen_metrics_flags(port: int) -> list[str]:
    """Loadgen option serving ``/metrics`` on ``port`` (docs/interfaces.md §2)."""
    return [f"--metrics-port={port}"]


def promtool_check_metrics(exposition: bytes, promtool: str = "/usr/bin/promtool") -> list[str]:
    """Runs ``promtool check metrics`` on a scrape; returns its complaints (empty when clean)."""
    result = subprocess.run(
        [promtool, "check", "metrics"], input=exposition, capture_output=True, timeout=60
    )
    lines = (result.stdout + result.stderr).decode(errors="replace").splitlines()
    return [line for line in lines if line.strip()]


def scrape(address: str, path: str = "/metrics") -> bytes:
    """One scrape of ``http://address/path`` in the text exposition format."""
    return _http_get(f"http://{address}{path}")
