package dev.cachelab.middleware.backend;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Ends backend reads that overrun their deadline by closing the socket (the blocked worker then
 * answers {@code SERVER_ERROR}). Runs on its own daemon thread, waking every {@link
 * #periodNanos(int)}; workers arm deadlines {@code timeout - period} ahead, so a stuck request is
 * answered within the configured timeout.
 */
public final class Watchdog implements Runnable {
  private final List<BackendConnection> connections = new CopyOnWriteArrayList<>();
  private final long periodNanos;
  private volatile boolean running = true;

  public Watchdog(long periodNanos) {
    this.periodNanos = periodNanos;
  }

  /** A worker opened a connection (to a server it had none to). Any thread. */
  public void register(BackendConnection connection) {
    connections.add(connection);
  }

  /** A worker closed a connection for good. Any thread. */
  public void unregister(BackendConnection connection) {
    connections.remove(connection);
  }

  /** How often to check deadlines for a timeout: a twentieth of it, 0.5..20 ms. */
  public static long periodNanos(int backendTimeoutMs) {
    long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(backendTimeoutMs);
    return Math.max(500_000L, Math.min(20_000_000L, timeoutNanos / 20));
  }

  public void stop() {
    running = false;
  }

  @Override
  public void run() {
    while (running) {
      long now = System.nanoTime();
      for (BackendConnection connection : connections) {
        connection.abortIfExpired(now);
      }
      try {
        TimeUnit.NANOSECONDS.sleep(periodNanos);
      } catch (InterruptedException e) {
        return;
      }
    }
  }
}
