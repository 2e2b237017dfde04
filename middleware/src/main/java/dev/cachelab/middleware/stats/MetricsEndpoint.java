package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.protocol.OpType;
import dev.cachelab.middleware.servers.BackendHealth;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The Prometheus {@code /metrics} endpoint (names in docs/interfaces.md §1). Nothing is recorded
 * for it on the request path: a scrape reads the threads' counters and the reporter's cumulative
 * histograms (which lag by at most one window). Started and stopped by the main thread; scrapes run
 * on the HTTP server's thread ({@link MetricsHttpServer}).
 */
public final class MetricsEndpoint implements MultiCollector {
  private static final String P = "cachelab_middleware_";

  /** Bucket bounds in microseconds: 50 us to 10 s. */
  static final long[] BOUNDS_MICROS = {
    50,
    100,
    250,
    500,
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000
  };

  private final MiddlewareConfig config;
  private final StatsRegistry stats;
  private IntervalReporter reporter;
  private MetricsHttpServer server;

  public MetricsEndpoint(MiddlewareConfig config, StatsRegistry stats) {
    this.config = config;
    this.stats = stats;
  }

  /**
   * Starts serving if {@code --metrics-port} is not 0, on {@code --metrics-address} (by default
   * {@code -l}'s address: the labels name the servers, which is not for every network).
   */
  public void start(IntervalReporter reporter) throws IOException {
    this.reporter = reporter;
    if (config.metricsPort() == 0) {
      return;
    }
    PrometheusTextFormatWriter writer = new PrometheusTextFormatWriter(false);
    server =
        MetricsHttpServer.start(
            new InetSocketAddress(config.metricsAddress(), config.metricsPort()),
            () -> {
              ByteArrayOutputStream body = new ByteArrayOutputStream(16 * 1024);
              try {
                writer.write(body, collect());
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
              return body.toByteArray();
            });
  }

  /** The port served, or 0 when off. */
  public int port() {
    return server == null ? 0 : server.port();
  }

  public void stop() {
    if (server != null) {
      server.close();
      server = null;
    }
  }

  @Override
  public MetricSnapshots collect() {
    List<io.prometheus.metrics.model.snapshots.MetricSnapshot> all = new ArrayList<>();
    all.add(perOp("requests", "Requests completed.", stats::requests));
    all.add(errors());
    all.add(perOp("keys_requested", "Keys asked for by get requests.", stats::keysRequested));
    all.add(perOp("hits", "Values returned by get requests.", stats::hits));
    all.add(histogram(Metric.RESPONSE_TIME, "Middleware response time."));
    all.add(histogram(Metric.QUEUE_TIME, "Time in the request queue."));
    all.add(histogram(Metric.SERVICE_TIME, "Time at the servers."));
    all.add(
        histogram(
            Metric.STAGING_TIME,
            "Part of the queue time before the net thread published the request."));
    all.add(gauge("queue_length", "Requests waiting in the queue.", stats.queueLength()));
    all.add(gauge("workers", "Worker threads.", stats.workers()));
    all.add(
        counter(
            "worker_busy_seconds",
            "Seconds workers spent on requests (busy fraction = rate / workers).",
            stats.busyNanos() / 1e9));
    all.add(perServer("server_requests", "Requests sent to each server.", true));
    all.add(perServer("server_errors", "Failed requests per server.", false));
    all.add(perServerHealth("server_ejections", "Times a server was taken out of rotation.", 0));
    all.add(perServerHealth("server_returns", "Times a server came back after a probe.", 1));
    all.add(
        perServerHealth(
            "server_busy_refusals",
            "Requests refused because too many workers waited on a failing server.",
            2));
    all.add(perServerEjected());
    all.add(gauge("client_connections", "Connected clients.", stats.connections()));
    for (StatsRegistry.NamedValue v : stats.values()) {
      all.add(gauge(v.name(), v.help(), v.value().getAsLong()));
    }
    return new MetricSnapshots(all);
  }

  private CounterSnapshot perOp(String name, String help, ToDoubleFunction<OpType> value) {
    CounterSnapshot.Builder b = CounterSnapshot.builder().name(P + name).help(help);
    for (OpType op : OpType.recorded()) {
      b.dataPoint(
          CounterDataPointSnapshot.builder()
              .value(value.applyAsDouble(op))
              .labels(Labels.of("op", op.label()))
              .build());
    }
    return b.build();
  }

  private CounterSnapshot errors() {
    CounterSnapshot.Builder b =
        CounterSnapshot.builder().name(P + "errors").help("Failed requests by kind.");
    for (OpType op : OpType.recorded()) {
      for (ErrorKind kind : ErrorKind.values()) {
        b.dataPoint(
            CounterDataPointSnapshot.builder()
                .value(stats.errors(op, kind))
                .labels(Labels.of("kind", kind.label(), "op", op.label()))
                .build());
      }
    }
    return b.build();
  }

  private HistogramSnapshot histogram(Metric metric, String help) {
    HistogramSnapshot.Builder b =
        HistogramSnapshot.builder().name(P + metric.label() + "_seconds").help(help);
    double[] bounds = new double[BOUNDS_MICROS.length + 1];
    for (int i = 0; i < BOUNDS_MICROS.length; i++) {
      bounds[i] = BOUNDS_MICROS[i] / 1e6;
    }
    bounds[BOUNDS_MICROS.length] = Double.POSITIVE_INFINITY;
    for (OpType op : OpType.recorded()) {
      double[] sum = new double[1];
      long[] cumulative = reporter.cumulativeBuckets(metric, op, BOUNDS_MICROS, sum);
      long[] perBucket = new long[cumulative.length];
      long previous = 0;
      for (int i = 0; i < cumulative.length; i++) {
        perBucket[i] = Math.max(0, cumulative[i] - previous);
        previous = Math.max(previous, cumulative[i]);
      }
      b.dataPoint(
          HistogramDataPointSnapshot.builder()
              .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, perBucket))
              .sum(sum[0] / 1e6)
              .labels(Labels.of("op", op.label()))
              .build());
    }
    return b.build();
  }

  private CounterSnapshot perServer(String name, String help, boolean requests) {
    CounterSnapshot.Builder b = CounterSnapshot.builder().name(P + name).help(help);
    List<String> servers = stats.servers();
    for (int s = 0; s < servers.size(); s++) {
      b.dataPoint(
          CounterDataPointSnapshot.builder()
              .value(requests ? stats.serverRequests(s) : stats.serverErrors(s))
              .labels(Labels.of("server", servers.get(s)))
              .build());
    }
    return b.build();
  }

  private CounterSnapshot perServerHealth(String name, String help, int which) {
    CounterSnapshot.Builder b = CounterSnapshot.builder().name(P + name).help(help);
    List<String> servers = stats.servers();
    for (int s = 0; s < servers.size(); s++) {
      BackendHealth h = stats.health(s);
      long value =
          h == null
              ? 0
              : switch (which) {
                case 0 -> h.ejections();
                case 1 -> h.returns();
                default -> h.busyRefusals();
              };
      b.dataPoint(
          CounterDataPointSnapshot.builder()
              .value(value)
              .labels(Labels.of("server", servers.get(s)))
              .build());
    }
    return b.build();
  }

  private GaugeSnapshot perServerEjected() {
    GaugeSnapshot.Builder b =
        GaugeSnapshot.builder().name(P + "server_ejected").help("1 while a server is ejected.");
    List<String> servers = stats.servers();
    for (int s = 0; s < servers.size(); s++) {
      BackendHealth h = stats.health(s);
      b.dataPoint(
          GaugeDataPointSnapshot.builder()
              .value(h != null && h.ejected() ? 1 : 0)
              .labels(Labels.of("server", servers.get(s)))
              .build());
    }
    return b.build();
  }

  private static CounterSnapshot counter(String name, String help, double value) {
    return CounterSnapshot.builder()
        .name(P + name)
        .help(help)
        .dataPoint(CounterDataPointSnapshot.builder().value(value).build())
        .build();
  }

  private static GaugeSnapshot gauge(String name, String help, double value) {
    return GaugeSnapshot.builder()
        .name(P + name)
        .help(help)
        .dataPoint(GaugeDataPointSnapshot.builder().value(value).build())
        .build();
  }
}
