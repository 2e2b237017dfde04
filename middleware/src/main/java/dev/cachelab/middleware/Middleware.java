package dev.cachelab.middleware;

import dev.cachelab.middleware.backend.Prober;
import dev.cachelab.middleware.backend.ReplyLimit;
import dev.cachelab.middleware.backend.Watchdog;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.config.Protocol;
import dev.cachelab.middleware.config.ServerTimeouts;
import dev.cachelab.middleware.config.ServersFile;
import dev.cachelab.middleware.fanout.ReplicaDivergence;
import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.protocol.KeyPlacement;
import dev.cachelab.middleware.protocol.RespReplies;
import dev.cachelab.middleware.routing.ServerSet;
import dev.cachelab.middleware.stats.IntervalReporter;
import dev.cachelab.middleware.stats.MetricsEndpoint;
import dev.cachelab.middleware.stats.StatsRegistry;
import dev.cachelab.middleware.worker.RequestQueue;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Wires the parts together: net thread (or event loops), queue, workers, watchdog, prober, servers
 * file reloader, statistics reporter and metrics endpoint, each made by a factory of its own and
 * their metrics registered by {@link MiddlewareMetrics}. {@link #start} and {@link #shutdown} are
 * called by the main thread (or a test).
 */
public final class Middleware {
  private final MiddlewareConfig config;
  private final RequestQueue queue;
  private final StatsRegistry stats;
  private final ServerSet servers;
  private final NetThreads nets;
  private final WorkerThreads workers;
  private final Watchdog watchdog;
  private final Prober prober;
  private final ServersFileReloader reloader; // null without --servers-file
  private final IntervalReporter reporter;
  private final MetricsEndpoint metrics;
  private Thread watchdogThread;
  private Thread proberThread;
  private Thread reloaderThread;
  private boolean stopped;

  public Middleware(MiddlewareConfig config) throws IOException {
    this.config = config;
    this.queue = new RequestQueue(config.queueCapacity(), config.workerBatch());
    this.stats = new StatsRegistry(config.servers(), config.workers());
    this.servers = new ServerSet(config, startTimeouts(config));
    BufferBudget budget = new BufferBudget(config.effectiveBufferBudgetBytes());
    ReplyLimit replyLimit = ReplyLimit.of(budget, config.maxValueBytes());
    this.nets =
        NetThreads.build(
            config,
            queue,
            servers,
            stats,
            RequestDecoders.of(
                config, KeyPlacement.following(() -> servers.currentRoutes().router())),
            statsReply(config, stats),
            budget,
            replyLimit);
    long watchdogPeriodNanos = Watchdog.periodNanos(config.backendTimeoutMs());
    this.watchdog = new Watchdog(watchdogPeriodNanos);
    ReplicaDivergence divergence = new ReplicaDivergence(config.divergenceDelete());
    this.workers =
        WorkerThreads.build(
            config, queue, servers, watchdog, watchdogPeriodNanos, divergence, stats, replyLimit);
    this.reloader =
        config.serversFile() != null ? new ServersFileReloader(config, servers, stats) : null;
    this.prober =
        new Prober(
            () -> servers.current().health(),
            () -> servers.current().addresses(),
            config.protocol(),
            config.backendTimeoutMs());
    MiddlewareMetrics.register(stats, queue, nets, budget, servers, divergence, reloader);
    this.reporter = new IntervalReporter(config, stats);
    this.metrics = new MetricsEndpoint(config, stats);
  }

  /** The servers file's timeouts if there is one, else the flags'. */
  private static ServerTimeouts startTimeouts(MiddlewareConfig config) throws IOException {
    return config.serversFile() != null
        ? ServersFile.read(config.serversFile()).timeouts(config)
        : ServerTimeouts.of(config);
  }

  /** The {@code stats} reply, as redis' {@code INFO} under the redis protocol. */
  private static Supplier<byte[]> statsReply(MiddlewareConfig config, StatsRegistry stats) {
    return config.protocol() == Protocol.REDIS
        ? () -> RespReplies.info(stats.statsReply())
        : stats::statsReply;
  }

  /** Starts every thread; the middleware accepts clients when this returns. */
  public void start() throws IOException {
    workers.start();
    watchdogThread = new Thread(watchdog, "backend-watchdog");
    watchdogThread.setDaemon(true);
    watchdogThread.start();
    proberThread = new Thread(prober, "backend-prober");
    proberThread.setDaemon(true);
    proberThread.start();
    if (reloader != null) {
      reloader.listenForSighup();
      reloaderThread = new Thread(reloader, "servers-file-reloader");
      reloaderThread.setDaemon(true);
      reloaderThread.start();
    }
    InetSocketAddress listen = nets.accepting().localAddress();
    reporter.start(listen.getAddress().getHostAddress() + ":" + listen.getPort());
    try {
      metrics.start(reporter);
    } catch (BindException e) {
      InetSocketAddress address =
          InetSocketAddress.createUnresolved(config.metricsAddress(), config.metricsPort());
      throw new ListenFailure("serve /metrics", address, "--metrics-address, --metrics-port", e);
    }
    nets.start();
  }

  /** The address clients connect to (the real port when {@code -p 0}). */
  public InetSocketAddress localAddress() throws IOException {
    return nets.accepting().localAddress();
  }

  /** The metrics endpoint's port, or 0 if off. */
  public int metricsPort() {
    return metrics.port();
  }

  public StatsRegistry stats() {
    return stats;
  }

  /** The server list in use and its changes. */
  public ServerSet servers() {
    return servers;
  }

  /**
   * Stops accepting, lets queued requests finish (up to the backend timeout plus a second), stops
   * the threads and writes the final statistics. Idempotent.
   */
  public synchronized void shutdown() {
    if (stopped) {
      return;
    }
    stopped = true;
    nets.accepting().stopAccepting();
    if (reloader != null) {
      reloader.stop();
    }
    long drainDeadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.backendTimeoutMs() + 1000L);
    while (queue.size() > 0 && System.nanoTime() < drainDeadline) {
      Threads.sleepMillis(5);
    }
    workers.stop(drainDeadline);
    nets.stop(1000);
    watchdog.stop();
    prober.stop();
    reporter.stop();
    metrics.stop();
  }
}
