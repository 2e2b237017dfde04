package dev.cachelab.middleware.backend;

import dev.cachelab.middleware.memory.BufferBudget;

/**
 * How much heap one server reply may take while it is read: at most {@link #maxReplyBytes()}, and a
 * buffer grown past the size a connection keeps is reserved from the clients' {@link BufferBudget}
 * while it holds the reply. A reply past either is not read on: its client gets {@link
 * ReplyTooLargeException}'s error and the server connection is closed. Immutable; any thread (the
 * budget is lock-free).
 */
public final class ReplyLimit {
  /** No limit beyond the largest array (tests, tools). */
  public static final ReplyLimit NONE = new ReplyLimit(null, Integer.MAX_VALUE - 64);

  private final BufferBudget budget;
  private final int maxReplyBytes;

  /**
   * @param budget the clients' budget the growth is reserved from, or null for none
   * @param maxReplyBytes the largest reply read
   */
  public ReplyLimit(BufferBudget budget, int maxReplyBytes) {
    this.budget = budget;
    this.maxReplyBytes = maxReplyBytes;
  }

  /**
   * The limit of a middleware: a quarter of the buffer budget, but at least two of the largest
   * values plus 64 KiB (a get of one value always fits).
   */
  public static ReplyLimit of(BufferBudget budget, int maxValueBytes) {
    long floor = 2L * maxValueBytes + 64 * 1024;
    long max = Math.min(Integer.MAX_VALUE - 64, Math.max(floor, budget.limitBytes() / 4));
    return new ReplyLimit(budget, (int) max);
  }

  public int maxReplyBytes() {
    return maxReplyBytes;
  }

  /** Reserves {@code bytes} of the budget; false (nothing reserved) if it has no room. */
  public boolean reserve(long bytes) {
    return budget == null || budget.reserve(bytes);
  }

  public void release(long bytes) {
    if (budget != null) {
      budget.release(bytes);
    }
  }
}
