package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.protocol.Request;
import java.io.IOException;

/**
 * A retrieval sent whole to one server; its reply is passed through. One per worker; its thread
 * only.
 */
final class SingleRead {
  private final WorkerBackends backends;
  private final ReplyBuilder reply;

  SingleRead(WorkerBackends backends, ReplyBuilder reply) {
    this.backends = backends;
    this.reply = reply;
  }

  void run(Request request, int server, long deadline) {
    BackendConnection backend = backends.get(server);
    if (!WorkerBackends.open(backend, deadline)) {
      reply.replyFailure(server, false);
      return;
    }
    try {
      WorkerBackends.send(backend, request);
      backend.readRetrievalReply();
      backend.disarm();
    } catch (IOException e) {
      reply.replyFailure(server, WorkerBackends.fail(backend));
      return;
    }
    reply.appendReply(backend);
    reply.setHits(backend.valueCount());
    reply.countReply(server, backend);
  }
}
