package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.protocol.OpType;
import org.HdrHistogram.Histogram;

/**
 * Closes windows: moves every thread's interval histograms into a new {@link Window} and turns the
 * cumulative counters into per-window differences. Because recorders hand over exactly what was
 * recorded since the previous swap and counters are differenced, the windows add up to the whole
 * run. Reporter thread only.
 */
public final class WindowAggregator {
  private final StatsRegistry registry;
  private final long[][] previousCounters = new long[OpType.RECORDED][3];
  private final long[] previousServerRequests;
  private final long[] previousServerErrors;
  private int nextIndex;

  public WindowAggregator(StatsRegistry registry) {
    this.registry = registry;
    this.previousServerRequests = new long[registry.servers().size()];
    this.previousServerErrors = new long[registry.servers().size()];
  }

  /** Closes the window that started at {@code startEpochMs} and lasted {@code durationMs}. */
  public Window close(long startEpochMs, long durationMs) {
    Window window =
        new Window(nextIndex++, startEpochMs, durationMs, previousServerRequests.length);
    int all = OpType.ALL.ordinal();
    for (ThreadRecorder recorder : registry.recorders()) {
      recorder.flipIntervals();
      for (Metric metric : Metric.values()) {
        for (OpType op : OpType.recorded()) {
          Histogram interval = recorder.interval(metric, op);
          window.histograms[metric.ordinal()][op.ordinal()].add(interval);
          window.histograms[metric.ordinal()][all].add(interval);
        }
      }
      window.queueLength.add(recorder.queueLengthInterval());
    }
    for (OpType op : OpType.recorded()) {
      int o = op.ordinal();
      long keys = registry.keysRequested(op);
      long hits = registry.hits(op);
      long errors = 0;
      for (ErrorKind kind : ErrorKind.values()) {
        errors += registry.errors(op, kind);
      }
      window.keysRequested[o] = keys - previousCounters[o][0];
      window.hits[o] = hits - previousCounters[o][1];
      window.errors[o] = errors - previousCounters[o][2];
      previousCounters[o][0] = keys;
      previousCounters[o][1] = hits;
      previousCounters[o][2] = errors;
      window.keysRequested[all] += window.keysRequested[o];
      window.hits[all] += window.hits[o];
      window.errors[all] += window.errors[o];
    }
    for (int s = 0; s < previousServerRequests.length; s++) {
      long requests = registry.serverRequests(s);
      long errors = registry.serverErrors(s);
      window.serverRequests[s] = requests - previousServerRequests[s];
      window.serverErrors[s] = errors - previousServerErrors[s];
      previousServerRequests[s] = requests;
      previousServerErrors[s] = errors;
    }
    return window;
  }
}
