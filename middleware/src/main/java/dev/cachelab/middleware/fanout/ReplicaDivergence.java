package dev.cachelab.middleware.fanout;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts replicated writes that left the replicas different: the write was applied on some of its
 * servers and failed on others (no answer, or an error reply such as redis' {@code -OOM} or
 * memcached's {@code SERVER_ERROR}); reads may then return the new value or the old one depending
 * on the server they go to. With {@code deleteOnFailed}, the worker then deletes the write's keys
 * on the servers that failed (those it can reach), so that a read finds the new value or nothing.
 * Shared by the workers (any thread; lock-free).
 */
public final class ReplicaDivergence {
  private final boolean deleteOnFailed;
  private final AtomicLong divergences = new AtomicLong();
  private final AtomicLong deletes = new AtomicLong();
  private final AtomicLong failedDeletes = new AtomicLong();

  public ReplicaDivergence(boolean deleteOnFailed) {
    this.deleteOnFailed = deleteOnFailed;
  }

  public boolean deleteOnFailed() {
    return deleteOnFailed;
  }

  void diverged() {
    divergences.incrementAndGet();
  }

  void deleted(boolean ok) {
    (ok ? deletes : failedDeletes).incrementAndGet();
  }

  /** Replicated writes applied on some of their servers and failed on others. */
  public long divergences() {
    return divergences.get();
  }

  /** Keys deleted on a server where their write failed. */
  public long deletes() {
    return deletes.get();
  }

  /** Such deletes that failed too (the server was down or did not answer). */
  public long failedDeletes() {
    return failedDeletes.get();
  }
}
