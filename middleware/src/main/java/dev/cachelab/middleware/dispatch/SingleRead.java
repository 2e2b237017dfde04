package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.protocol.Request;
import java.io.IOException;

/**
 * A retrieval sent whole to one server; its reply (memcached or RESP) is passed through. If that
 * server is down, ejected or its connection breaks (not a timeout: the deadline is spent), the read
 * is retried once on the request's fallback replica; if that fails too the client gets {@code
 * SERVER_ERROR} at once. One per worker; its thread only.
 */
final class SingleRead {
  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private boolean lastTimedOut;

  SingleRead(WorkerBackends backends, ReplyBuilder reply) {
    this.backends = backends;
    this.reply = reply;
  }

  void run(Request request, int server, long deadline) {
    if (read(request, server, deadline)) {
      return;
    }
    boolean timedOut = lastTimedOut;
    int fallback = fallbackFor(request, server);
    if (timedOut || fallback < 0 || fallback == server) {
      reply.replyFailure(server, timedOut);
      return;
    }
    reply.reportFailure(server, false);
    retry(request, fallback, deadline);
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
    if (!read(request, fallback, deadline)) {
      reply.reportFailure(fallback, lastTimedOut);
      reply.replyNoReplica();
    }
  }

  /** Reads from {@code server}; false (nothing appended) if the server failed. */
  private boolean read(Request request, int server, long deadline) {
    BackendConnection backend = backends.get(server);
    if (!WorkerBackends.open(backend, deadline)) {
      lastTimedOut = false;
      return false;
    }
    try {
      WorkerBackends.send(backend, request);
      WorkerBackends.readReply(backend, request);
      backend.disarm();
    } catch (IOException e) {
      lastTimedOut = WorkerBackends.fail(backend);
      return false;
    }
    reply.appendReply(backend);
    reply.setHits(WorkerBackends.hits(backend, request));
    reply.countReply(server, backend);
    return true;
  }
}
