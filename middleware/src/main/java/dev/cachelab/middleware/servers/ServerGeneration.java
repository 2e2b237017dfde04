package dev.cachelab.middleware.servers;

import dev.cachelab.middleware.config.ServerTimeouts;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * One configuration of the server list: the servers in order, their addresses and shared health,
 * and the error replies naming them (the router that maps requests onto their positions travels
 * beside it, in a {@code RoutingTable}). A request is routed with the generation current when it is
 * decoded and served with that same generation (so a server removed meanwhile still answers the
 * requests routed to it). Immutable: read by the net threads, the workers and event loops that
 * serve its requests, the prober and the statistics.
 *
 * @param id 1 for the configuration at start, one more for each change
 * @param timeouts the backend timeout its requests are served with, and the ejected servers' retry
 *     interval
 */
public record ServerGeneration(
    int id,
    List<String> servers,
    List<InetSocketAddress> addresses,
    List<BackendHealth> health,
    ErrorReplies errors,
    ServerTimeouts timeouts) {

  public ServerGeneration {
    servers = List.copyOf(servers);
    addresses = List.copyOf(addresses);
    health = List.copyOf(health);
  }

  public int size() {
    return servers.size();
  }
}
