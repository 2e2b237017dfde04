package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.protocol.Request;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The FIFO request queue between the net thread (the producer of new requests) and the workers.
 * Optionally bounded: the net thread checks {@link #hasRoom()} before it decodes a request and
 * stops reading while the queue is full; the first worker to take a request afterwards calls the
 * room listener (which wakes the net thread). Stamps enqueue and dequeue times.
 */
public final class RequestQueue {
  private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();
  private final int capacity;
  private final AtomicBoolean producerWaiting = new AtomicBoolean();
  private volatile Runnable roomListener = () -> {};

  /** A queue holding at most {@code capacity} requests; 0 = unbounded. */
  public RequestQueue(int capacity) {
    this.capacity = capacity;
  }

  /** Called (by a worker) when room appears after the producer found the queue full. */
  public void onRoom(Runnable listener) {
    this.roomListener = listener;
  }

  /** Net thread: whether one more request fits. If not, arms the room listener. */
  public boolean hasRoom() {
    if (capacity == 0 || queue.size() < capacity) {
      return true;
    }
    producerWaiting.set(true);
    // Re-check: a worker may have taken a request between size() and set().
    return queue.size() < capacity;
  }

  /**
   * Net thread (or a worker queueing a connection's next pipelined request): stamps and appends;
   * returns the queue length the request found.
   */
  public int enqueue(Request request) {
    int lengthBefore = queue.size();
    request.enqueuedNanos = System.nanoTime();
    request.queueLengthAtEnqueue = lengthBefore;
    queue.add(request);
    return lengthBefore;
  }

  /** Worker: waits for the next request and stamps its dequeue time. */
  public Request take() throws InterruptedException {
    Request request = queue.take();
    request.dequeuedNanos = System.nanoTime();
    if (capacity > 0 && producerWaiting.get() && producerWaiting.compareAndSet(true, false)) {
      roomListener.run();
    }
    return request;
  }

  /** Any thread: a hint for a worker to exit (not stamped or counted). */
  public void addPoison(Request poison) {
    queue.add(poison);
  }

  public int size() {
    return queue.size();
  }

  public int capacity() {
    return capacity;
  }
}
