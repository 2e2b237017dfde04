package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.protocol.OpType;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.WriterReaderPhaser;

/**
 * The statistics one thread records: a histogram per metric and operation type (microseconds) and
 * single-writer counters. Exactly one recording thread (a worker, or a net thread for the requests
 * it answers itself); the reporter thread reads intervals and counters. The histograms are double
 * buffered: a request's four times are recorded into the active set inside one critical section of
 * a {@link WriterReaderPhaser} (two atomic operations a request, not two a value), and the reporter
 * swaps the sets ({@link #flipIntervals}) and reads the one it took. No locks and no allocation on
 * the recording path.
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

  private final WriterReaderPhaser phaser = new WriterReaderPhaser();
  // [metric][op], and the queue length at index [0][0] of its own pair; read by the writer inside
  // its critical section, swapped by the reporter under the phaser's reader lock.
  private volatile Histogram[][] active = newSet();
  private volatile Histogram activeQueueLength = newHistogram();
  private Histogram[][] taken = newSet(); // reporter only
  private Histogram takenQueueLength = newHistogram(); // reporter only
  private final AtomicLongArray counters = new AtomicLongArray(OpType.RECORDED * SLOTS);
  private final AtomicLongArray serverRequests;
  private final AtomicLongArray serverErrors;
  private final AtomicLongArray busyNanos = new AtomicLongArray(1);

  public ThreadRecorder(int serverCount) {
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
    long stamp = phaser.writerCriticalSectionEnter();
    try {
      Histogram[][] set = active;
      set[Metric.RESPONSE_TIME.ordinal()][o].recordValue(toMicros(responseNanos));
      set[Metric.QUEUE_TIME.ordinal()][o].recordValue(toMicros(queueNanos));
      set[Metric.SERVICE_TIME.ordinal()][o].recordValue(toMicros(serviceNanos));
      set[Metric.STAGING_TIME.ordinal()][o].recordValue(toMicros(stagingNanos));
    } finally {
      phaser.writerCriticalSectionExit(stamp);
    }
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
    long stamp = phaser.writerCriticalSectionEnter();
    try {
      activeQueueLength.recordValue(length);
    } finally {
      phaser.writerCriticalSectionExit(stamp);
    }
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

  /**
   * Takes the histograms recorded since the last call (read them with {@link #interval} and {@link
   * #queueLengthInterval} until the next call); the writer records into emptied ones from now on.
   */
  void flipIntervals() {
    phaser.readerLock();
    try {
      for (Histogram[] perOp : taken) {
        for (Histogram h : perOp) {
          h.reset();
        }
      }
      takenQueueLength.reset();
      Histogram[][] recorded = active;
      Histogram recordedQueueLength = activeQueueLength;
      active = taken;
      activeQueueLength = takenQueueLength;
      taken = recorded;
      takenQueueLength = recordedQueueLength;
      phaser.flipPhase(); // waits for writers still recording into the taken set
    } finally {
      phaser.readerUnlock();
    }
  }

  /** The interval taken by the last {@link #flipIntervals}. */
  Histogram interval(Metric metric, OpType op) {
    return taken[metric.ordinal()][op.ordinal()];
  }

  Histogram queueLengthInterval() {
    return takenQueueLength;
  }

  private static Histogram[][] newSet() {
    Histogram[][] set = new Histogram[Metric.values().length][OpType.RECORDED];
    for (Histogram[] perOp : set) {
      for (int op = 0; op < perOp.length; op++) {
        perOp[op] = newHistogram();
      }
    }
    return set;
  }

  private static Histogram newHistogram() {
    return new Histogram(SIGNIFICANT_DIGITS); // auto-resizing
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
