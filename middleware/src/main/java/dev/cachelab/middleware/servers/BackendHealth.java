package dev.cachelab.middleware.servers;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The health of one server, shared by every worker's connection to it (any thread; lock-free).
 *
 * <p>Ejection (twemproxy {@code auto_eject_hosts} with {@code server_failure_limit} and {@code
 * server_retry_timeout}; mcrouter's TKO after {@code failures_until_tko} failures): {@code
 * failureLimit} consecutive failures (timeouts, refused or broken connections; not error replies)
 * take the server out of rotation for {@code retryIntervalNanos}. Requests for it then fail at once
 * (or go to another replica) instead of waiting out the timeout, and requests already waiting on it
 * are ended (see {@code Watchdog}). After the interval the {@code Prober} probes it on a connection
 * of its own ({@code version}, as mcrouter probes a TKO server before it returns; no client request
 * waits on a probe); it is back in rotation only if the probe succeeds, else ejected for another
 * interval. A read cut short at its hedge delay counts as a failure only if the server answered
 * nothing since that read was sent (stopped, not slow).
 *
 * <p>Waiters: once the server has failed (and until its next complete reply), at most {@code
 * maxWaiters} workers may start waiting on it at a time, so a server that hangs costs at most that
 * many more workers while it collects the failures that eject it; a worker that finds the bound
 * reached answers as if the server were down. A healthy server has no bound and no count (a
 * replicated write holds every server at once, a burst must not be refused, and the request path of
 * a healthy server stays free of shared writes).
 */
public final class BackendHealth {
  private final String name;
  private final int failureLimit;
  private volatile long retryIntervalNanos; // changed by a reload of the servers file
  private final int maxWaiters;
  private final AtomicInteger consecutiveFailures = new AtomicInteger();
  private final AtomicInteger waiters = new AtomicInteger();
  private final AtomicBoolean probing = new AtomicBoolean();
  private final AtomicLong ejections = new AtomicLong();
  private final AtomicLong returns = new AtomicLong();
  private final AtomicLong busyRefusals = new AtomicLong();
  private final AtomicLong hedges = new AtomicLong();
  private final AtomicLong failedProbes = new AtomicLong();
  private volatile boolean ejected;
  // The clients whose timeouts were counted since the server last answered (see timedOut).
  private final int[] timedOutClients = new int[64];
  private volatile int timedOutClientCount;
  private volatile long retryAtNanos;
  private volatile long lastReplyNanos = System.nanoTime();
  private static final long REPLY_STAMP_NANOS = 1_000_000L;

  /**
   * @param failureLimit consecutive failures that eject the server; 0 = never eject
   * @param retryIntervalNanos how long an ejected server stays out before it is probed
   * @param maxWaiters workers that may wait on the server at once
   */
  public BackendHealth(String name, int failureLimit, long retryIntervalNanos, int maxWaiters) {
    this.name = name;
    this.failureLimit = failureLimit;
    this.retryIntervalNanos = retryIntervalNanos;
    this.maxWaiters = Math.max(1, maxWaiters);
  }

  /** Any thread (the reloading one): how long an ejected server stays out from now on. */
  public void retryIntervalNanos(long nanos) {
    retryIntervalNanos = nanos;
  }

  /** How long an ejected server stays out before it is probed. */
  public long retryIntervalNanos() {
    return retryIntervalNanos;
  }

  /** The server's {@code host:port}. */
  public String name() {
    return name;
  }

  /** Whether requests may be sent to the server (in rotation). */
  public boolean inRotation() {
    return !ejected;
  }

  /**
   * Whether the caller should probe the ejected server now: its retry interval has passed and no
   * other worker is probing. The caller must then call {@link #probeSucceeded} or {@link
   * #probeFailed}.
   */
  public boolean claimProbe(long nowNanos) {
    return ejected && nowNanos - retryAtNanos >= 0 && probing.compareAndSet(false, true);
  }

  public void probeSucceeded() {
    consecutiveFailures.set(0);
    synchronized (timedOutClients) {
      timedOutClientCount = 0;
    }
    ejected = false;
    probing.set(false);
    returns.incrementAndGet();
    System.err.println(
        "cachelab middleware: backend " + name + " answered a probe, back in rotation");
  }

  public void probeFailed(long nowNanos) {
    failedProbes.incrementAndGet();
    retryAtNanos = nowNanos + retryIntervalNanos;
    probing.set(false);
  }

  /** Whether the server has failed since its last complete reply (waiters are then counted). */
  public boolean suspect() {
    return consecutiveFailures.get() > 0;
  }

  /**
   * Takes a waiter slot on a {@link #suspect} server; false if {@code maxWaiters} workers already
   * wait on it.
   */
  public boolean tryEnter() {
    if (waiters.incrementAndGet() > maxWaiters) {
      waiters.decrementAndGet();
      busyRefusals.incrementAndGet();
      return false;
    }
    return true;
  }

  /** Gives a waiter slot back. */
  public void exit() {
    waiters.decrementAndGet();
  }

  /** A complete reply came back at {@code nowNanos}. */
  public void succeeded(long nowNanos) {
    if (consecutiveFailures.get() != 0) {
      consecutiveFailures.set(0);
    }
    if (timedOutClientCount != 0) {
      synchronized (timedOutClients) {
        timedOutClientCount = 0;
      }
    }
    // At most one shared write a millisecond on the request path of a busy server.
    if (nowNanos - lastReplyNanos > REPLY_STAMP_NANOS) {
      lastReplyNanos = nowNanos;
    }
  }

  /**
   * Whether the server completed a reply (to any worker) after {@code sinceNanos}: a request cut
   * short then met a slow server, not a stopped one. Within the stamp's granularity (1 ms).
   */
  public boolean answeredSince(long sinceNanos) {
    return lastReplyNanos - sinceNanos > 0;
  }

  /** A read was cut short at its hedge delay and retried on another server. */
  public void hedged() {
    hedges.incrementAndGet();
  }

  /** Reads cut short at their hedge delay (each retried on another server). */
  public long hedges() {
    return hedges.get();
  }

  /** Probes that found the ejected server still not answering. */
  public long failedProbes() {
    return failedProbes.get();
  }

  /**
   * A request of client connection {@code client} (an identity hash) timed out: counted as a
   * failure only for the first timeout of each client since the server last answered, so that one
   * client's slow commands ({@code SRANDMEMBER s -10000000}) count once and ejection takes
   * connection failures or several clients' timeouts. Any thread; rare (a lock).
   */
  public void timedOut(long nowNanos, int client) {
    if (failureLimit == 0 || ejected) {
      return;
    }
    synchronized (timedOutClients) {
      int known = Math.min(timedOutClientCount, timedOutClients.length);
      for (int i = 0; i < known; i++) {
        if (timedOutClients[i] == client) {
          return;
        }
      }
      if (timedOutClientCount < timedOutClients.length) {
        timedOutClients[timedOutClientCount] = client;
      }
      timedOutClientCount++;
    }
    failed(nowNanos);
  }

  /** A timeout, a refused or broken connection: may eject the server. */
  public void failed(long nowNanos) {
    if (failureLimit == 0 || ejected) {
      return;
    }
    if (consecutiveFailures.incrementAndGet() >= failureLimit) {
      synchronized (this) {
        if (!ejected) {
          retryAtNanos = nowNanos + retryIntervalNanos;
          ejected = true;
          ejections.incrementAndGet();
          System.err.println(
              "cachelab middleware: backend "
                  + name
                  + " ejected after "
                  + failureLimit
                  + " consecutive failures");
        }
      }
    }
  }

  public long ejections() {
    return ejections.get();
  }

  public long returns() {
    return returns.get();
  }

  /** Requests answered as unavailable because {@code maxWaiters} workers were waiting. */
  public long busyRefusals() {
    return busyRefusals.get();
  }

  public boolean ejected() {
    return ejected;
  }
}
