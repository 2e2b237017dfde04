package dev.cachelab.loadgen.metrics;

import dev.cachelab.loadgen.stats.IntervalListener;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.RunResult;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.io.IOException;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * {@code --metrics-port}: serves {@code cachelab_loadgen_requests_total{op}}, {@code
 * cachelab_loadgen_response_time_seconds{op}} (classic histogram) and {@code
 * cachelab_loadgen_errors_total}. Nothing is touched on the request path: the sampler thread folds
 * each second's HdrHistograms into bucket counts ({@link #onInterval}), and the HTTP thread reads
 * them under a lock at scrape time. Error replies are added at the end of each run.
 */
public final class LoadgenMetrics implements IntervalListener, AutoCloseable {
  /** Bucket upper bounds in seconds (50 µs .. 10 s), then +Inf. */
  static final double[] BOUNDS = {
    0.00005,
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    5,
    10,
    Double.POSITIVE_INFINITY
  };

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final Counter requests;
  private final Counter errors;
  private final long[][] bucketCounts = new long[OpType.values().length][BOUNDS.length];
  private final double[] sumSeconds = new double[OpType.values().length];
  private HTTPServer server;

  private LoadgenMetrics() {
    requests =
        Counter.builder()
            .name("cachelab_loadgen_requests_total")
            .help("Replies received, by request type")
            .labelNames("op")
            .register(registry);
    errors =
        Counter.builder()
            .name("cachelab_loadgen_errors_total")
            .help("Error replies (SERVER_ERROR, CLIENT_ERROR, ERROR, -ERR)")
            .register(registry);
    registry.register(this::collectHistogram);
  }

  /** Starts the HTTP server on {@code port} (all interfaces). */
  public static LoadgenMetrics start(int port) throws IOException {
    LoadgenMetrics metrics = new LoadgenMetrics();
    try {
      metrics.server = HTTPServer.builder().port(port).registry(metrics.registry).buildAndStart();
    } catch (IOException e) {
      throw new IOException(
          "--metrics-port: cannot listen on port " + port + ": " + e.getMessage(), e);
    }
    return metrics;
  }

  /** Port the server listens on. */
  public int port() {
    return server.getPort();
  }

  @Override
  public void onInterval(
      RunResult run,
      int second,
      long elapsedNanos,
      Map<OpType, Histogram> intervals,
      Histogram total) {
    for (OpType op : OpType.values()) {
      Histogram h = intervals.get(op);
      if (h.getTotalCount() == 0) {
        continue;
      }
      requests.labelValues(op.label()).inc(h.getTotalCount());
      synchronized (this) {
        long[] counts = bucketCounts[op.ordinal()];
        for (HistogramIterationValue v : h.recordedValues()) {
          double seconds = h.highestEquivalentValue(v.getValueIteratedTo()) / 1e6;
          int i = 0;
          while (seconds > BOUNDS[i]) {
            i++;
          }
          counts[i] += v.getCountAtValueIteratedTo();
          sumSeconds[op.ordinal()] += seconds * v.getCountAtValueIteratedTo();
        }
      }
    }
  }

  @Override
  public void onRunEnd(RunResult run) {
    long n = run.totals().errors();
    if (n > 0) {
      errors.inc(n);
    }
  }

  private synchronized HistogramSnapshot collectHistogram() {
    HistogramSnapshot.Builder b =
        HistogramSnapshot.builder()
            .name("cachelab_loadgen_response_time_seconds")
            .help("Client-side response time: request sent (or, open loop, due) to reply");
    for (OpType op : OpType.values()) {
      b.dataPoint(
          HistogramDataPointSnapshot.builder()
              .classicHistogramBuckets(
                  ClassicHistogramBuckets.of(BOUNDS, bucketCounts[op.ordinal()].clone()))
              .sum(sumSeconds[op.ordinal()])
              .labels(Labels.of("op", op.label()))
              .build());
    }
    return b.build();
  }

  @Override
  public void close() {
    if (server != null) {
      server.close();
    }
  }
}
