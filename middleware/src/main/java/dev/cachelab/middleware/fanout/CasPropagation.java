package dev.cachelab.middleware.fanout;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.reply.Replies;
import dev.cachelab.middleware.reply.ReplyBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A replicated {@code cas}: checked on the primary alone and, if stored, propagated to the other
 * replicas as {@code set <key> <flags> <exptime> <bytes>}. One per worker; its thread only.
 */
public final class CasPropagation {
  private static final byte[] SET_PREFIX = "set".getBytes(StandardCharsets.US_ASCII);

  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final TargetReplies targets;

  public CasPropagation(WorkerBackends backends, ReplyBuilder reply, TargetReplies targets) {
    this.backends = backends;
    this.reply = reply;
    this.targets = targets;
  }

  public void run(Request request, long deadline) {
    int primaryServer = request.server(0);
    BackendConnection primary = backends.get(primaryServer);
    if (!WorkerBackends.open(primary, deadline, request)) {
      reply.replyFailure(primaryServer, false);
      return;
    }
    try {
      WorkerBackends.send(primary, request);
    } catch (IOException e) {
      reply.replyFailure(primaryServer, WorkerBackends.fail(primary));
      return;
    }
    try {
      primary.readLineReply();
      primary.disarm();
    } catch (IOException e) {
      boolean timedOut = WorkerBackends.fail(primary);
      reply.append(reply.reportSentFailure(primaryServer, timedOut, request));
      return;
    }
    reply.countReply(primaryServer, primary);
    if (!Replies.isSuccess(Command.CAS, primary.buffer(), primary.replyLength())) {
      reply.appendReply(primary);
      return;
    }
    int count = request.serverCount();
    targets.succeeded(0);
    for (int i = 1; i < count; i++) {
      propagate(request, i, deadline);
    }
    targets.appendCombined(Command.CAS, count, request, backends, reply);
  }

  private void propagate(Request request, int target, long deadline) {
    int server = request.server(target);
    BackendConnection backend = backends.get(server);
    if (!targets.open(target, server, backend, deadline, reply, request)) {
      return;
    }
    byte[] bytes = request.bytes();
    backend.beginCompose();
    backend.append(SET_PREFIX, 0, SET_PREFIX.length);
    backend.append(bytes, request.tokenEnd(0), request.tokenEnd(4) - request.tokenEnd(0));
    WorkerBackends.appendCrlf(backend);
    backend.append(bytes, request.dataOffset(), request.dataLength());
    WorkerBackends.appendCrlf(backend);
    try {
      backend.sendComposed();
    } catch (IOException e) {
      targets.failed(target, reply.reportFailure(server, WorkerBackends.fail(backend)));
      return;
    }
    try {
      backend.readLineReply();
      backend.disarm();
      reply.countReply(server, backend);
      targets.succeeded(target);
    } catch (IOException e) {
      boolean timedOut = WorkerBackends.fail(backend);
      targets.failed(target, reply.reportSentFailure(server, timedOut, request));
    }
  }
}
