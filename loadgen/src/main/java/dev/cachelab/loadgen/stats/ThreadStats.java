package dev.cachelab.loadgen.stats;

import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Measurements of one engine thread. The engine thread is the only writer: it records latencies
 * (microseconds) into one {@link SingleWriterRecorder} per {@link OpType} and bumps counters with
 * release stores (no locks, no read-modify-write atomics). The sampler thread reads interval
 * histograms and counters once per second.
 */
public final class ThreadStats {
  private final SingleWriterRecorder[] recorders = new SingleWriterRecorder[OpType.values().length];
  private final Histogram[] recycled = new Histogram[OpType.values().length];
  private final AtomicLong[] txBytes = counters();
  private final AtomicLong[] rxBytes = counters();
  private final AtomicLong[] errors = counters();
  private final AtomicLong hits = new AtomicLong();
  private final AtomicLong misses = new AtomicLong();
  private final AtomicLong lastReplyNanos = new AtomicLong();
  private final KeyCounts keyCounts;

  /**
   * @param keyCounts where this thread counts the keys it requests
   */
  public ThreadStats(KeyCounts keyCounts) {
    this.keyCounts = keyCounts;
    for (int i = 0; i < recorders.length; i++) {
      recorders[i] = new SingleWriterRecorder(3);
    }
  }

  private static AtomicLong[] counters() {
    AtomicLong[] out = new AtomicLong[OpType.values().length];
    for (int i = 0; i < out.length; i++) {
      out[i] = new AtomicLong();
    }
    return out;
  }

  private static void add(AtomicLong counter, long delta) {
    counter.lazySet(counter.get() + delta);
  }

  /** Engine thread: a reply arrived {@code latencyNanos} after its request was (to be) sent. */
  public void recordReply(OpType op, long latencyNanos, long replyBytes, long nowNanos) {
    long micros = Math.max(1, (latencyNanos + 500) / 1000);
    recorders[op.ordinal()].recordValue(micros);
    add(rxBytes[op.ordinal()], replyBytes);
    lastReplyNanos.lazySet(nowNanos);
  }

  /** Engine thread: a GET reply returned {@code hitCount} of {@code keys} keys. */
  public void recordGetKeys(int keys, int hitCount) {
    add(hits, hitCount);
    add(misses, keys - hitCount);
  }

  /** Engine thread: a request names {@code key}. */
  public void recordKey(long key) {
    keyCounts.record(key);
  }

  /** The key counts; read only after the engine thread has ended. */
  public KeyCounts keyCounts() {
    return keyCounts;
  }

  /** Engine thread: the server answered with an error reply. */
  public void recordErrorReply(OpType op) {
    add(errors[op.ordinal()], 1);
  }

  /** Engine thread: {@code bytes} of requests of type {@code op} were encoded for sending. */
  public void recordSent(OpType op, long bytes) {
    add(txBytes[op.ordinal()], bytes);
  }

  /**
   * Sampler thread: latencies recorded since the previous call, added into {@code into}. The
   * interval histogram is recycled (single sampler thread only).
   */
  public void drainInterval(OpType op, Histogram into) {
    int i = op.ordinal();
    Histogram interval = recorders[i].getIntervalHistogram(recycled[i]);
    into.add(interval);
    recycled[i] = interval;
  }

  public long txBytes(OpType op) {
    return txBytes[op.ordinal()].get();
  }

  public long rxBytes(OpType op) {
    return rxBytes[op.ordinal()].get();
  }

  public long errors(OpType op) {
    return errors[op.ordinal()].get();
  }

  public long hits() {
    return hits.get();
  }

  public long misses() {
    return misses.get();
  }

  /** {@link System#nanoTime()} of the last reply, 0 if none. */
  public long lastReplyNanos() {
    return lastReplyNanos.get();
  }
}
