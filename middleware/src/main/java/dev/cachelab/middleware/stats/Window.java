package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.protocol.OpType;
import org.HdrHistogram.Histogram;

/**
 * The statistics of one window: per metric and operation type (including {@link OpType#ALL}) a
 * histogram of microseconds, the queue lengths seen by arriving requests, counters per operation
 * type and per server. Built by the reporter thread; immutable once built.
 */
public final class Window {
  final int index;
  final long startEpochMs;
  final long durationMs;
  final Histogram[][] histograms = new Histogram[Metric.values().length][OpType.values().length];
  final Histogram queueLength = newHistogram();
  final long[] keysRequested = new long[OpType.values().length];
  final long[] hits = new long[OpType.values().length];
  final long[] errors = new long[OpType.values().length];
  final long[] serverRequests;
  final long[] serverErrors;

  Window(int index, long startEpochMs, long durationMs, int serverCount) {
    this.index = index;
    this.startEpochMs = startEpochMs;
    this.durationMs = durationMs;
    for (Histogram[] perOp : histograms) {
      for (int op = 0; op < perOp.length; op++) {
        perOp[op] = newHistogram();
      }
    }
    serverRequests = new long[serverCount];
    serverErrors = new long[serverCount];
  }

  static Histogram newHistogram() {
    return new Histogram(ThreadRecorder.SIGNIFICANT_DIGITS);
  }

  public int index() {
    return index;
  }

  public long durationMs() {
    return durationMs;
  }

  public Histogram histogram(Metric metric, OpType op) {
    return histograms[metric.ordinal()][op.ordinal()];
  }

  /** Requests completed in the window. */
  public long count(OpType op) {
    return histogram(Metric.RESPONSE_TIME, op).getTotalCount();
  }

  public long keysRequested(OpType op) {
    return keysRequested[op.ordinal()];
  }

  public long hits(OpType op) {
    return hits[op.ordinal()];
  }

  public long errors(OpType op) {
    return errors[op.ordinal()];
  }

  public Histogram queueLength() {
    return queueLength;
  }

  public long serverRequests(int server) {
    return serverRequests[server];
  }

  public long serverErrors(int server) {
    return serverErrors[server];
  }
}
