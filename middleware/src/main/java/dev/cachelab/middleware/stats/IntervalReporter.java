package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.protocol.OpType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * The statistics thread: every {@code --window-ms} it closes a window ({@link WindowAggregator}),
 * writes it ({@link WindowLog}), adds it to the run {@link Summary} and to the cumulative
 * histograms behind {@code /metrics}. On {@link #stop} it closes the last, partial window and
 * writes {@code summary.json}.
 *
 * <p>Coordinated omission: the load generators are closed-loop, so a slow reply delays the next
 * request rather than queueing unseen ones; times are recorded as measured, without {@code
 * recordValueWithExpectedInterval} correction. Response time is measured from the read that
 * completed the request, so time spent in the client's socket buffer is not included.
 */
public final class IntervalReporter {
  private final MiddlewareConfig config;
  private final StatsRegistry registry;
  private final WindowAggregator aggregator;
  private final Histogram[][] cumulative =
      new Histogram[Metric.values().length][OpType.values().length];
  private Summary summary;
  private WindowLog log;
  private Thread thread;
  private long windowStartEpochMs;
  private long windowStartNanos;
  private volatile boolean running;

  public IntervalReporter(MiddlewareConfig config, StatsRegistry registry) {
    this.config = config;
    this.registry = registry;
    this.aggregator = new WindowAggregator(registry);
    for (Histogram[] perOp : cumulative) {
      for (int op = 0; op < perOp.length; op++) {
        perOp[op] = Window.newHistogram();
      }
    }
  }

  /** Starts the first window and the thread; {@code listen} is the bound {@code ip:port}. */
  public void start(String listen) throws IOException {
    summary = new Summary(config, listen);
    windowStartEpochMs = System.currentTimeMillis();
    windowStartNanos = System.nanoTime();
    if (config.statsDir() != null) {
      Files.createDirectories(config.statsDir());
      log = new WindowLog(config.statsDir(), config.servers(), windowStartEpochMs);
    }
    running = true;
    thread = new Thread(this::run, "stats-reporter");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    long windowNanos = TimeUnit.MILLISECONDS.toNanos(config.windowMs());
    long nextNanos = windowStartNanos + windowNanos;
    while (running) {
      long sleepNanos = nextNanos - System.nanoTime();
      if (sleepNanos > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(sleepNanos);
        } catch (InterruptedException e) {
          return;
        }
      }
      synchronized (this) {
        if (!running) {
          return;
        }
        closeWindow(System.nanoTime());
      }
      nextNanos += windowNanos;
    }
  }

  private void closeWindow(long nowNanos) {
    long durationMs = TimeUnit.NANOSECONDS.toMillis(nowNanos - windowStartNanos);
    Window window = aggregator.close(windowStartEpochMs, durationMs);
    windowStartEpochMs += durationMs;
    windowStartNanos = nowNanos;
    if (log != null) {
      try {
        log.write(window);
      } catch (RuntimeException e) {
        // Statistics must never stop the middleware.
        System.err.println("cachelab middleware: cannot write window log: " + e);
      }
    }
    summary.add(window);
    synchronized (cumulative) {
      for (Metric metric : Metric.values()) {
        for (OpType op : OpType.values()) {
          cumulative[metric.ordinal()][op.ordinal()].add(window.histogram(metric, op));
        }
      }
    }
  }

  /**
   * Cumulative counts of {@code metric} for {@code op} at or below each bound (microseconds), and
   * the total count and sum (microseconds) last. Any thread (the metrics endpoint).
   */
  public long[] cumulativeBuckets(Metric metric, OpType op, long[] boundsMicros, double[] sum) {
    synchronized (cumulative) {
      Histogram h = cumulative[metric.ordinal()][op.ordinal()];
      long[] counts = new long[boundsMicros.length + 1];
      for (int i = 0; i < boundsMicros.length; i++) {
        counts[i] = h.getCountBetweenValues(0, boundsMicros[i]);
      }
      counts[boundsMicros.length] = h.getTotalCount();
      sum[0] = h.getTotalCount() == 0 ? 0 : h.getMean() * h.getTotalCount();
      return counts;
    }
  }

  /** Closes the last window and writes {@code summary.json}. Idempotent. */
  public void stop() {
    synchronized (this) {
      if (!running) {
        return;
      }
      running = false;
      closeWindow(System.nanoTime());
    }
    thread.interrupt();
    if (log != null) {
      log.close();
    }
    if (config.statsDir() != null) {
      writeSummary(config.statsDir().resolve("summary.json"));
    }
  }

  /** The summary so far, as JSON. */
  public synchronized String summaryJson() {
    return summary.toJson();
  }

  private void writeSummary(Path file) {
    try {
      Path tmp = file.resolveSibling("summary.json.tmp");
      Files.writeString(tmp, summary.toJson(), StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      System.err.println("cachelab middleware: cannot write " + file + ": " + e);
    }
  }

  StatsRegistry registry() {
    return registry;
  }
}
