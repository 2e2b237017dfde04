package dev.cachelab.loadgen.output;

import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.stats.IntervalListener;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.RunResult;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * One progress line per second on stderr (memtier's {@code [RUN #1 45%, 9 secs]} line, newline
 * terminated so logs stay readable): ops so far, this second's and the average ops/s, this second's
 * and the average latency, then (an extension memtier lacks) this second's p99 latency and the
 * error replies so far, which cachelab's runner shows live. Called on the sampler thread.
 */
public final class ProgressPrinter implements IntervalListener {
  private final LoadgenConfig config;
  private final PrintStream out;

  public ProgressPrinter(LoadgenConfig config, PrintStream out) {
    this.config = config;
    this.out = out;
  }

  @Override
  public void onInterval(
      RunResult run,
      int second,
      long elapsedNanos,
      Map<OpType, Histogram> intervals,
      Histogram total) {
    long ops = run.totals().count();
    double elapsed = Math.max(elapsedNanos / 1e9, 1e-9);
    double seconds = Math.min(1.0, elapsed - second);
    String progress =
        config.timed()
            ? String.format(
                Locale.ROOT, "%3.0f%%", Math.min(100, 100 * elapsed / config.testTimeSeconds()))
            : "   ";
    out.println(
        String.format(
            Locale.ROOT,
            "[RUN #%d %s, %3d secs]  %d threads: %11d ops, %8.0f (avg: %8.0f) ops/sec,"
                + " %.3f (avg: %.3f) msec latency, %.3f p99 msec, %d errors",
            run.runNumber(),
            progress,
            second + 1,
            config.threads(),
            ops,
            seconds > 0 ? total.getTotalCount() / seconds : 0.0,
            ops / elapsed,
            total.getTotalCount() > 0 ? total.getMean() / 1000.0 : 0.0,
            ops > 0 ? run.totals().latencyMicros().getMean() / 1000.0 : 0.0,
            total.getTotalCount() > 0 ? total.getValueAtPercentile(99.0) / 1000.0 : 0.0,
            run.totals().errors()));
  }
}
