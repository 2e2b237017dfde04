package dev.cachelab.middleware.fanout;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.reply.ReplyBuilder;
import java.io.IOException;

/**
 * A retrieval sent whole to one server; its reply (memcached or RESP) is passed through. If that
 * server is down, ejected, its connection breaks, or it has not answered within the connection's
 * hedge delay (see {@link BackendConnection#hedge}; a stopped server then costs that delay, not the
 * whole timeout), the read is retried once on the request's fallback replica; if that fails too the
 * client gets {@code SERVER_ERROR} at once. A read with no other replica waits out the timeout. One
 * per worker; its thread only.
 */
public final class SingleRead {
  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private boolean lastTimedOut;
  private boolean lastCutShort;

  public SingleRead(WorkerBackends backends, ReplyBuilder reply) {
    this.backends = backends;
    this.reply = reply;
  }

  public void run(Request request, int server, long deadline) {
    int fallback = fallbackFor(request, server);
    boolean hasFallback = fallback >= 0 && fallback != server;
    // A slow command would be slow on the other replica too: it waits for its own server.
    boolean hedge = hasFallback && !request.slow();
    if (read(request, server, deadline, hedge)) {
      return;
    }
    boolean timedOut = lastTimedOut;
    if ((timedOut && !lastCutShort) || !hasFallback) {
      reply.replyFailure(server, timedOut);
      return;
    }
    if (lastCutShort) {
      reply.countCutShort(server);
    } else {
      reply.reportFailure(server, false);
    }
    retry(request, fallbackFor(request, server), deadline);
  }

  /**
   * Where to retry a read whose server {@code failed} failed: its fallback replica; with
   * round-robin routing (every server holds every key) the first server in rotation from the
   * fallback on, so that two servers down of three still leave the third to read from.
   */
  int fallbackFor(Request request, int failed) {
    int fallback = request.fallbackServer();
    if (fallback < 0 || !request.fallbackToAny()) {
      return fallback;
    }
    int servers = backends.size();
    for (int i = 0; i < servers; i++) {
      int server = (fallback + i) % servers;
      if (server != failed && backends.get(server).inRotation()) {
        return server;
      }
    }
    return fallback;
  }

  /** The retry of a read whose own server failed: the fallback, else no replica is left. */
  void retry(Request request, int fallback, long deadline) {
    if (!read(request, fallback, deadline, false)) {
      reply.reportFailure(fallback, lastTimedOut);
      reply.replyNoReplica();
    }
  }

  /**
   * Reads from {@code server}; false (nothing appended) if the server failed. With {@code hedge},
   * the read is cut short after the connection's hedge delay (another server can answer it).
   */
  private boolean read(Request request, int server, long deadline, boolean hedge) {
    BackendConnection backend = backends.get(server);
    lastCutShort = false;
    if (!WorkerBackends.open(backend, deadline, request)) {
      lastTimedOut = false;
      return false;
    }
    if (hedge) {
      backend.hedge();
    }
    try {
      WorkerBackends.sendRetryingStale(backend, request);
      WorkerBackends.readReplyRetryingStale(backend, request);
      backend.disarm();
    } catch (IOException e) {
      lastCutShort = backend.cutShort();
      lastTimedOut = WorkerBackends.fail(backend);
      return false;
    }
    reply.appendReply(backend);
    reply.setHits(WorkerBackends.hits(backend, request));
    reply.countReply(server, backend);
    return true;
  }
}
