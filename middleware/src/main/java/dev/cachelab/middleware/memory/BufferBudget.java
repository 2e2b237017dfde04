package dev.cachelab.middleware.memory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The global budget for bytes buffered on behalf of clients: read buffers grown past their base
 * size for large or incomplete requests, and reply bytes a client has not yet taken. A connection
 * that cannot reserve what it needs is closed with an error; the process never runs out of heap for
 * client buffers. Any thread (the net thread reserves read buffers, workers reserve pending
 * replies); lock-free.
 */
public final class BufferBudget {
  private final long limitBytes;
  private final AtomicLong usedBytes = new AtomicLong();
  private final AtomicLong refusals = new AtomicLong();

  public BufferBudget(long limitBytes) {
    this.limitBytes = limitBytes;
  }

  /** Reserves {@code bytes}; false (nothing reserved) if that would pass the limit. */
  public boolean reserve(long bytes) {
    if (bytes <= 0) {
      return true;
    }
    long after = usedBytes.addAndGet(bytes);
    if (after > limitBytes) {
      usedBytes.addAndGet(-bytes);
      refusals.incrementAndGet();
      return false;
    }
    return true;
  }

  /** Gives back bytes reserved earlier. */
  public void release(long bytes) {
    if (bytes > 0) {
      usedBytes.addAndGet(-bytes);
    }
  }

  public long usedBytes() {
    return usedBytes.get();
  }

  public long limitBytes() {
    return limitBytes;
  }

  /** Reservations refused (each closed a connection). */
  public long refusals() {
    return refusals.get();
  }
}
