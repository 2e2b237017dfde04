package dev.cachelab.middleware.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.protocol.ReplySink;
import dev.cachelab.middleware.protocol.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The request queue alone, without sockets: order, batches, the bound and its room listener. */
class RequestQueueTest {
  private static final ReplySink SINK = (request, reply) -> System.nanoTime();

  private static Request request() {
    Request r = new Request();
    r.connection = SINK;
    return r;
  }

  @Test
  void stagedRequestsArePublishedInOrderAndTakenInBatches() throws Exception {
    RequestQueue queue = new RequestQueue(0, 3);
    List<Request> sent = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      Request r = request();
      sent.add(r);
      assertThat(queue.stage(r)).isEqualTo(i);
    }
    assertThat(queue.size()).as("staged count").isEqualTo(7);
    queue.publish();
    Request[] into = new Request[8];
    List<Request> taken = new ArrayList<>();
    int[] batches = new int[3];
    for (int b = 0; b < 3; b++) {
      batches[b] = queue.take(into);
      for (int i = 0; i < batches[b]; i++) {
        taken.add(into[i]);
        assertThat(into[i].dequeuedNanos).isGreaterThanOrEqualTo(into[i].enqueuedNanos);
      }
    }
    assertThat(batches).containsExactly(3, 3, 1);
    assertThat(taken).containsExactlyElementsOf(sent);
    assertThat(queue.size()).isZero();
  }

  @Test
  void publishingStampsTheRoundsRequestsOnceAndADirectEnqueueIsPublishedAtOnce() throws Exception {
    RequestQueue queue = new RequestQueue(0, 8);
    Request first = request();
    Request second = request();
    queue.stage(first);
    queue.stage(second);
    long beforePublish = System.nanoTime();
    queue.publish();
    assertThat(first.publishedNanos)
        .as("one clock read for the whole round")
        .isEqualTo(second.publishedNanos)
        .isGreaterThanOrEqualTo(beforePublish)
        .isGreaterThanOrEqualTo(second.enqueuedNanos);
    Request third = request();
    queue.enqueue(third);
    assertThat(third.publishedNanos).as("no staging").isEqualTo(third.enqueuedNanos);
    Request[] into = new Request[8];
    assertThat(queue.take(into)).isEqualTo(3);
    for (int i = 0; i < 3; i++) {
      assertThat(into[i].dequeuedNanos).isGreaterThanOrEqualTo(into[i].publishedNanos);
    }
  }

  @Test
  void enqueuedRequestsFollowPublishedOnes() throws Exception {
    RequestQueue queue = new RequestQueue(0, 8);
    Request first = request();
    Request second = request();
    queue.stage(first);
    queue.publish();
    queue.enqueue(second);
    Request[] into = new Request[8];
    assertThat(queue.take(into)).isEqualTo(2);
    assertThat(into[0]).isSameAs(first);
    assertThat(into[1]).isSameAs(second);
  }

  @Test
  void boundedQueueReportsFullAndCallsTheRoomListenerOnce() throws Exception {
    RequestQueue queue = new RequestQueue(2, 1);
    AtomicInteger roomCalls = new AtomicInteger();
    queue.onRoom(roomCalls::incrementAndGet);
    queue.stage(request());
    assertThat(queue.hasRoom()).isTrue();
    queue.stage(request());
    assertThat(queue.hasRoom()).isFalse();
    queue.publish();
    Request[] into = new Request[1];
    assertThat(queue.take(into)).isEqualTo(1);
    assertThat(roomCalls.get()).isEqualTo(1);
    assertThat(queue.hasRoom()).isTrue();
    assertThat(queue.take(into)).isEqualTo(1);
    assertThat(roomCalls.get()).as("no producer waiting any more").isEqualTo(1);
  }

  /** Several event loops share the workers' queue: room wakes each of them, not only the last. */
  @Test
  void roomWakesEveryProducersListener() throws Exception {
    RequestQueue queue = new RequestQueue(1, 1);
    AtomicInteger firstLoop = new AtomicInteger();
    AtomicInteger secondLoop = new AtomicInteger();
    queue.onRoom(firstLoop::incrementAndGet);
    queue.onRoom(secondLoop::incrementAndGet);
    queue.enqueue(request());
    assertThat(queue.hasRoom()).isFalse();
    assertThat(queue.take(new Request[1])).isEqualTo(1);
    assertThat(firstLoop.get()).isEqualTo(1);
    assertThat(secondLoop.get()).isEqualTo(1);
  }

  @Test
  void poisonIsTakenAloneAndNotCounted() throws Exception {
    RequestQueue queue = new RequestQueue(0, 4);
    Request r = request();
    queue.stage(r);
    queue.publish();
    queue.addPoison(Worker.POISON);
    Request[] into = new Request[4];
    assertThat(queue.take(into)).isEqualTo(1);
    assertThat(into[0]).isSameAs(r);
    assertThat(queue.take(into)).isEqualTo(1);
    assertThat(into[0]).isSameAs(Worker.POISON);
    assertThat(queue.size()).isZero();
  }

  @Test
  void aSleepingWorkerIsWokenByPublish() throws Exception {
    RequestQueue queue = new RequestQueue(0, 1);
    Request[] into = new Request[1];
    Thread worker =
        new Thread(
            () -> {
              try {
                queue.take(into);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    worker.start();
    Request r = request();
    queue.stage(r);
    queue.publish();
    worker.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(worker.isAlive()).isFalse();
    assertThat(into[0]).isSameAs(r);
  }

  /** Starts a worker that takes once into {@code into}; returns when it is parked in take. */
  private static Thread parkedTaker(RequestQueue queue, Request[] into) throws Exception {
    Thread worker =
        new Thread(
            () -> {
              try {
                queue.take(into);
              } catch (InterruptedException e) {
                into[0] = null;
              }
            });
    worker.setDaemon(true);
    worker.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (worker.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(worker.getState()).isEqualTo(Thread.State.WAITING);
    return worker;
  }

  @Test
  void theMostRecentlyParkedWorkerIsWokenFirstAndTheOtherSleepsOn() throws Exception {
    RequestQueue queue = new RequestQueue(0, 1);
    Request[] first = new Request[1];
    Request[] second = new Request[1];
    Thread older = parkedTaker(queue, first);
    Thread newer = parkedTaker(queue, second);
    Request r = request();
    queue.stage(r);
    queue.publish();
    newer.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(newer.isAlive()).isFalse();
    assertThat(second[0]).isSameAs(r);
    Thread.sleep(50);
    assertThat(older.getState()).as("one request wakes one worker").isEqualTo(Thread.State.WAITING);
    Request s = request();
    queue.enqueue(s);
    older.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(first[0]).isSameAs(s);
  }

  @Test
  void anInterruptedSleeperLeavesAndTheNextRequestStillWakesTheOther() throws Exception {
    RequestQueue queue = new RequestQueue(0, 1);
    Request[] first = new Request[1];
    Request[] second = new Request[1];
    Thread older = parkedTaker(queue, first);
    Thread newer = parkedTaker(queue, second);
    newer.interrupt();
    newer.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(newer.isAlive()).isFalse();
    Request r = request();
    queue.stage(r);
    queue.publish();
    older.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(older.isAlive()).isFalse();
    assertThat(first[0]).isSameAs(r);
    assertThat(queue.size()).isZero();
  }

  @Test
  void everyRequestIsTakenOnceByManyWorkersAndPoisonStopsThemAll() throws Exception {
    int workers = 6;
    int requests = 20_000;
    RequestQueue queue = new RequestQueue(0, 4);
    AtomicInteger takenCount = new AtomicInteger();
    java.util.Set<Request> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      Thread t =
          new Thread(
              () -> {
                Request[] into = new Request[4];
                try {
                  while (true) {
                    int n = queue.take(into);
                    if (into[0] == Worker.POISON) {
                      return;
                    }
                    for (int i = 0; i < n; i++) {
                      assertThat(seen.add(into[i])).isTrue();
                      takenCount.incrementAndGet();
                    }
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      t.setDaemon(true);
      t.start();
      threads.add(t);
    }
    for (int i = 0; i < requests; i++) {
      queue.stage(request());
      if (i % 7 == 0) {
        queue.publish();
      }
      if (i % 101 == 0) {
        queue.enqueue(request());
      }
    }
    queue.publish();
    int expected = requests + (requests + 100) / 101;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (takenCount.get() < expected && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(takenCount.get()).isEqualTo(expected);
    for (int w = 0; w < workers; w++) {
      queue.addPoison(Worker.POISON);
    }
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(t.isAlive()).isFalse();
    }
    assertThat(queue.size()).isZero();
  }

  /**
   * Starts a worker that takes once, signals {@code took} and holds its batch (running) until
   * {@code release}, then takes once more into {@code into}.
   */
  private static Thread runningTaker(
      RequestQueue queue,
      Request[] into,
      java.util.concurrent.CountDownLatch took,
      java.util.concurrent.CountDownLatch release) {
    Thread worker =
        new Thread(
            () -> {
              try {
                queue.take(into);
                took.countDown();
                release.await();
                queue.take(into);
              } catch (InterruptedException e) {
                // stopped by the test, waiting for nothing more
              }
            });
    worker.setDaemon(true);
    worker.start();
    return worker;
  }

  /** Two workers running batches; a third parked; returns them as {first, second, parked}. */
  private static Thread[] twoRunningOneParked(
      RequestQueue queue, Request[][] into, java.util.concurrent.CountDownLatch release)
      throws Exception {
    Thread[] threads = new Thread[3];
    for (int w = 0; w < 2; w++) {
      java.util.concurrent.CountDownLatch took = new java.util.concurrent.CountDownLatch(1);
      threads[w] = runningTaker(queue, into[w], took, release);
      queue.stage(request());
      queue.publish();
      assertThat(took.await(30, TimeUnit.SECONDS)).isTrue();
    }
    threads[2] = parkedTaker(queue, into[2]);
    return threads;
  }

  @Test
  void withBatchesRequestsThatRunningWorkersCanTakeWakeNobody() throws Exception {
    RequestQueue queue = new RequestQueue(0, 4, TimeUnit.HOURS.toNanos(1));
    Request[][] into = new Request[3][4];
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Thread[] threads = twoRunningOneParked(queue, into, release);
    List<Request> sent = List.of(request(), request(), request());
    sent.forEach(queue::stage);
    queue.publish();
    assertThat(queue.awaitsWorkers()).as("left to the running workers").isTrue();
    Thread.sleep(50);
    assertThat(threads[2].getState())
        .as("the parked worker sleeps on")
        .isEqualTo(Thread.State.WAITING);
    release.countDown(); // the running workers come back: one takes all three
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (queue.size() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(queue.size()).isZero();
    assertThat(threads[2].getState()).isEqualTo(Thread.State.WAITING);
    for (Thread t : threads) {
      t.interrupt();
      t.join(TimeUnit.SECONDS.toMillis(30));
    }
    List<Request> taken = new ArrayList<>();
    for (int w = 0; w < 2; w++) {
      for (Request r : into[w]) {
        if (r != null && sent.contains(r)) {
          taken.add(r);
        }
      }
    }
    assertThat(taken).containsExactlyInAnyOrderElementsOf(sent);
    assertThat(into[2][0]).as("the parked worker took nothing").isNull();
  }

  @Test
  void withBatchesAStalledRunningWorkerDoesNotCount() throws Exception {
    RequestQueue queue = new RequestQueue(0, 4, 0);
    Request[][] into = new Request[3][4];
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Thread[] threads = twoRunningOneParked(queue, into, release);
    Request r = request();
    queue.stage(r);
    queue.publish();
    threads[2].join(TimeUnit.SECONDS.toMillis(30));
    assertThat(threads[2].isAlive()).as("woken past the running workers").isFalse();
    assertThat(into[2][0]).isSameAs(r);
    release.countDown();
    threads[0].interrupt();
    threads[1].interrupt();
  }
}
