package dev.cachelab.middleware.routing;

import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;

/**
 * ASL 2017/2019 routing. Single-key reads, and multi-key reads when not sharded, go whole to the
 * next server in round-robin order. With sharding, a multi-key read is split into contiguous key
 * ranges, the remainder going to the first servers (5 keys over 3 servers: 2, 2, 1). Writes go to
 * every server, server 0 first. {@code gets}/{@code gats} always read server 0, the primary that
 * checks {@code cas}, so the cas unique a client sees is the one {@code cas} is checked against. A
 * whole read's fallback (see {@link Request#fallbackServer()}) is the next server in the order, or
 * the first one after it in rotation. Net thread only.
 */
public final class RoundRobinRouter implements Router {
  private final int serverCount;
  private final boolean sharded;
  private int next;

  public RoundRobinRouter(int serverCount, boolean sharded) {
    this.serverCount = serverCount;
    this.sharded = sharded;
  }

  @Override
  public void route(Request request) {
    request.clearServers();
    Command command = request.command();
    switch (request.family()) {
      case RETRIEVAL -> routeRead(request, command);
      case STORAGE, KEYED, BROADCAST -> addAll(request);
      case FIRST_SERVER, LOCAL -> request.addServer(0);
    }
  }

  private void routeRead(Request request, Command command) {
    if (command == Command.GETS || command == Command.GATS) {
      request.addServer(0);
      return;
    }
    int keys = request.keyCount();
    if (keys == 1 || !sharded || serverCount == 1) {
      request.addServer(next);
      next = next + 1 == serverCount ? 0 : next + 1;
      if (serverCount > 1) {
        request.setFallbackServer(next, true); // every server holds every key (writes go to all)
      }
      return;
    }
    request.setFallbackServer(0, true); // a split read may be retried whole on any server
    int perServer = keys / serverCount;
    int remainder = keys % serverCount;
    int key = 0;
    for (int server = 0; server < serverCount && key < keys; server++) {
      int share = perServer + (server < remainder ? 1 : 0);
      request.addServer(server);
      for (int i = 0; i < share; i++) {
        request.setKeyServer(key++, server);
      }
    }
  }

  /** Every server holds every key: writes go to all of them. */
  @Override
  public boolean sameServers(byte[] bytes, int aStart, int aEnd, int bStart, int bEnd) {
    return true;
  }

  @Override
  public boolean replicatesWrites() {
    return serverCount > 1;
  }

  private void addAll(Request request) {
    for (int server = 0; server < serverCount; server++) {
      request.addServer(server);
    }
  }
}
