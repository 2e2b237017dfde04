package dev.cachelab.middleware.routing;

import dev.cachelab.middleware.protocol.Request;
import java.util.function.Supplier;

/**
 * A router for several net threads (event loops, {@code --event-loops}): each thread routes with a
 * router of its own, made on its first use, since routers keep unsynchronised state (the hash
 * ring's digest and scratch arrays, the round-robin position). Any net thread; each call is served
 * by the calling thread's router.
 */
final class PerThreadRouter implements Router {
  private final ThreadLocal<Router> routers;

  PerThreadRouter(Supplier<Router> factory) {
    this.routers = ThreadLocal.withInitial(factory);
  }

  @Override
  public void route(Request request) {
    routers.get().route(request);
  }

  @Override
  public boolean sameServers(byte[] bytes, int aStart, int aEnd, int bStart, int bEnd) {
    return routers.get().sameServers(bytes, aStart, aEnd, bStart, bEnd);
  }

  @Override
  public boolean replicatesWrites() {
    return routers.get().replicatesWrites();
  }
}
