package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.FreePorts;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.MetricsScrape;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * /metrics serves the names of docs/interfaces.md §1, on -l's address unless told otherwise, and
 * slow clients do not hold up a scrape.
 */
class MetricsIT {
  private static final int SLOW_CLIENTS = 40;

  @Test
  void servesEveryDocumentedMetric() throws Exception {
    int metricsPort = FreePorts.next();
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(
                List.of(server),
                "-t",
                "3",
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

  @Test
  void listensOnTheListenAddressUnlessToldOtherwise() throws Exception {
    int metricsPort = FreePorts.next();
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(
                List.of(server), "-t", "1", "--metrics-port", "" + metricsPort)) {
      assertThat(scrape("127.0.0.1", metricsPort)).contains("cachelab_middleware_workers 1");
      // 127.0.0.2 is this machine too (127.0.0.0/8 is loopback), but not -l's 127.0.0.1: a
      // wildcard bind would take it.
      assertThat(connects("127.0.0.2", metricsPort)).as("reachable on 127.0.0.2").isFalse();
    }
  }

  @Test
  void clientsSendingTheirHeadersAByteAtATimeHoldUpNoScrape() throws Exception {
    int metricsPort = FreePorts.next();
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(
                List.of(server), "-t", "1", "--metrics-port", "" + metricsPort)) {
      List<Socket> slow = new ArrayList<>();
      try {
        for (int i = 0; i < SLOW_CLIENTS; i++) {
          Socket socket = new Socket();
          socket.connect(new InetSocketAddress("127.0.0.1", metricsPort), 2_000);
          slow.add(socket);
        }
        byte[] request =
            "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
        long deadline = System.nanoTime() + 5_000_000_000L;
        for (int b = 0; System.nanoTime() < deadline; b++) {
          for (Socket socket : slow) {
            trickle(socket, request[Math.min(b, request.length - 1)]);
          }
          long start = System.nanoTime();
          String body = scrape("127.0.0.1", metricsPort);
          long millis = (System.nanoTime() - start) / 1_000_000;
          assertThat(body).as("scrape %d", b).contains("cachelab_middleware_workers 1");
          assertThat(millis).as("scrape %d took (ms)", b).isLessThan(1_000);
          Thread.sleep(250);
        }
      } finally {
        for (Socket socket : slow) {
          socket.close();
        }
      }
      assertThat(scrape("127.0.0.1", metricsPort)).contains("cachelab_middleware_workers 1");
    }
  }

  /** Sends one byte; a connection the server has closed meanwhile is fine. */
  private static void trickle(Socket socket, byte b) {
    try {
      socket.getOutputStream().write(b);
    } catch (IOException closedByServer) {
      // the header deadline passed
    }
  }

  private static boolean connects(String host, int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), 1_000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** GET /metrics on a plain socket (HTTP/1.1, the server closes after the reply). */
  private static String scrape(String host, int port) throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), 2_000);
      socket.setSoTimeout(5_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("GET /metrics HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(reply).startsWith("HTTP/1.1 200 ");
      return reply;
    }
  }
}
