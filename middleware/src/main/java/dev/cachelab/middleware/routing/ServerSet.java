package dev.cachelab.middleware.routing;

import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.config.Protocol;
import dev.cachelab.middleware.config.Routing;
import dev.cachelab.middleware.config.ServerTimeouts;
import dev.cachelab.middleware.reply.ProtocolErrorReplies;
import dev.cachelab.middleware.servers.BackendHealth;
import dev.cachelab.middleware.servers.ErrorReplies;
import dev.cachelab.middleware.servers.ServerGeneration;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The current {@link ServerGeneration} and the changes to it: {@link #apply} makes a new generation
 * from a new server list or new timeouts (a server kept keeps its health: its ejection, its counts;
 * a new retry interval applies to every server from the next ejection on). Readers (the net thread,
 * workers, the prober) take {@link #current()} without a lock; changes are made by the reloading
 * thread, one at a time.
 */
public final class ServerSet {
  private final MiddlewareConfig config;
  private final Map<String, BackendHealth> healthByServer = new ConcurrentHashMap<>();
  private final AtomicLong changes = new AtomicLong();
  private volatile RoutingTable current;
  private ServerTimeouts timeouts; // guarded by this (the constructor, then apply)

  /** Builds the first generation from the configured servers, with the flags' timeouts. */
  public ServerSet(MiddlewareConfig config) {
    this(config, ServerTimeouts.of(config));
  }

  /** Builds the first generation from the configured servers and {@code timeouts}. */
  public ServerSet(MiddlewareConfig config, ServerTimeouts timeouts) {
    this.config = config;
    this.timeouts = timeouts;
    this.current = build(1, config.servers());
  }

  public ServerGeneration current() {
    return current.generation();
  }

  /** The current generation with its router (the net threads route with it). */
  public RoutingTable currentRoutes() {
    return current;
  }

  /** Changes of the server list applied since start. */
  public long changes() {
    return changes.get();
  }

  /**
   * Makes {@code servers} (already validated) the server list if it differs from the current one,
   * with the current timeouts.
   *
   * @return whether it changed
   */
  public synchronized boolean apply(List<String> servers) {
    return apply(servers, timeouts);
  }

  /**
   * Makes {@code servers} and {@code next} (already validated) the configuration if either differs
   * from the current one; requests routed before keep the timeout they were routed with.
   *
   * @return whether it changed
   */
  public synchronized boolean apply(List<String> servers, ServerTimeouts next) {
    ServerGeneration old = current.generation();
    if (old.servers().equals(servers) && timeouts.equals(next)) {
      return false;
    }
    if (!timeouts.equals(next)) {
      timeouts = next;
      healthByServer.values().forEach(h -> h.retryIntervalNanos(next.ejectRetryNanos()));
    }
    current = build(old.id() + 1, servers);
    changes.incrementAndGet();
    return true;
  }

  private RoutingTable build(int id, List<String> servers) {
    List<InetSocketAddress> addresses = new ArrayList<>();
    List<BackendHealth> health = new ArrayList<>();
    for (String server : servers) {
      addresses.add(MiddlewareConfig.parseServer(server));
      health.add(healthByServer.computeIfAbsent(server, this::newHealth));
    }
    Supplier<Router> routers =
        config.routing() == Routing.HASH
            ? () -> new HashRouter(servers, Math.min(config.replication(), servers.size()), health)
            : () -> new RoundRobinRouter(servers.size(), config.sharded());
    // Several net threads (event loops) route at once: one router each.
    Router router = config.eventLoops() > 1 ? new PerThreadRouter(routers) : routers.get();
    ErrorReplies errors =
        config.protocol() == Protocol.REDIS
            ? ProtocolErrorReplies.redis(servers)
            : ProtocolErrorReplies.memcached(servers);
    return new RoutingTable(
        new ServerGeneration(id, servers, addresses, health, errors, timeouts), router);
  }

  private BackendHealth newHealth(String server) {
    return new BackendHealth(
        server,
        config.ejectAfterFailures(),
        timeouts.ejectRetryNanos(),
        config.effectiveBackendMaxWaiters());
  }
}
