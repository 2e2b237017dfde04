package dev.cachelab.middleware;

import dev.cachelab.middleware.backend.ReplyLimit;
import dev.cachelab.middleware.backend.Watchdog;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.fanout.ReplicaDivergence;
import dev.cachelab.middleware.routing.ServerSet;
import dev.cachelab.middleware.stats.StatsRegistry;
import dev.cachelab.middleware.worker.RequestQueue;
import dev.cachelab.middleware.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The worker threads ({@code -t}), each serving requests from the queue with a recorder of its own.
 * Built, started and stopped by the main thread.
 */
final class WorkerThreads {
  private final RequestQueue queue;
  private final List<Thread> threads = new ArrayList<>();

  private WorkerThreads(RequestQueue queue, List<Worker> workers) {
    this.queue = queue;
    for (int w = 0; w < workers.size(); w++) {
      Thread thread = new Thread(workers.get(w), "worker-" + w);
      thread.setDaemon(true);
      threads.add(thread);
    }
  }

  static WorkerThreads build(
      MiddlewareConfig config,
      RequestQueue queue,
      ServerSet servers,
      Watchdog watchdog,
      long watchdogPeriodNanos,
      ReplicaDivergence divergence,
      StatsRegistry stats,
      ReplyLimit replyLimit) {
    List<Worker> workers = new ArrayList<>();
    for (int w = 0; w < config.workers(); w++) {
      workers.add(
          new Worker(
              queue,
              servers::current,
              watchdog,
              divergence,
              stats.newRecorder(),
              watchdogPeriodNanos,
              config.workerBatch(),
              replyLimit));
    }
    return new WorkerThreads(queue, workers);
  }

  void start() {
    for (Thread thread : threads) {
      thread.start();
    }
  }

  /**
   * Ends every worker after the requests queued before, waiting for them until {@code
   * deadlineNanos}.
   */
  void stop(long deadlineNanos) {
    for (int w = 0; w < threads.size(); w++) {
      queue.addPoison(Worker.POISON);
    }
    for (Thread thread : threads) {
      Threads.join(
          thread, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
    }
  }
}
