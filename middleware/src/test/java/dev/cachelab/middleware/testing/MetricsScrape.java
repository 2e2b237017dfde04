package dev.cachelab.middleware.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Scrapes the middleware's {@code /metrics} in tests. */
public final class MetricsScrape {
  private MetricsScrape() {}

  /**
   * The {@code /metrics} body once it contains {@code awaited}, or after 10 s, whichever comes
   * first. Histograms are folded in at window ends; on a loaded machine that can take a while.
   */
  public static String until(int metricsPort, String awaited)
      throws IOException, InterruptedException {
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest scrape =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build();
    String body = http.send(scrape, HttpResponse.BodyHandlers.ofString()).body();
    long deadlineNanos = System.nanoTime() + 10_000_000_000L;
    while (!body.contains(awaited) && System.nanoTime() < deadlineNanos) {
      Thread.sleep(50);
      body = http.send(scrape, HttpResponse.BodyHandlers.ofString()).body();
    }
    return body;
  }
}
