package dev.cachelab.loadgen;

import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.engine.BenchmarkRun;
import dev.cachelab.loadgen.metrics.LoadgenMetrics;
import dev.cachelab.loadgen.output.HdrFiles;
import dev.cachelab.loadgen.output.MemtierJson;
import dev.cachelab.loadgen.output.ProgressPrinter;
import dev.cachelab.loadgen.output.SummaryPrinter;
import dev.cachelab.loadgen.stats.IntervalListener;
import dev.cachelab.loadgen.stats.RunResult;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code --run-count} runs of a validated configuration and reports them: progress, the text
 * summary, the JSON file, HDR files and Prometheus metrics. Main thread; a shutdown hook (SIGINT,
 * SIGTERM) stops the current run early and waits until its results are written.
 */
public final class Loadgen {
  private final LoadgenConfig config;
  private final List<String> commandLine;
  private final PrintStream out;
  private final PrintStream err;
  private volatile BenchmarkRun current;

  public Loadgen(LoadgenConfig config, List<String> commandLine, PrintStream out, PrintStream err) {
    this.config = config;
    this.commandLine = List.copyOf(commandLine);
    this.out = out;
    this.err = err;
  }

  /** Runs and returns the exit status. */
  public int run() {
    CountDownLatch written = new CountDownLatch(1);
    Thread hook =
        new Thread(
            () -> {
              BenchmarkRun run = current;
              if (run != null && written.getCount() > 0) {
                run.control().interrupt("interrupted by a signal");
                try {
                  written.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
            },
            "loadgen-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    LoadgenMetrics metrics = null;
    try {
      List<IntervalListener> listeners = new ArrayList<>();
      if (!config.quiet()) {
        listeners.add(new ProgressPrinter(config, err));
      }
      if (config.hdrFilePrefix() != null) {
        listeners.add(new HdrFiles(config.hdrFilePrefix()));
      }
      if (config.metricsPort() > 0) {
        metrics = LoadgenMetrics.start(config.metricsPort());
        listeners.add(metrics);
      }
      List<RunResult> runs = new ArrayList<>();
      String failure = null;
      for (int n = 1; n <= config.runCount() && failure == null; n++) {
        current = new BenchmarkRun(config, n, listeners);
        RunResult result = current.execute();
        runs.add(result);
        failure = result.failure();
      }
      if (failure != null) {
        err.println("error: " + failure);
      }
      report(runs);
      return failure != null ? Main.EXIT_FAILED : 0;
    } catch (IOException | UncheckedIOException e) {
      err.println("error: " + e.getMessage());
      return Main.EXIT_FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("error: interrupted");
      return Main.EXIT_FAILED;
    } finally {
      if (metrics != null) {
        metrics.close();
      }
      written.countDown();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException ignored) {
        // already shutting down: the hook is running and waits for `written`
      }
    }
  }

  private void report(List<RunResult> runs) throws IOException {
    SummaryPrinter printer = new SummaryPrinter(config);
    if (runs.size() == 1) {
      printer.print(out, "ALL STATS", runs.get(0));
    } else {
      for (RunResult r : runs) {
        printer.print(out, "RUN #" + r.runNumber() + " RESULTS", r);
      }
    }
    out.flush();
    if (config.jsonOutFile() != null) {
      try {
        new MemtierJson(config, commandLine).write(config.jsonOutFile(), runs);
      } catch (IOException e) {
        throw new IOException(
            "--json-out-file: cannot write " + config.jsonOutFile() + ": " + e.getMessage(), e);
      }
    }
  }
}
