package dev.cachelab.middleware;

import dev.cachelab.middleware.fanout.ReplicaDivergence;
import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.net.NetThread;
import dev.cachelab.middleware.routing.ServerSet;
import dev.cachelab.middleware.stats.StatsRegistry;
import dev.cachelab.middleware.worker.RequestQueue;

/**
 * Registers the middleware's own gauges and counters (queue, connections, client buffer budget,
 * replica divergence, server list changes) with the statistics registry: the one place that names
 * them. Called once by the main thread while wiring; the values are read by the statistics reporter
 * and the metrics endpoint.
 */
final class MiddlewareMetrics {
  private final StatsRegistry stats;

  private MiddlewareMetrics(StatsRegistry stats) {
    this.stats = stats;
  }

  /**
   * Registers them all, in the order {@code stats} and {@code /metrics} show them.
   *
   * @param reloader null without {@code --servers-file}
   */
  static void register(
      StatsRegistry stats,
      RequestQueue queue,
      NetThreads nets,
      BufferBudget budget,
      ServerSet servers,
      ReplicaDivergence divergence,
      ServersFileReloader reloader) {
    MiddlewareMetrics metrics = new MiddlewareMetrics(stats);
    metrics.connections(queue, nets);
    metrics.budget(budget, nets);
    metrics.servers(servers);
    metrics.divergence(divergence);
    metrics.serverList(reloader, servers);
  }

  /** The queue length, the open connections and those accepted since start. */
  private void connections(RequestQueue queue, NetThreads nets) {
    stats.gauges(
        queue::size,
        () -> (int) nets.sum(NetThread::connections),
        () -> nets.sum(NetThread::totalConnections));
  }

  /** The client buffer budget and the connections closed by it, by the idle timeout or refused. */
  private void budget(BufferBudget budget, NetThreads nets) {
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
        () -> nets.sum(NetThread::budgetEvictions));
    stats.value(
        "idle_closed_connections",
        "Connections closed by the idle timeout.",
        () -> nets.sum(NetThread::idleClosed));
    stats.value(
        "accept_failures",
        "Failed accepts (e.g. out of file descriptors); each pauses accepting for 100 ms.",
        () -> nets.sum(NetThread::acceptFailures));
  }

  /** Each server's counts and health, as configured at start. */
  private void servers(ServerSet servers) {
    stats.servers(servers.current().servers(), servers.current().health());
  }

  /** Replicated writes that left replicas different, and the deletes that repair them. */
  private void divergence(ReplicaDivergence divergence) {
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
  }

  /** Reloads of the servers file (none without one) and the changes of the server list. */
  private void serverList(ServersFileReloader reloader, ServerSet servers) {
    if (reloader != null) {
      stats.value(
          "servers_file_reloads",
          "Reloads of --servers-file (on SIGHUP or a change) that found it valid.",
          reloader::reloads);
      stats.value(
          "servers_file_failed_reloads",
          "Reloads refused: the file unreadable or invalid (the servers in use kept serving).",
          reloader::failedReloads);
    }
    stats.value(
        "server_list_changes", "Changes of the server list applied since start.", servers::changes);
  }
}
