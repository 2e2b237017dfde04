"""Local monitoring: a real Prometheus scraping a local experiment, and a PromQL client.

Modules: ``promql`` (the PromQL client), ``services`` (Prometheus and exporter processes),
``local`` (the local monitor and its scrape configuration), ``flags`` (``/metrics`` flags of the
middleware and the loadgen, one-off scrapes); child processes go through cachelab.processes.


``LocalMonitor`` starts ``prometheus-node-exporter``, for each redis server the redis exporter
and for each memcached server collectd as its exporter (when the Debian binaries exist), writes
a scrape config in which every target carries the labels a Kubernetes scrape would give it
(``namespace``, ``pod``, ``container``, ``job``, and ``release``, see
``docs/observability.md``), and runs ``/usr/bin/prometheus`` on a free loopback port with its
TSDB next to the results. The dashboards' queries therefore run unchanged against it.
``PromClient`` evaluates PromQL through Prometheus's HTTP API.

All processes listen on 127.0.0.1 on ports chosen at run time, and are stopped on exit (also
when the body of the ``with`` block raises).
"""

from cachelab.monitor.errors import MonitorError
from cachelab.monitor.flags import (
    loadgen_metrics_flags,
    middleware_metrics_flags,
    promtool_check_metrics,
    scrape,
)
from cachelab.monitor.local import (
    DEFAULT_NAMESPACE,
    DEFAULT_RELEASE,
    JOBS,
    LocalMonitor,
    MonitorSettings,
    ScrapeTarget,
    ServerEndpoint,
    scrape_config,
    target_groups,
)
from cachelab.monitor.promql import START_TIMEOUT_S, PromClient
from cachelab.monitor.services import (
    MEMCACHED_EXPORTER_BIN,
    NODE_EXPORTER_BIN,
    PROMETHEUS_BIN,
    REDIS_EXPORTER_BIN,
    Exporter,
    Prometheus,
    memcached_exporter,
    node_exporter,
    redis_exporter,
    serve_stored,
    wait_http_ok,
)
from cachelab.processes import ManagedProcess, free_port

__all__ = [
    "DEFAULT_NAMESPACE",
    "DEFAULT_RELEASE",
    "JOBS",
    "MEMCACHED_EXPORTER_BIN",
    "NODE_EXPORTER_BIN",
    "PROMETHEUS_BIN",
    "REDIS_EXPORTER_BIN",
    "START_TIMEOUT_S",
    "Exporter",
    "LocalMonitor",
    "ManagedProcess",
    "MonitorError",
    "MonitorSettings",
    "PromClient",
    "Prometheus",
    "ScrapeTarget",
    "ServerEndpoint",
    "free_port",
    "loadgen_metrics_flags",
    "memcached_exporter",
    "middleware_metrics_flags",
    "node_exporter",
    "promtool_check_metrics",
    "redis_exporter",
    "scrape",
    "scrape_config",
    "serve_stored",
    "target_groups",
    "wait_http_ok",
]
