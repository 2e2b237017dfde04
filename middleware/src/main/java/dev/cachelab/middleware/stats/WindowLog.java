package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.protocol.OpType;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

/**
 * Writes each closed window to {@code windows.csv}, {@code servers.csv} and one HdrHistogram
 * interval log per metric and operation type ({@code histograms/<metric>_<op>.hlog}, values in
 * microseconds, absolute epoch timestamps). Reporter thread only.
 */
public final class WindowLog implements AutoCloseable {
  static final String WINDOWS_HEADER =
      "window,start_epoch_ms,duration_ms,op,count,throughput_ops_per_s,response_time_mean_us,"
          + "queue_time_mean_us,service_time_mean_us,response_time_p50_us,response_time_p99_us,"
          + "queue_length_mean,queue_length_max,keys_requested,hits,errors,staging_time_mean_us";
  static final String SERVERS_HEADER = "window,server,requests,errors";

  private final PrintWriter windows;
  private final PrintWriter servers;
  private final HistogramLogWriter[][] hlogs =
      new HistogramLogWriter[Metric.values().length][OpType.values().length];
  private final List<String> serverNames;

  public WindowLog(Path dir, List<String> serverNames, long startEpochMs) throws IOException {
    this.serverNames = List.copyOf(serverNames);
    Path histograms = dir.resolve("histograms");
    Files.createDirectories(histograms);
    windows = new PrintWriter(Files.newBufferedWriter(dir.resolve("windows.csv")));
    windows.println(WINDOWS_HEADER);
    servers = new PrintWriter(Files.newBufferedWriter(dir.resolve("servers.csv")));
    servers.println(SERVERS_HEADER);
    for (Metric metric : Metric.values()) {
      for (OpType op : OpType.values()) {
        Path file = histograms.resolve(metric.label() + "_" + op.label() + ".hlog");
        HistogramLogWriter writer = newWriter(file);
        writer.outputComment("cachelab middleware " + metric.label() + " " + op.label() + ", us");
        writer.outputLogFormatVersion();
        writer.outputStartTime(startEpochMs);
        writer.outputLegend();
        hlogs[metric.ordinal()][op.ordinal()] = writer;
      }
    }
  }

  private static HistogramLogWriter newWriter(Path file) {
    try {
      return new HistogramLogWriter(
          new PrintStream(file.toFile(), StandardCharsets.US_ASCII.name()));
    } catch (FileNotFoundException | java.io.UnsupportedEncodingException e) {
      throw new UncheckedIOException(new IOException("cannot write " + file, e));
    }
  }

  public void write(Window w) {
    double seconds = Math.max(w.durationMs, 1) / 1000.0;
    Histogram queue = w.queueLength;
    for (OpType op : OpType.values()) {
      Histogram response = w.histogram(Metric.RESPONSE_TIME, op);
      long count = response.getTotalCount();
      windows.printf(
          Locale.ROOT,
          "%d,%d,%d,%s,%d,%.3f,%.3f,%.3f,%.3f,%d,%d,%.3f,%d,%d,%d,%d,%.3f%n",
          w.index,
          w.startEpochMs,
          w.durationMs,
          op.label(),
          count,
          count / seconds,
          mean(response),
          mean(w.histogram(Metric.QUEUE_TIME, op)),
          mean(w.histogram(Metric.SERVICE_TIME, op)),
          count == 0 ? 0 : response.getValueAtPercentile(50),
          count == 0 ? 0 : response.getValueAtPercentile(99),
          mean(queue),
          queue.getTotalCount() == 0 ? 0 : queue.getMaxValue(),
          w.keysRequested(op),
          w.hits(op),
          w.errors(op),
          mean(w.histogram(Metric.STAGING_TIME, op)));
      double start = w.startEpochMs / 1000.0;
      double end = (w.startEpochMs + w.durationMs) / 1000.0;
      for (Metric metric : Metric.values()) {
        hlogs[metric.ordinal()][op.ordinal()].outputIntervalHistogram(
            start, end, w.histogram(metric, op), 1.0);
      }
    }
    for (int s = 0; s < serverNames.size(); s++) {
      servers.printf(
          Locale.ROOT,
          "%d,%s,%d,%d%n",
          w.index,
          serverNames.get(s),
          w.serverRequests(s),
          w.serverErrors(s));
    }
    windows.flush();
    servers.flush();
  }

  static double mean(Histogram h) {
    return h.getTotalCount() == 0 ? 0.0 : h.getMean();
  }

  @Override
  public void close() {
    windows.close();
    servers.close();
    for (HistogramLogWriter[] perOp : hlogs) {
      for (HistogramLogWriter writer : perOp) {
        writer.close();
      }
    }
  }
}
