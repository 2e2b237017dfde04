package dev.cachelab.loadgen.output;

import dev.cachelab.loadgen.stats.IntervalListener;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.RunResult;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

/**
 * {@code --hdr-file-prefix=P}: memtier's file names {@code P_FULL_RUN_<n>}, {@code
 * P_SET_command_run_<n>} and {@code P_GET_command_run_<n>}, each as {@code .txt} (an HdrHistogram
 * interval log, one interval per second, values in microseconds; the intervals sum to the run) and
 * {@code .hgrm} (percentile distribution of the run in milliseconds). Sampler thread only.
 */
public final class HdrFiles implements IntervalListener {
  private static final double MICROS_PER_MILLI = 1000.0;

  private final String prefix;
  private final Map<OpType, HistogramLogWriter> opLogs = new EnumMap<>(OpType.class);
  private HistogramLogWriter fullLog;
  private int openRun = -1;
  private long startEpochMillis;

  public HdrFiles(String prefix) {
    this.prefix = prefix;
  }

  private Path path(String kind, int run, String extension) {
    return Path.of(prefix + "_" + kind + "_" + run + extension);
  }

  private HistogramLogWriter open(String kind, int run, long startMillis) {
    try {
      Path p = path(kind, run, ".txt");
      Path parent = p.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      HistogramLogWriter w = new HistogramLogWriter(p.toFile());
      w.outputLogFormatVersion();
      w.outputStartTime(startMillis);
      w.outputLegend();
      return w;
    } catch (IOException e) {
      throw new UncheckedIOException("--hdr-file-prefix: cannot write " + prefix + "*", e);
    }
  }

  @Override
  public void onInterval(
      RunResult run,
      int second,
      long elapsedNanos,
      Map<OpType, Histogram> intervals,
      Histogram total) {
    if (openRun != run.runNumber()) {
      closeAll();
      startEpochMillis = System.currentTimeMillis() - elapsedNanos / 1_000_000;
      fullLog = open("FULL_RUN", run.runNumber(), startEpochMillis);
      for (OpType op : OpType.values()) {
        opLogs.put(
            op, open(op.memtierCommand() + "_command_run", run.runNumber(), startEpochMillis));
      }
      openRun = run.runNumber();
    }
    double startSeconds = second;
    double endSeconds = Math.max(startSeconds, elapsedNanos / 1e9);
    fullLog.outputIntervalHistogram(startSeconds, endSeconds, total, MICROS_PER_MILLI);
    for (OpType op : OpType.values()) {
      opLogs
          .get(op)
          .outputIntervalHistogram(startSeconds, endSeconds, intervals.get(op), MICROS_PER_MILLI);
    }
  }

  @Override
  public void onRunEnd(RunResult run) {
    closeAll();
    writeHgrm(path("FULL_RUN", run.runNumber(), ".hgrm"), run.totals().latencyMicros());
    for (OpType op : OpType.values()) {
      writeHgrm(
          path(op.memtierCommand() + "_command_run", run.runNumber(), ".hgrm"),
          run.op(op).latencyMicros());
    }
  }

  private void writeHgrm(Path p, Histogram h) {
    try {
      Path parent = p.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("--hdr-file-prefix: cannot write " + p, e);
    }
    try (PrintStream out = new PrintStream(p.toFile(), java.nio.charset.StandardCharsets.UTF_8)) {
      if (h.getTotalCount() > 0) {
        h.outputPercentileDistribution(out, 5, MICROS_PER_MILLI);
      } else {
        out.println("# no requests of this type");
      }
    } catch (FileNotFoundException e) {
      throw new UncheckedIOException("--hdr-file-prefix: cannot write " + p, e);
    } catch (IOException e) {
      throw new UncheckedIOException("--hdr-file-prefix: cannot write " + p, e);
    }
  }

  private void closeAll() {
    if (fullLog != null) {
      fullLog.close();
      fullLog = null;
    }
    opLogs.values().forEach(HistogramLogWriter::close);
    opLogs.clear();
  }
}
