package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.FreePorts;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.MetricsScrape;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.util.List;
import org.junit.jupiter.api.Test;

/** /metrics serves the names of docs/interfaces.md §1. */
class MetricsIT {

  @Test
  void servesEveryDocumentedMetric() throws Exception {
    int metricsPort = FreePorts.next();
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(
                List.of(server),
                "-t",
                "3",
                "-s",
                "false",
                "--window-ms",
                "50",
                "--metrics-port",
                "" + metricsPort,
                "--metrics-address",
                "127.0.0.1");
        TextClient client = mw.client()) {
      client.call("set a 0 0 1\r\nv\r\n");
      client.call("get a\r\n");
      client.call("get a b\r\n");
      client.call("bogus\r\n");
      // Scrape until the last recorded request shows up (bounded), then check all.
      String body =
          MetricsScrape.until(
              metricsPort, "cachelab_middleware_response_time_seconds_count{op=\"multiget\"} 1");
      assertThat(body)
          .contains(
              "cachelab_middleware_requests_total{op=\"get\"} 1",
              "cachelab_middleware_requests_total{op=\"multiget\"} 1",
              "cachelab_middleware_errors_total{kind=\"client_error\",op=\"other\"} 1",
              "cachelab_middleware_keys_requested_total{op=\"multiget\"} 2",
              "cachelab_middleware_hits_total{op=\"multiget\"} 1",
              "cachelab_middleware_response_time_seconds_bucket{op=\"get\",le=\"+Inf\"} 1",
              "cachelab_middleware_response_time_seconds_count{op=\"set\"} 1",
              "cachelab_middleware_queue_time_seconds_count{op=\"get\"} 1",
              "cachelab_middleware_service_time_seconds_count{op=\"get\"} 1",
              "cachelab_middleware_queue_length ",
              "cachelab_middleware_workers 3",
              "cachelab_middleware_worker_busy_seconds_total ",
              "cachelab_middleware_server_requests_total{server=\"" + server.address() + "\"} 3",
              "cachelab_middleware_server_errors_total{server=\"" + server.address() + "\"} 0",
              "cachelab_middleware_client_connections 1");
    }
  }
}
