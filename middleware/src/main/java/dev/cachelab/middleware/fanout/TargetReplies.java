package dev.cachelab.middleware.fanout;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.reply.Replies;
import dev.cachelab.middleware.reply.ReplyBuilder;

/**
 * Per target of a fanned-out request: whether its server answered, or the error reply standing in
 * for it; and the rule that combines them (the first failure in target order, else the primary's
 * reply). One per worker, reused by its strategies; the worker's thread only.
 */
public final class TargetReplies {
  private boolean[] ok;
  private byte[][] failReply;

  public TargetReplies(int servers) {
    ok = new boolean[servers];
    failReply = new byte[servers][];
  }

  void clear(int target) {
    ok[target] = false;
    failReply[target] = null;
  }

  /**
   * Starts a target: clears it and opens its server's connection; if the server is down, records
   * the failure (its error reply stands in for it) and returns false.
   */
  boolean open(
      int target,
      int server,
      BackendConnection backend,
      long deadline,
      ReplyBuilder reply,
      Request request) {
    clear(target);
    if (!WorkerBackends.open(backend, deadline, request)) {
      failed(target, reply.reportFailure(server, false));
      return false;
    }
    return true;
  }

  void succeeded(int target) {
    ok[target] = true;
  }

  void failed(int target, byte[] reply) {
    ok[target] = false;
    failReply[target] = reply;
  }

  boolean ok(int target) {
    return ok[target];
  }

  byte[] failReply(int target) {
    return failReply[target];
  }

  /**
   * Appends the reply of a request sent to {@code targets} servers: the first failure in target
   * order (no answer, or an answer that is not {@code command}'s success), else the primary's.
   */
  void appendCombined(
      Command command, int targets, Request request, WorkerBackends backends, ReplyBuilder reply) {
    for (int i = 0; i < targets; i++) {
      if (!ok[i]) {
        reply.append(failReply[i]);
        return;
      }
      BackendConnection backend = backends.get(request.server(i));
      boolean success =
          request.respCommand() != null
              ? !backend.replyIsError()
              : Replies.isSuccess(command, backend.buffer(), backend.replyLength());
      if (!success) {
        reply.appendReply(backend);
        return;
      }
    }
    reply.appendReply(backends.get(request.server(0)));
  }
}
