package dev.cachelab.middleware;

import dev.cachelab.middleware.backend.Prober;
import dev.cachelab.middleware.backend.ReplyLimit;
import dev.cachelab.middleware.backend.Watchdog;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.config.Protocol;
import dev.cachelab.middleware.config.ServerTimeouts;
import dev.cachelab.middleware.config.ServersFile;
import dev.cachelab.middleware.fanout.ReplicaDivergence;
import dev.cachelab.middleware.loop.EventLoopDispatch;
import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.net.NetThread;
import dev.cachelab.middleware.net.RequestDispatch;
import dev.cachelab.middleware.protocol.KeyPlacement;
import dev.cachelab.middleware.protocol.RequestDecoder;
import dev.cachelab.middleware.protocol.RequestParser;
import dev.cachelab.middleware.protocol.RespParser;
import dev.cachelab.middleware.protocol.RespReplies;
import dev.cachelab.middleware.routing.ServerSet;
import dev.cachelab.middleware.stats.IntervalReporter;
import dev.cachelab.middleware.stats.MetricsEndpoint;
import dev.cachelab.middleware.stats.StatsRegistry;
import dev.cachelab.middleware.stats.ThreadRecorder;
import dev.cachelab.middleware.worker.RequestQueue;
import dev.cachelab.middleware.worker.Worker;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Wires the parts together: net thread (or event loops), queue, workers, watchdog, statistics
 * reporter and metrics endpoint. {@link #start} and {@link #shutdown} are called by the main thread
 * (or a test).
 */
public final class Middleware {
  private final MiddlewareConfig config;
  private final RequestQueue queue;
  private final StatsRegistry stats;
  private final NetThread net; // the one that accepts
  private final List<NetThread> nets = new ArrayList<>();
  private final List<Thread> netThreads = new ArrayList<>();
  private final List<Thread> workerThreads = new ArrayList<>();
  private final Watchdog watchdog;
  private final ServerSet servers;
  private final ServersFileReloader reloader;
  private Thread reloaderThread;
  private final Prober prober;
  private final IntervalReporter reporter;
  private final MetricsEndpoint metrics;
  private Thread watchdogThread;
  private Thread proberThread;
  private boolean stopped;

  public Middleware(MiddlewareConfig config) throws IOException {
    this.config = config;
    boolean redis = config.protocol() == Protocol.REDIS;
    this.queue = new RequestQueue(config.queueCapacity(), config.workerBatch());
    this.stats = new StatsRegistry(config.servers(), config.workers());
    this.servers =
        new ServerSet(
            config,
            config.serversFile() != null
                ? ServersFile.read(config.serversFile()).timeouts(config)
                : ServerTimeouts.of(config));
    BufferBudget budget = new BufferBudget(config.effectiveBufferBudgetBytes());
    ReplyLimit replyLimit = ReplyLimit.of(budget, config.maxValueBytes());
    InetSocketAddress listen = new InetSocketAddress(config.listenAddress(), config.port());
    Supplier<byte[]> statsReply =
        redis ? () -> RespReplies.info(stats.statsReply()) : stats::statsReply;
    Supplier<RequestDecoder> decoders =
        decoders(config, KeyPlacement.following(() -> servers.currentRoutes().router()));
    long idleTimeoutNanos = TimeUnit.SECONDS.toNanos(config.idleTimeoutSeconds());
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
    this.net = nets.get(0);
    if (nets.size() > 1) {
      net.shareAccepts(nets);
    }
    stats.gauges(
        queue::size,
        () -> (int) sum(NetThread::connections),
        () -> sum(NetThread::totalConnections));
    stats.value(
        "buffer_budget_bytes", "Budget for bytes buffered for clients.", budget::limitBytes);
    stats.value("buffered_bytes", "Bytes buffered for clients now.", budget::usedBytes);
    stats.value(
        "budget_closed_connections",
        "Connections closed because their buffers did not fit in the budget.",
        budget::refusals);
    stats.value(
        "budget_evicted_connections",
        "Connections closed because a newer request needed the budget their partial request held"
            + " (the one holding it longest first).",
        () -> sum(NetThread::budgetEvictions));
    stats.value(
        "idle_closed_connections",
        "Connections closed by the idle timeout.",
        () -> sum(NetThread::idleClosed));
    stats.value(
        "accept_failures",
        "Failed accepts (e.g. out of file descriptors); each pauses accepting for 100 ms.",
        () -> sum(NetThread::acceptFailures));
    long watchdogPeriodNanos = Watchdog.periodNanos(config.backendTimeoutMs());
    stats.servers(servers.current().servers(), servers.current().health());
    this.watchdog = new Watchdog(watchdogPeriodNanos);
    List<Worker> workers = new ArrayList<>();
    ReplicaDivergence divergence = new ReplicaDivergence(config.divergenceDelete());
    stats.value(
        "replica_divergences",
        "Replicated writes applied on some servers and failed on others (replicas differ).",
        divergence::divergences);
    stats.value(
        "divergence_deletes",
        "Keys deleted on a server where their replicated write failed (--divergence-delete).",
        divergence::deletes);
    stats.value(
        "divergence_failed_deletes",
        "Such deletes that failed too (the server was down or did not answer).",
        divergence::failedDeletes);
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
    if (config.serversFile() != null) {
      this.reloader = new ServersFileReloader(config, servers, stats);
      stats.value(
          "servers_file_reloads",
          "Reloads of --servers-file (on SIGHUP or a change) that found it valid.",
          reloader::reloads);
      stats.value(
          "servers_file_failed_reloads",
          "Reloads refused: the file unreadable or invalid (the servers in use kept serving).",
          reloader::failedReloads);
    } else {
      this.reloader = null;
    }
    stats.value(
        "server_list_changes", "Changes of the server list applied since start.", servers::changes);
    this.prober =
        new Prober(
            () -> servers.current().health(),
            () -> servers.current().addresses(),
            config.protocol(),
            config.backendTimeoutMs());
    for (int w = 0; w < workers.size(); w++) {
      Thread thread = new Thread(workers.get(w), "worker-" + w);
      thread.setDaemon(true);
      workerThreads.add(thread);
    }
    this.reporter = new IntervalReporter(config, stats);
    this.metrics = new MetricsEndpoint(config, stats);
  }

  /** One request decoder per client connection, for the configured protocol. */
  private static Supplier<RequestDecoder> decoders(
      MiddlewareConfig config, KeyPlacement placement) {
    int maxValueBytes = config.maxValueBytes();
    if (config.protocol() == Protocol.REDIS) {
      return () -> new RespParser(maxValueBytes, placement, config.adminCommands());
    }
    return () -> new RequestParser(maxValueBytes, config.adminCommands());
  }

  /** Starts every thread; the middleware accepts clients when this returns. */
  public void start() throws IOException {
    for (Thread thread : workerThreads) {
      thread.start();
    }
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
    InetSocketAddress listen = net.localAddress();
    reporter.start(listen.getAddress().getHostAddress() + ":" + listen.getPort());
    try {
      metrics.start(reporter);
    } catch (BindException e) {
      InetSocketAddress address =
          InetSocketAddress.createUnresolved(config.metricsAddress(), config.metricsPort());
      throw new ListenFailure("serve /metrics", address, "--metrics-address, --metrics-port", e);
    }
    for (int i = 0; i < nets.size(); i++) {
      Thread thread = new Thread(nets.get(i), nets.size() == 1 ? "net" : "event-loop-" + i);
      thread.setDaemon(true);
      netThreads.add(thread);
      thread.start();
    }
  }

  private long sum(ToLongFunction<NetThread> counter) {
    long total = 0;
    for (NetThread thread : nets) {
      total += counter.applyAsLong(thread);
    }
    return total;
  }

  /** The address clients connect to (the real port when {@code -p 0}). */
  public InetSocketAddress localAddress() throws IOException {
    return net.localAddress();
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
    net.stopAccepting();
    if (reloader != null) {
      reloader.stop();
    }
    long drainDeadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.backendTimeoutMs() + 1000L);
    while (queue.size() > 0 && System.nanoTime() < drainDeadline) {
      sleepMillis(5);
    }
    for (int w = 0; w < workerThreads.size(); w++) {
      queue.addPoison(Worker.POISON);
    }
    for (Thread thread : workerThreads) {
      join(thread, Math.max(1, TimeUnit.NANOSECONDS.toMillis(drainDeadline - System.nanoTime())));
    }
    nets.forEach(NetThread::stop);
    for (Thread thread : netThreads) {
      join(thread, 1000);
    }
    watchdog.stop();
    prober.stop();
    reporter.stop();
    metrics.stop();
  }

  private static void join(Thread thread, long millis) {
    if (thread == null) {
      return;
    }
    try {
      thread.join(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleepMillis(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
