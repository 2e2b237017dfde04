package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.backend.BackendHealth;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.config.Protocol;
import dev.cachelab.middleware.config.Routing;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The current {@link ServerGeneration} and the changes to it: {@link #apply} makes a new generation
 * from a new server list (a server kept keeps its health: its ejection, its counts). Readers (the
 * net thread, workers, the prober) take {@link #current()} without a lock; changes are made by the
 * reloading thread, one at a time.
 */
public final class ServerSet {
  private final MiddlewareConfig config;
  private final Map<String, BackendHealth> healthByServer = new ConcurrentHashMap<>();
  private final AtomicLong changes = new AtomicLong();
  private volatile ServerGeneration current;

  /** Builds the first generation from the configured servers. */
  public ServerSet(MiddlewareConfig config) {
    this.config = config;
    this.current = build(1, config.servers());
  }

  public ServerGeneration current() {
    return current;
  }

  /** Changes of the server list applied since start. */
  public long changes() {
    return changes.get();
  }

  /**
   * Makes {@code servers} (already validated) the server list if it differs from the current one.
   *
   * @return whether it changed
   */
  public synchronized boolean apply(List<String> servers) {
    ServerGeneration old = current;
    if (old.servers().equals(servers)) {
      return false;
    }
    current = build(old.id() + 1, servers);
    changes.incrementAndGet();
    return true;
  }

  private ServerGeneration build(int id, List<String> servers) {
    List<InetSocketAddress> addresses = new ArrayList<>();
    List<BackendHealth> health = new ArrayList<>();
    for (String server : servers) {
      addresses.add(MiddlewareConfig.parseServer(server));
      health.add(healthByServer.computeIfAbsent(server, this::newHealth));
    }
    Router router =
        config.routing() == Routing.HASH
            ? new HashRouter(servers, Math.min(config.replication(), servers.size()))
            : new RoundRobinRouter(servers.size(), config.sharded());
    ErrorReplies errors =
        config.protocol() == Protocol.REDIS
            ? ProtocolErrorReplies.redis(servers)
            : ProtocolErrorReplies.memcached(servers);
    return new ServerGeneration(id, servers, addresses, health, router, errors);
  }

  private BackendHealth newHealth(String server) {
    return new BackendHealth(
        server,
        config.ejectAfterFailures(),
        TimeUnit.MILLISECONDS.toNanos(config.ejectRetryMs()),
        config.effectiveBackendMaxWaiters());
  }
}
