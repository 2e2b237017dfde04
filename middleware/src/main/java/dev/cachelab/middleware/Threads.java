package dev.cachelab.middleware;

/** Waiting for threads without letting an interrupt go unnoticed. Any thread. */
final class Threads {
  private Threads() {}

  /** Waits up to {@code millis} for {@code thread} (nothing if null); an interrupt is kept. */
  static void join(Thread thread, long millis) {
    if (thread == null) {
      return;
    }
    try {
      thread.join(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sleeps {@code millis}; an interrupt ends it early and is kept. */
  static void sleepMillis(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
