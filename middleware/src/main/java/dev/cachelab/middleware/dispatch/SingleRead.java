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
    int fallback = request.fallbackServer();
    if (timedOut || fallback < 0 || fallback == server) {
      reply.replyFailure(server, timedOut);
      return;
    }
    reply.reportFailure(server, false);
    retry(request, fallback, deadline);
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
