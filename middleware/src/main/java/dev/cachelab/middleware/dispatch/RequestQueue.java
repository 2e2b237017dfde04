package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.protocol.Request;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The FIFO request queue between the net thread (the producer of new requests) and the workers.
 * Optionally bounded: the net thread checks {@link #hasRoom()} before it decodes a request and
 * stops reading while the queue is full; the first worker to take a request afterwards calls the
 * room listener (which wakes the net thread). Stamps enqueue and dequeue times.
 *
 * <p>Wake-ups: the net thread {@link #stage stages} the requests it decodes in one selector round
 * and {@link #publish publishes} them together at the end of the round. Requests waiting in the
 * queue need one worker per {@code batch} of them; workers already woken and not yet back at the
 * queue count towards that, so a second publish before a woken worker has run wakes nobody more (on
 * a crowded CPU a woken worker may wait a while for it, and each extra wake-up would cost a system
 * call, a context switch and a smaller batch). The most recently parked worker is woken first (its
 * stack and caches are warm; the others stay asleep). A worker that leaves requests behind wakes
 * more by the same rule. Parking and waking are done outside the lock, so a woken worker does not
 * block on the lock its waker still holds. The length counts staged requests too (the bound and the
 * sampled length include them). Each request is stamped when staged ({@code enqueuedNanos}), when
 * published ({@code publishedNanos}, one clock read per round) and when taken ({@code
 * dequeuedNanos}), so its queue time splits into staging and the wait after publishing.
 */
public final class RequestQueue {
  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<Request> queue = new ArrayDeque<>(); // guarded by lock
  // Parked workers, the most recent first; guarded by lock.
  private final ArrayDeque<Waiter> parked = new ArrayDeque<>();
  private int waking; // guarded by lock: workers unparked and not yet back under the lock
  private final ThreadLocal<Waiter> waiters = ThreadLocal.withInitial(Waiter::new);
  private final ArrayDeque<Request> staged = new ArrayDeque<>(); // net thread only
  private final AtomicInteger length = new AtomicInteger();
  private final int capacity;
  private final int batch;
  private final AtomicBoolean producerWaiting = new AtomicBoolean();
  private volatile Runnable roomListener = () -> {};

  /** A parked worker: set {@code signalled} (under the lock), then unpark its thread. */
  private static final class Waiter {
    final Thread thread = Thread.currentThread();
    volatile boolean signalled;
    Waiter next; // guarded by lock: the list of waiters to unpark after unlocking
  }

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
    if (staged.isEmpty()) {
      return;
    }
    Waiter toWake;
    lock.lock();
    try {
      long now = System.nanoTime();
      Request request;
      while ((request = staged.pollFirst()) != null) {
        request.publishedNanos = now;
        queue.addLast(request);
      }
      toWake = signalNeeded();
    } finally {
      lock.unlock();
    }
    unpark(toWake);
  }

  /**
   * Under the lock: signals parked workers until the woken ones (with those already waking) make
   * one per {@code batch} queued requests; returns them as a list to {@link #unpark} after
   * unlocking.
   */
  private Waiter signalNeeded() {
    int needed = (queue.size() + batch - 1) / batch - waking;
    Waiter list = null;
    while (needed > 0 && !parked.isEmpty()) {
      list = signalNext(list);
      needed--;
    }
    return list;
  }

  /**
   * Under the lock, with a worker parked: signals the most recently parked one and returns it at
   * the head of {@code list} (the waiters to {@link #unpark} after unlocking).
   */
  private Waiter signalNext(Waiter list) {
    Waiter w = parked.pollFirst();
    w.signalled = true;
    w.next = list;
    waking++;
    return w;
  }

  private static void unpark(Waiter list) {
    while (list != null) {
      Waiter next = list.next;
      list.next = null;
      LockSupport.unpark(list.thread);
      list = next;
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
    Waiter toWake;
    lock.lock();
    try {
      queue.addLast(request);
      toWake = signalNeeded();
    } finally {
      lock.unlock();
    }
    unpark(toWake);
    return lengthBefore;
  }

  /**
   * Worker: waits for requests and takes up to {@code into.length} of them (at most the queue's
   * batch), each stamped with its dequeue time; returns how many. A poison pill is returned alone.
   */
  public int take(Request[] into) throws InterruptedException {
    int max = Math.min(into.length, batch);
    int n = 0;
    Waiter toWake;
    lock.lockInterruptibly();
    try {
      while (queue.isEmpty()) {
        await();
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
      toWake = queue.isEmpty() ? null : signalNeeded();
    } finally {
      lock.unlock();
    }
    unpark(toWake);
    int taken = into[0].connection == null ? 0 : n;
    if (taken > 0) {
      length.addAndGet(-taken);
      if (capacity > 0 && producerWaiting.get() && producerWaiting.compareAndSet(true, false)) {
        roomListener.run();
      }
    }
    return n;
  }

  /**
   * Under the lock, with the queue empty: parks this worker (lock released) until it is signalled
   * or interrupted; returns with the lock held again.
   */
  private void await() throws InterruptedException {
    Waiter self = waiters.get();
    self.signalled = false;
    parked.addFirst(self);
    lock.unlock();
    boolean interrupted = false;
    while (!self.signalled && !(interrupted = Thread.interrupted())) {
      LockSupport.park(this);
    }
    lock.lock();
    if (self.signalled) {
      waking--;
    } else {
      parked.remove(self);
    }
    if (interrupted) {
      Waiter toWake = self.signalled ? signalNeeded() : null; // pass the wake-up on
      lock.unlock();
      unpark(toWake);
      lock.lock(); // the caller's finally unlocks
      throw new InterruptedException();
    }
  }

  /** Any thread: a hint for a worker to exit (not stamped or counted). */
  public void addPoison(Request poison) {
    Waiter toWake = null;
    lock.lock();
    try {
      queue.addLast(poison);
      if (!parked.isEmpty()) {
        toWake = signalNext(null);
      }
    } finally {
      lock.unlock();
    }
    unpark(toWake);
  }

  /** Requests waiting now, staged ones included (poison pills not counted). Any thread. */
  public int size() {
    return length.get();
  }

  public int capacity() {
    return capacity;
  }
}
