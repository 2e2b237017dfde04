"""A PromQL client for Prometheus's HTTP API (``/api/v1``): instant and range queries, series,
label values and scrape targets. Called from the caller's thread; no state besides the URL."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from cachelab.monitor.errors import MonitorError

START_TIMEOUT_S = 30.0


def _http_get(url: str, timeout_s: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        body: bytes = response.read()
        return body


class PromClient:
    """PromQL over Prometheus's HTTP API (``/api/v1``). Results are the API's ``data`` objects."""

    def __init__(self, base_url: str, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def _fetch(self, url: str, path: str) -> bytes:
        """The body of a GET of ``url`` (the API's ``path`` with its parameters)."""
        try:
            return _http_get(url, self.timeout_s)
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")
            raise MonitorError(f"Prometheus {path} failed ({e.code}): {detail}") from e

    def _api(self, path: str, params: Sequence[tuple[str, str]]) -> Any:
        url = f"{self.base_url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        reply = json.loads(self._fetch(url, path))
        if reply.get("status") != "success":
            raise MonitorError(f"Prometheus {path} failed: {reply.get('error', reply)}")
        return reply["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """Instant query; returns the vector (a scalar result becomes one unlabeled sample)."""
        params = [("query", expr)] + ([("time", f"{at:.3f}")] if at is not None else [])
        data = self._api("query", params)
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def query_range(
        self, expr: str, start: float, end: float, step_s: float = 1.0
    ) -> list[dict[str, Any]]:
        """Range query; returns one entry per series with its ``values`` ([time, "value"])."""
        params = [
            ("query", expr),
            ("start", f"{start:.3f}"),
            ("end", f"{end:.3f}"),
            ("step", f"{step_s:g}"),
        ]
        result: list[dict[str, Any]] = self._api("query_range", params)["result"]
        return result

    def series(
        self, match: str, start: float | None = None, end: float | None = None
    ) -> list[dict[str, str]]:
        """Label sets of the series matching the selector ``match``."""
        params = [("match[]", match)]
        if start is not None and end is not None:
            params += [("start", f"{start:.3f}"), ("end", f"{end:.3f}")]
        result: list[dict[str, str]] = self._api("series", params)
        return result

    def label_values(
        self, selector: str, label: str, start: float | None = None, end: float | None = None
    ) -> list[str]:
        """What Grafana's ``label_values(selector, label)`` lists: sorted distinct values."""
        return sorted({s[label] for s in self.series(selector, start, end) if label in s})

    def targets(self) -> list[dict[str, Any]]:
        """The active scrape targets with their labels, health and last error."""
        active: list[dict[str, Any]] = self._api("targets", [("state", "active")])["activeTargets"]
        return active

    def wait_targets_up(
        self, expected: int | None = None, timeout_s: float = START_TIMEOUT_S
    ) -> list[dict[str, Any]]:
        """Waits until ``expected`` targets (default: any) are discovered and every one has
        been scraped successfully."""
        deadline = time.monotonic() + timeout_s
        targets: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            targets = self.targets()
            enough = len(targets) >= expected if expected is not None else bool(targets)
            if enough and all(t["health"] == "up" for t in targets):
                return targets
            time.sleep(0.2)
        down = [
            f"{t['labels'].get('job')} {t['scrapeUrl']}: {t['lastError'] or t['health']}"
            for t in targets
            if t["health"] != "up"
        ]
        raise MonitorError(
            f"targets not up within {timeout_s:.0f} s ({len(targets)} discovered, "
            f"expected {expected or 'some'}): {'; '.join(down)}"
        )
