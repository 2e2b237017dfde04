package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.protocol.OpType;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * The statistics one thread records: a {@link SingleWriterRecorder} per metric and operation type
 * (microseconds) and single-writer counters. Exactly one recording thread (a worker, or the net
 * thread for requests it answers itself); the reporter thread reads intervals and counters. No
 * locks and no allocation on the recording path.
 */
public final class ThreadRecorder {
  /** Largest recorded time, microseconds (one hour); larger values are clamped. */
  static final long MAX_MICROS = 3_600_000_000L;

  static final int SIGNIFICANT_DIGITS = 3;

  // Counter slots per op type.
  static final int REQUESTS = 0;
  static final int KEYS_REQUESTED = 1;
  static final int HITS = 2;
  static final int ERRORS = 3; // + ErrorKind.ordinal()
  static final int SLOTS = ERRORS + ErrorKind.COUNT;

  private final SingleWriterRecorder[][] recorders =
      new SingleWriterRecorder[Metric.values().length][OpType.RECORDED];
  private final AtomicLongArray counters = new AtomicLongArray(OpType.RECORDED * SLOTS);
  private final AtomicLongArray serverRequests;
  private final AtomicLongArray serverErrors;
  private final AtomicLongArray busyNanos = new AtomicLongArray(1);
  private final SingleWriterRecorder queueLength = new SingleWriterRecorder(SIGNIFICANT_DIGITS);

  public ThreadRecorder(int serverCount) {
    for (SingleWriterRecorder[] perOp : recorders) {
      for (int op = 0; op < perOp.length; op++) {
        perOp[op] = new SingleWriterRecorder(SIGNIFICANT_DIGITS); // auto-resizing
      }
    }
    serverRequests = new AtomicLongArray(serverCount);
    serverErrors = new AtomicLongArray(serverCount);
  }

  /**
   * Records one completed request; times in nanoseconds ({@code stagingNanos} is the part of {@code
   * queueNanos} before the request was published to the workers).
   */
  public void recordRequest(
      OpType op,
      long responseNanos,
      long queueNanos,
      long stagingNanos,
      long serviceNanos,
      int keysRequested,
      int hits) {
    int o = op.ordinal();
    recorders[Metric.RESPONSE_TIME.ordinal()][o].recordValue(toMicros(responseNanos));
    recorders[Metric.QUEUE_TIME.ordinal()][o].recordValue(toMicros(queueNanos));
    recorders[Metric.SERVICE_TIME.ordinal()][o].recordValue(toMicros(serviceNanos));
    recorders[Metric.STAGING_TIME.ordinal()][o].recordValue(toMicros(stagingNanos));
    increment(o * SLOTS + REQUESTS, 1);
    if (keysRequested > 0) {
      increment(o * SLOTS + KEYS_REQUESTED, keysRequested);
      increment(o * SLOTS + HITS, hits);
    }
  }

  public void recordError(OpType op, ErrorKind kind) {
    increment(op.ordinal() * SLOTS + ERRORS + kind.ordinal(), 1);
  }

  public void recordServerRequest(int server, boolean failed) {
    serverRequests.setRelease(server, serverRequests.getPlain(server) + 1);
    if (failed) {
      serverErrors.setRelease(server, serverErrors.getPlain(server) + 1);
    }
  }

  /** Net thread: the queue length a request found when it was enqueued. */
  public void recordQueueLength(int length) {
    queueLength.recordValue(length);
  }

  public void addBusyNanos(long nanos) {
    busyNanos.setRelease(0, busyNanos.getPlain(0) + nanos);
  }

  private void increment(int slot, long delta) {
    counters.setRelease(slot, counters.getPlain(slot) + delta);
  }

  private static long toMicros(long nanos) {
    long micros = (nanos + 500) / 1000;
    return micros < 0 ? 0 : Math.min(micros, MAX_MICROS);
  }

  // ---- reporter side -------------------------------------------------------------------------

  /** Moves the interval recorded since the last call into {@code target} (cleared first). */
  void takeInterval(Metric metric, OpType op, Histogram target) {
    recorders[metric.ordinal()][op.ordinal()].getIntervalHistogramInto(target);
  }

  void takeQueueLengthInterval(Histogram target) {
    queueLength.getIntervalHistogramInto(target);
  }

  long counter(OpType op, int slot) {
    return counters.getAcquire(op.ordinal() * SLOTS + slot);
  }

  long serverRequests(int server) {
    return serverRequests.getAcquire(server);
  }

  long serverErrors(int server) {
    return serverErrors.getAcquire(server);
  }

  long busyNanos() {
    return busyNanos.getAcquire(0);
  }
}
