"""The cluster's Prometheus, as `cachelab run --target k8s` reaches it: the Service
`prometheus-operated` that the Prometheus Operator makes for its first `Prometheus` object, through
the API server's service proxy (kubectl's credentials; no port to open), or the URL in
$CACHELAB_K8S_PROMETHEUS. Called from the runner's thread only."""

from __future__ import annotations

import os

from cachelab.k8s.kube import K8sError, Kube
from cachelab.monitor import MonitorError, PromClient

PROMETHEUS_URL_ENV = "CACHELAB_K8S_PROMETHEUS"
OPERATED_SERVICE = "prometheus-operated"  # the operator's Service of every Prometheus pod
WEB_PORT = "web"


class ProxiedPromClient(PromClient):
    """PromQL through the API server: ``base_url`` is a service proxy path."""

    def __init__(self, kube: Kube, proxy_path: str) -> None:
        super().__init__(proxy_path)
        self.kube = kube

    def _fetch(self, url: str, path: str) -> bytes:
        try:
            return self.kube.get_raw(url).encode()
        except K8sError as error:
            raise MonitorError(f"Prometheus {path} through {self.base_url}: {error}") from None


def find_prometheus(kube: Kube) -> PromClient | str:
    """A client of the cluster's Prometheus, or why there is none."""
    url = os.environ.get(PROMETHEUS_URL_ENV, "").strip()
    if url:
        return PromClient(url)
    try:
        items = kube.get("prometheuses.monitoring.coreos.com", "--all-namespaces")["items"]
    except K8sError as error:
        return f"no Prometheus Operator's Prometheus to query ({error})"
    if not items:
        return "no Prometheus object in the cluster (make monitoring-operator-install)"
    namespace = sorted(p["metadata"]["namespace"] for p in items)[0]
    proxy = f"/api/v1/namespaces/{namespace}/services/{OPERATED_SERVICE}:{WEB_PORT}/proxy"
    client = ProxiedPromClient(kube, proxy)
    try:
        client.query("vector(1)")
    except MonitorError as error:
        return f"the Prometheus in {namespace} does not answer: {error}"
    return client
