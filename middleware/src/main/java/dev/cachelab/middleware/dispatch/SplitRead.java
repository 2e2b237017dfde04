package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import java.io.IOException;
import java.util.Arrays;

/**
 * A multi-key retrieval split by key: {@code <cmd> [<exptime>] <keys of this server>\r\n} to each
 * of its servers, all sent before any reply is read, then the values merged in the client's key
 * order. If any server fails, the client gets that server's error. One per worker; its thread only.
 */
final class SplitRead {
  private static final byte[] END = {'E', 'N', 'D', '\r', '\n'};

  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final TargetReplies targets;
  private final int[] cursor;

  SplitRead(WorkerBackends backends, ReplyBuilder reply, TargetReplies targets) {
    this.backends = backends;
    this.reply = reply;
    this.targets = targets;
    this.cursor = new int[backends.size()];
  }

  void run(Request request, long deadline) {
    int count = request.serverCount();
    for (int i = 0; i < count; i++) {
      sendKeysOf(request, i, deadline);
    }
    for (int i = 0; i < count; i++) {
      if (targets.ok(i)) {
        readReplyOf(request, i);
      }
    }
    for (int i = 0; i < count; i++) {
      if (!targets.ok(i)) {
        reply.append(targets.failReply(i));
        return;
      }
    }
    mergeInKeyOrder(request);
  }

  private void sendKeysOf(Request request, int target, long deadline) {
    int server = request.server(target);
    BackendConnection backend = backends.get(server);
    if (!targets.open(target, server, backend, deadline, reply)) {
      return;
    }
    byte[] bytes = request.bytes();
    boolean withExptime = request.command() == Command.GAT || request.command() == Command.GATS;
    backend.beginCompose();
    backend.append(bytes, request.tokenStart(0), request.tokenEnd(0) - request.tokenStart(0));
    if (withExptime) {
      backend.append((byte) ' ');
      backend.append(bytes, request.tokenStart(1), request.tokenEnd(1) - request.tokenStart(1));
    }
    for (int k = 0; k < request.keyCount(); k++) {
      if (request.keyServer(k) == server) {
        backend.append((byte) ' ');
        backend.append(bytes, request.keyStart(k), request.keyEnd(k) - request.keyStart(k));
      }
    }
    WorkerBackends.appendCrlf(backend);
    try {
      WorkerBackends.markSent(request);
      backend.sendComposed();
      targets.succeeded(target);
    } catch (IOException e) {
      targets.failed(target, reply.reportFailure(server, WorkerBackends.fail(backend)));
    }
  }

  private void readReplyOf(Request request, int target) {
    int server = request.server(target);
    BackendConnection backend = backends.get(server);
    try {
      backend.readRetrievalReply();
      backend.disarm();
      reply.countReply(server, backend);
      if (backend.replyIsError()) {
        targets.failed(target, Arrays.copyOf(backend.buffer(), backend.replyLength()));
      }
    } catch (IOException e) {
      targets.failed(target, reply.reportFailure(server, WorkerBackends.fail(backend)));
    }
  }

  private void mergeInKeyOrder(Request request) {
    Arrays.fill(cursor, 0);
    byte[] bytes = request.bytes();
    for (int k = 0; k < request.keyCount(); k++) {
      BackendConnection backend = backends.get(request.keyServer(k));
      int c = cursor[backend.serverIndex()];
      if (c < backend.valueCount()
          && backend.blockKeyEquals(c, bytes, request.keyStart(k), request.keyEnd(k))) {
        reply.append(
            backend.buffer(), backend.blockStart(c), backend.blockEnd(c) - backend.blockStart(c));
        cursor[backend.serverIndex()] = c + 1;
        reply.addHit();
      }
    }
    reply.append(END);
  }
}
