package dev.cachelab.loadgen.engine;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Shared state of one run: the start barrier, the deadline, and the first failure. Written by the
 * main thread (start) and by any engine thread (failure); read by all.
 */
public final class RunControl {
  private final CountDownLatch connected;
  private final CountDownLatch started = new CountDownLatch(1);
  private final CountDownLatch finished;
  private final AtomicReference<String> failure = new AtomicReference<>();
  private volatile boolean aborted;
  private volatile long startNanos;
  private volatile long deadlineNanos = Long.MAX_VALUE;

  public RunControl(int threads) {
    this.connected = new CountDownLatch(threads);
    this.finished = new CountDownLatch(threads);
  }

  /** Engine thread: all its clients are connected (or it failed trying). */
  void threadConnected() {
    connected.countDown();
  }

  /** Engine thread: its loop has ended. */
  void threadFinished() {
    finished.countDown();
  }

  /** Main thread: waits until every engine thread has connected its clients or failed. */
  public void awaitConnected() throws InterruptedException {
    connected.await();
  }

  /** Main thread: releases the engine threads; a timed run stops issuing after {@code seconds}. */
  public void start(long startNanos, int seconds) {
    this.startNanos = startNanos;
    if (seconds > 0) {
      this.deadlineNanos = startNanos + TimeUnit.SECONDS.toNanos(seconds);
    }
    started.countDown();
  }

  /** Engine thread: waits for {@link #start}; returns the start time, or -1 if the run aborted. */
  long awaitStart() throws InterruptedException {
    while (!started.await(50, TimeUnit.MILLISECONDS)) {
      if (aborted) {
        return -1;
      }
    }
    return aborted ? -1 : startNanos;
  }

  /** Waits up to {@code nanos} for every engine thread to finish; true if they have. */
  public boolean awaitFinished(long nanos) throws InterruptedException {
    return finished.await(nanos, TimeUnit.NANOSECONDS);
  }

  /** Records the first failure and tells every thread to stop. Any thread. */
  public void fail(String message) {
    failure.compareAndSet(null, message);
    aborted = true;
    started.countDown();
  }

  /** Stops the run without a failure (e.g. SIGINT); what was measured is kept. Any thread. */
  public void interrupt(String reason) {
    fail(reason);
  }

  public boolean aborted() {
    return aborted;
  }

  /** The first failure message, or null. */
  public String failure() {
    return failure.get();
  }

  public long startNanos() {
    return startNanos;
  }

  public long deadlineNanos() {
    return deadlineNanos;
  }
}
