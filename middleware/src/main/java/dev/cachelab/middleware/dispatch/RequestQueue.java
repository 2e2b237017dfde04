package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.protocol.Request;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The FIFO request queue between the net thread (the producer of new requests) and the workers.
 * Optionally bounded: the net thread checks {@link #hasRoom()} before it decodes a request and
 * stops reading while the queue is full; the first worker to take a request afterwards calls the
 * room listener (which wakes the net thread). Stamps enqueue and dequeue times.
 *
 * <p>Wake-ups: the net thread {@link #stage stages} the requests it decodes in one selector round
 * and {@link #publish publishes} them together at the end of the round, waking one sleeping worker
 * per {@code batch} requests, so a worker woken once takes several requests ({@link #take}) instead
 * of each request costing a wake-up. A worker that leaves requests behind wakes the next sleeper.
 * The length counts staged requests too (the bound and the sampled length include them). Each
 * request is stamped when staged ({@code enqueuedNanos}), when published ({@code publishedNanos},
 * one clock read per round) and when taken ({@code dequeuedNanos}), so its queue time splits into
 * staging and the wait after publishing.
 */
public final class RequestQueue {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition notEmpty = lock.newCondition();
  private final ArrayDeque<Request> queue = new ArrayDeque<>(); // guarded by lock
  private int sleepers; // guarded by lock
  private final ArrayDeque<Request> staged = new ArrayDeque<>(); // net thread only
  private final AtomicInteger length = new AtomicInteger();
  private final int capacity;
  private final int batch;
  private final AtomicBoolean producerWaiting = new AtomicBoolean();
  private volatile Runnable roomListener = () -> {};

  /**
   * A queue holding at most {@code capacity} requests (0 = unbounded), whose workers take up to
   * {@code batch} requests at once.
   */
  public RequestQueue(int capacity, int batch) {
    this.capacity = capacity;
    this.batch = Math.max(1, batch);
  }

  /** Called (by a worker) when room appears after the producer found the queue full. */
  public void onRoom(Runnable listener) {
    this.roomListener = listener;
  }

  /** Net thread: whether one more request fits. If not, arms the room listener. */
  public boolean hasRoom() {
    if (capacity == 0 || length.get() < capacity) {
      return true;
    }
    producerWaiting.set(true);
    // Re-check: a worker may have taken a request between get() and set().
    return length.get() < capacity;
  }

  /**
   * Net thread: stamps a request and holds it until {@link #publish()} (end of the selector round);
   * returns the queue length the request found.
   */
  public int stage(Request request) {
    int lengthBefore = length.getAndIncrement();
    request.enqueuedNanos = System.nanoTime();
    staged.addLast(request);
    return lengthBefore;
  }

  /** Net thread: appends the staged requests and wakes as many workers as they need. */
  public void publish() {
    int n = staged.size();
    if (n == 0) {
      return;
    }
    lock.lock();
    try {
      long now = System.nanoTime();
      Request request;
      while ((request = staged.pollFirst()) != null) {
        request.publishedNanos = now;
        queue.addLast(request);
      }
      for (int woken = 0; woken < sleepers && woken * batch < n; woken++) {
        notEmpty.signal();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Any thread (a worker queueing a connection's next pipelined request): stamps and appends now;
   * returns the queue length the request found.
   */
  public int enqueue(Request request) {
    int lengthBefore = length.getAndIncrement();
    request.enqueuedNanos = System.nanoTime();
    request.publishedNanos = request.enqueuedNanos;
    lock.lock();
    try {
      queue.addLast(request);
      if (sleepers > 0) {
        notEmpty.signal();
      }
    } finally {
      lock.unlock();
    }
    return lengthBefore;
  }

  /**
   * Worker: waits for requests and takes up to {@code into.length} of them (at most the queue's
   * batch), each stamped with its dequeue time; returns how many. A poison pill is returned alone.
   */
  public int take(Request[] into) throws InterruptedException {
    int max = Math.min(into.length, batch);
    int n = 0;
    lock.lockInterruptibly();
    try {
      while (queue.isEmpty()) {
        sleepers++;
        try {
          notEmpty.await();
        } finally {
          sleepers--;
        }
      }
      long now = System.nanoTime();
      while (n < max) {
        Request request = queue.peekFirst();
        if (request == null) {
          break;
        }
        if (request.connection == null) { // a poison pill, which belongs to no connection
          if (n == 0) {
            into[n++] = queue.pollFirst();
          }
          break;
        }
        queue.pollFirst();
        request.dequeuedNanos = now;
        into[n++] = request;
      }
      if (!queue.isEmpty() && sleepers > 0) {
        notEmpty.signal();
      }
    } finally {
      lock.unlock();
    }
    int taken = into[0].connection == null ? 0 : n;
    if (taken > 0) {
      length.addAndGet(-taken);
      if (capacity > 0 && producerWaiting.get() && producerWaiting.compareAndSet(true, false)) {
        roomListener.run();
      }
    }
    return n;
  }

  /** Any thread: a hint for a worker to exit (not stamped or counted). */
  public void addPoison(Request poison) {
    lock.lock();
    try {
      queue.addLast(poison);
      notEmpty.signal();
    } finally {
      lock.unlock();
    }
  }

  /** Requests waiting now, staged ones included (poison pills not counted). Any thread. */
  public int size() {
    return length.get();
  }

  public int capacity() {
    return capacity;
  }
}
