package dev.cachelab.middleware.config;

import java.util.concurrent.TimeUnit;

/**
 * The timeouts a servers file may change at run time: how long a worker waits for a server's reply
 * ({@code --backend-timeout-ms}) and how long an ejected server stays out before it is probed
 * ({@code --eject-retry-ms}). Immutable; any thread.
 */
public record ServerTimeouts(int backendTimeoutMs, int ejectRetryMs) {
  /** The flags' values. */
  public static ServerTimeouts of(MiddlewareConfig config) {
    return new ServerTimeouts(config.backendTimeoutMs(), config.ejectRetryMs());
  }

  public long backendTimeoutNanos() {
    return TimeUnit.MILLISECONDS.toNanos(backendTimeoutMs);
  }

  public long ejectRetryNanos() {
    return TimeUnit.MILLISECONDS.toNanos(ejectRetryMs);
  }
}
