package dev.cachelab.middleware;

import dev.cachelab.middleware.backend.ReplyLimit;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.loop.EventLoopDispatch;
import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.net.NetThread;
import dev.cachelab.middleware.net.RequestDispatch;
import dev.cachelab.middleware.protocol.RequestDecoder;
import dev.cachelab.middleware.routing.ServerSet;
import dev.cachelab.middleware.stats.StatsRegistry;
import dev.cachelab.middleware.stats.ThreadRecorder;
import dev.cachelab.middleware.worker.RequestQueue;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The net threads: one that accepts and hands requests to the queue, or several event loops that
 * share the accepts and serve requests themselves. Built, started and stopped by the main thread;
 * their counters are summed for the statistics threads.
 */
final class NetThreads {
  private final List<NetThread> nets;
  private final List<Thread> threads = new ArrayList<>();

  private NetThreads(List<NetThread> nets) {
    this.nets = List.copyOf(nets);
    if (nets.size() > 1) {
      accepting().shareAccepts(this.nets);
    }
  }

  /**
   * One net thread, or {@code --event-loops} of them, each with a recorder of its own; the first
   * listens on the configured address.
   */
  static NetThreads build(
      MiddlewareConfig config,
      RequestQueue queue,
      ServerSet servers,
      StatsRegistry stats,
      Supplier<RequestDecoder> decoders,
      Supplier<byte[]> statsReply,
      BufferBudget budget,
      ReplyLimit replyLimit)
      throws IOException {
    InetSocketAddress listen = new InetSocketAddress(config.listenAddress(), config.port());
    long idleTimeoutNanos = TimeUnit.SECONDS.toNanos(config.idleTimeoutSeconds());
    List<NetThread> nets = new ArrayList<>();
    int loops = Math.max(1, config.eventLoops());
    for (int i = 0; i < loops; i++) {
      ThreadRecorder recorder = stats.newRecorder();
      RequestDispatch dispatch =
          config.eventLoops() == 0
              ? queue
              : new EventLoopDispatch(queue, servers::current, recorder, replyLimit);
      try {
        nets.add(
            new NetThread(
                i == 0 ? listen : null,
                dispatch,
                servers::currentRoutes,
                recorder,
                statsReply,
                decoders,
                budget,
                idleTimeoutNanos,
                config.workerBatch()));
      } catch (BindException e) {
        throw new ListenFailure("listen", listen, "-l, -p", e);
      }
    }
    return new NetThreads(nets);
  }

  /** The net thread that accepts clients (the first event loop when there are several). */
  NetThread accepting() {
    return nets.get(0);
  }

  /** {@code counter} summed over the net threads. */
  long sum(ToLongFunction<NetThread> counter) {
    long total = 0;
    for (NetThread thread : nets) {
      total += counter.applyAsLong(thread);
    }
    return total;
  }

  void start() {
    for (int i = 0; i < nets.size(); i++) {
      Thread thread = new Thread(nets.get(i), nets.size() == 1 ? "net" : "event-loop-" + i);
      thread.setDaemon(true);
      threads.add(thread);
      thread.start();
    }
  }

  /** Stops every net thread and waits up to {@code joinMillis} for each. */
  void stop(long joinMillis) {
    nets.forEach(NetThread::stop);
    for (Thread thread : threads) {
      Threads.join(thread, joinMillis);
    }
  }
}
