package dev.cachelab.loadgen.output;

import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.stats.LatencySummary;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.RunResult;
import dev.cachelab.loadgen.stats.SectionResult;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * The human summary, laid out like memtier's: one table per run ({@code ALL STATS}) with Sets,
 * Gets, Waits and Totals rows (ops/s, hits/s, misses/s, average and percentile latencies in ms,
 * KB/s), then the request latency distribution unless {@code --hide-histogram}. Main thread.
 */
public final class SummaryPrinter {
  private final LoadgenConfig config;

  public SummaryPrinter(LoadgenConfig config) {
    this.config = config;
  }

  /** Prints the table of one run under {@code title}. */
  public void print(PrintStream out, String title, RunResult run) {
    List<Double> ps = config.percentiles();
    StringBuilder header =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "%-6s %12s %12s %12s %15s",
                "Type",
                "Ops/sec",
                "Hits/sec",
                "Misses/sec",
                "Avg. Latency"));
    for (double p : ps) {
      header.append(String.format(Locale.ROOT, " %15s", Percentiles.label(p) + " Latency"));
    }
    header.append(String.format(Locale.ROOT, " %12s", "KB/sec"));
    String rule = "=".repeat(header.length());
    out.println();
    out.println(title);
    out.println(rule);
    out.println(header);
    out.println("-".repeat(header.length()));
    row(out, "Sets", run, run.op(OpType.SET), false);
    row(out, "Gets", run, run.op(OpType.GET), true);
    StringBuilder waits =
        new StringBuilder(
            String.format(
                Locale.ROOT, "%-6s %12.2f %12s %12s %15s", "Waits", 0.0, "---", "---", "---"));
    for (int i = 0; i < ps.size(); i++) {
      waits.append(String.format(Locale.ROOT, " %15s", "---"));
    }
    out.println(waits.append(String.format(Locale.ROOT, " %12s", "---")));
    row(out, "Totals", run, run.totals(), true);
    if (run.failure() != null) {
      out.println("(run stopped early: " + run.failure() + ")");
    }
    if (!config.hideHistogram()) {
      out.println();
      out.println();
      out.println("Request Latency Distribution");
      out.println(String.format(Locale.ROOT, "%-6s %12s %12s", "Type", "<= msec", "Percent"));
      out.println("-".repeat(header.length()));
      distribution(out, OpType.SET.memtierCommand(), run.op(OpType.SET).latencyMicros());
      out.println("---");
      distribution(out, OpType.GET.memtierCommand(), run.op(OpType.GET).latencyMicros());
      out.println("---");
    }
  }

  private void row(PrintStream out, String name, RunResult run, SectionResult s, boolean hits) {
    LatencySummary l = LatencySummary.of(s.latencyMicros(), config.percentiles());
    double seconds = run.durationSeconds();
    String hitText =
        hits ? String.format(Locale.ROOT, "%12.2f", seconds > 0 ? s.hits() / seconds : 0) : "---";
    String missText =
        hits ? String.format(Locale.ROOT, "%12.2f", seconds > 0 ? s.misses() / seconds : 0) : "---";
    StringBuilder line =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "%-6s %12.2f %12s %12s %15.5f",
                name,
                run.opsPerSecond(s),
                hitText,
                missText,
                l.meanMicros() / 1000.0));
    for (long micros : l.percentileMicros()) {
      line.append(String.format(Locale.ROOT, " %15.5f", micros / 1000.0));
    }
    double kb = seconds > 0 ? (s.rxBytes() + s.txBytes()) / 1024.0 / seconds : 0;
    out.println(line.append(String.format(Locale.ROOT, " %12.2f", kb)));
  }

  private static void distribution(PrintStream out, String type, Histogram h) {
    long total = h.getTotalCount();
    long cumulative = 0;
    for (HistogramIterationValue v : h.recordedValues()) {
      cumulative += v.getCountAtValueIteratedTo();
      out.println(
          String.format(
              Locale.ROOT,
              "%-6s %12.3f %12.2f",
              type,
              h.highestEquivalentValue(v.getValueIteratedTo()) / 1000.0,
              100.0 * cumulative / total));
    }
  }
}
