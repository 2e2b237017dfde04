package dev.cachelab.middleware.worker;

import dev.cachelab.middleware.net.RequestDispatch;
import dev.cachelab.middleware.protocol.Request;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.CopyOnWriteArrayList;
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
 *
 * <p>With batches ({@code batch > 1}) the workers that are running a batch count too, all but one:
 * a running worker comes back to the queue when its batch is done and takes what waits there as its
 * next batch, so a publish wakes a parked worker only when the waiting requests need more batches
 * than the waking workers and the running ones less one can take (the one is a spare, so that one
 * worker's backend round trip overlaps another's). Without this, every round of the net thread
 * found an idle worker to wake when there were many ({@code -t 8}): twice the wake-ups per request
 * of {@code -t 2} and smaller batches. A worker counts as running for {@link #STALL_NANOS} after
 * its take at most (one stuck on a slow backend stops counting), and while requests wait with
 * workers parked the net thread re-checks at least every millisecond ({@link #awaitsWorkers}).
 * Without batches every request wakes a worker of its own as before (the ASL worker's queueing
 * model).
 *
 * <p>Chains: an entry may be the first of a chain of one connection's requests ({@link
 * Request#chainNext}, {@link Request#chainLength} of them, at most the batch), which a worker takes
 * whole, in order; lengths and batches count the requests.
 */
public final class RequestQueue implements RequestDispatch {
  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<Request> queue = new ArrayDeque<>(); // guarded by lock
  private int queuedRequests; // guarded by lock: the requests of the entries in queue
  // Parked workers, the most recent first; guarded by lock.
  private final ArrayDeque<Waiter> parked = new ArrayDeque<>();
  private int waking; // guarded by lock: workers unparked and not yet back under the lock

  /** How long after its take a running worker still counts towards the batches (batch > 1). */
  static final long STALL_NANOS = 1_000_000L;

  // Every worker that has taken, with its running state; guarded by lock.
  private final ArrayList<Waiter> workers = new ArrayList<>();
  private int running; // guarded by lock: workers between a take and their next take
  private boolean
      recheck; // net thread only: requests waited for running workers at the last publish
  private final ThreadLocal<Waiter> waiters = ThreadLocal.withInitial(Waiter::new);
  private final ArrayDeque<Request> staged = new ArrayDeque<>(); // net thread only
  private final AtomicInteger length = new AtomicInteger();
  private final int capacity;
  private final int batch;
  private final long stallNanos;
  private final AtomicBoolean producerWaiting = new AtomicBoolean();
  // Every producer's listener (one net thread, or each event loop): all are woken, since any of
  // them may have paused a connection for want of room.
  private final CopyOnWriteArrayList<Runnable> roomListeners = new CopyOnWriteArrayList<>();

  /** A parked worker: set {@code signalled} (under the lock), then unpark its thread. */
  private static final class Waiter {
    final Thread thread = Thread.currentThread();
    volatile boolean signalled;
    Waiter next; // guarded by lock: the list of waiters to unpark after unlocking
    boolean registered; // guarded by lock: in {@code workers}
    boolean running; // guarded by lock: took requests and not yet back in take
    long takenNanos; // guarded by lock: when it took them
  }

  /**
   * A queue holding at most {@code capacity} requests (0 = unbounded), whose workers take up to
   * {@code batch} requests at once.
   */
  public RequestQueue(int capacity, int batch) {
    this(capacity, batch, STALL_NANOS);
  }

  /** As above, with running workers counting for {@code stallNanos} after their take (tests). */
  RequestQueue(int capacity, int batch, long stallNanos) {
    this.capacity = capacity;
    this.batch = Math.max(1, batch);
    this.stallNanos = stallNanos;
  }

  /** Called (by a worker) when room appears after a producer found the queue full. */
  @Override
  public void onRoom(Runnable listener) {
    roomListeners.add(listener);
  }

  /** Net thread: whether one more request fits. If not, arms the room listener. */
  @Override
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
  @Override
  public int stage(Request request) {
    int lengthBefore = length.getAndIncrement();
    request.enqueuedNanos = System.nanoTime();
    staged.addLast(request);
    return lengthBefore;
  }

  /**
   * Net thread: stamps a request that joined the chain of a request staged in this round (it is
   * published with it); returns the queue length the request found.
   */
  @Override
  public int stageJoined(Request request) {
    int lengthBefore = length.getAndIncrement();
    request.enqueuedNanos = System.nanoTime();
    return lengthBefore;
  }

  /**
   * Net thread: appends the staged requests and wakes as many workers as they need (with nothing
   * staged, re-checks requests that were left to running workers at the last publish).
   */
  @Override
  public void publish() {
    if (staged.isEmpty() && !recheck) {
      return;
    }
    Waiter toWake;
    lock.lock();
    try {
      long now = System.nanoTime();
      Request request;
      while ((request = staged.pollFirst()) != null) {
        for (Request r = request; r != null; r = r.chainNext) {
          r.publishedNanos = now;
        }
        queue.addLast(request);
        queuedRequests += request.chainLength;
      }
      toWake = signalNeeded(now);
      recheck = batch > 1 && !queue.isEmpty() && !parked.isEmpty();
    } finally {
      lock.unlock();
    }
    unpark(toWake);
  }

  /**
   * Net thread: whether requests wait for running workers while others are parked (then it should
   * {@link #publish} again within a millisecond even without new requests).
   */
  @Override
  public boolean awaitsWorkers() {
    return recheck;
  }

  /**
   * Under the lock: signals parked workers until the woken ones (with those already waking and,
   * with batches, the running ones less one) make one per {@code batch} queued requests; returns
   * them as a list to {@link #unpark} after unlocking.
   */
  private Waiter signalNeeded(long now) {
    int needed = (queuedRequests + batch - 1) / batch - waking;
    if (needed > 0 && batch > 1 && running > 1 && !parked.isEmpty()) {
      needed -= Math.max(0, runningRecently(now) - 1);
    }
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

  /** Under the lock: the running workers that took their batch less than stallNanos ago. */
  private int runningRecently(long now) {
    int count = 0;
    for (int i = 0; i < workers.size(); i++) {
      Waiter w = workers.get(i);
      if (w.running && now - w.takenNanos < stallNanos) {
        count++;
      }
    }
    return count;
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
   * Any thread (a worker queueing a connection's next pipelined requests, a chain): stamps and
   * appends now; returns the queue length the request found.
   */
  @Override
  public int enqueue(Request request) {
    int lengthBefore = length.getAndAdd(request.chainLength);
    long now = System.nanoTime();
    for (Request r = request; r != null; r = r.chainNext) {
      r.enqueuedNanos = now;
      r.publishedNanos = now;
    }
    Waiter toWake;
    lock.lock();
    try {
      queue.addLast(request);
      queuedRequests += request.chainLength;
      toWake = signalNeeded(now);
    } finally {
      lock.unlock();
    }
    unpark(toWake);
    return lengthBefore;
  }

  /**
   * Worker: waits for requests and takes up to {@code into.length} of them (at most the queue's
   * batch; a chain whole, and only if it fits, unless it is the first), each stamped with its
   * dequeue time; returns how many. A poison pill is returned alone.
   */
  public int take(Request[] into) throws InterruptedException {
    int max = Math.min(into.length, batch);
    int n = 0;
    Waiter toWake;
    Waiter self = waiters.get();
    lock.lockInterruptibly();
    try {
      if (self.running) {
        self.running = false;
        running--;
      } else if (!self.registered) {
        self.registered = true;
        workers.add(self);
      }
      while (queue.isEmpty()) {
        await(self);
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
            queuedRequests--;
          }
          break;
        }
        int size = request.chainLength;
        if (n > 0 && n + size > max) {
          break;
        }
        queue.pollFirst();
        queuedRequests -= size;
        Request r = request;
        while (r != null) {
          Request next = r.chainNext;
          r.chainNext = null;
          r.dequeuedNanos = now;
          into[n++] = r;
          r = next;
        }
      }
      if (into[0].connection != null) {
        self.running = true;
        self.takenNanos = now;
        running++;
      }
      toWake = queue.isEmpty() ? null : signalNeeded(now);
    } finally {
      lock.unlock();
    }
    unpark(toWake);
    int taken = into[0].connection == null ? 0 : n;
    if (taken > 0) {
      length.addAndGet(-taken);
      if (capacity > 0 && producerWaiting.get() && producerWaiting.compareAndSet(true, false)) {
        roomListeners.forEach(Runnable::run);
      }
    }
    return n;
  }

  /**
   * Under the lock, with the queue empty: parks this worker (lock released) until it is signalled
   * or interrupted; returns with the lock held again.
   */
  private void await(Waiter self) throws InterruptedException {
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
      Waiter toWake = self.signalled ? signalNeeded(System.nanoTime()) : null; // pass it on
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
      queuedRequests++;
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
