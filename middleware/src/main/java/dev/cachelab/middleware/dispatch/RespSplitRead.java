package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RespCommand;
import dev.cachelab.middleware.protocol.RespReplies;
import java.io.IOException;
import java.util.Arrays;

/**
 * A multi-key redis read split by key ({@code MGET}, {@code EXISTS} with sharding on, or under hash
 * routing): {@code *<n+1> <name> <keys of this server>} to each of its servers, all sent before any
 * reply is read; then the {@code MGET} arrays merged element by element in the client's key order,
 * or the {@code EXISTS} counts added up. If any server fails, the client gets that server's error.
 * One per worker; its thread only.
 */
final class RespSplitRead {
  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final TargetReplies targets;
  private final int[] cursor;
  private final byte[] header = new byte[32];

  RespSplitRead(WorkerBackends backends, ReplyBuilder reply, TargetReplies targets) {
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
    if (request.respCommand() == RespCommand.MGET) {
      mergeInKeyOrder(request);
    } else {
      addCounts(request);
    }
  }

  private void sendKeysOf(Request request, int target, long deadline) {
    int server = request.server(target);
    BackendConnection backend = backends.get(server);
    if (!targets.open(target, server, backend, deadline, reply)) {
      return;
    }
    int keys = 0;
    for (int k = 0; k < request.keyCount(); k++) {
      if (request.keyServer(k) == server) {
        keys++;
      }
    }
    backend.beginCompose();
    appendLength(backend, (byte) '*', keys + 1);
    appendBulk(backend, request.bytes(), request.tokenStart(0), request.tokenEnd(0));
    for (int k = 0; k < request.keyCount(); k++) {
      if (request.keyServer(k) == server) {
        appendBulk(backend, request.bytes(), request.keyStart(k), request.keyEnd(k));
      }
    }
    try {
      WorkerBackends.markSent(request);
      backend.sendComposed();
      targets.succeeded(target);
    } catch (IOException e) {
      targets.failed(target, reply.reportFailure(server, WorkerBackends.fail(backend)));
    }
  }

  private void appendBulk(BackendConnection backend, byte[] bytes, int from, int to) {
    appendLength(backend, (byte) '$', to - from);
    backend.append(bytes, from, to - from);
    WorkerBackends.appendCrlf(backend);
  }

  private void appendLength(BackendConnection backend, byte type, long length) {
    header[0] = type;
    int end = RespReplies.writeDecimal(length, header, 1);
    header[end] = '\r';
    header[end + 1] = '\n';
    backend.append(header, 0, end + 2);
  }

  private void readReplyOf(Request request, int target) {
    int server = request.server(target);
    BackendConnection backend = backends.get(server);
    try {
      backend.readRespReply();
      backend.disarm();
      reply.countReply(server, backend);
      if (backend.replyIsError()) {
        targets.failed(target, Arrays.copyOf(backend.buffer(), backend.replyLength()));
      }
    } catch (IOException e) {
      targets.failed(target, reply.reportFailure(server, WorkerBackends.fail(backend)));
    }
  }

  // Each server answered an array with one element per key it was sent, in the order sent.
  private void mergeInKeyOrder(Request request) {
    Arrays.fill(cursor, 0);
    int keys = request.keyCount();
    header[0] = '*';
    int end = RespReplies.writeDecimal(keys, header, 1);
    header[end] = '\r';
    header[end + 1] = '\n';
    reply.append(header, 0, end + 2);
    for (int k = 0; k < keys; k++) {
      BackendConnection backend = backends.get(request.keyServer(k));
      int c = cursor[backend.serverIndex()]++;
      if (c >= backend.valueCount()) {
        reply.append(RespReplies.NIL); // the server's array was short: never from a real redis
        continue;
      }
      int start = backend.blockStart(c);
      byte[] buf = backend.buffer();
      reply.append(buf, start, backend.blockEnd(c) - start);
      if (buf[start] == '$' && buf[start + 1] != '-') {
        reply.addHit();
      }
    }
  }

  // EXISTS: each server answered :<count of its keys that exist>.
  private void addCounts(Request request) {
    long total = 0;
    for (int i = 0; i < request.serverCount(); i++) {
      BackendConnection backend = backends.get(request.server(i));
      byte[] buf = backend.buffer();
      long count = 0;
      for (int p = 1; p < backend.replyLength() && buf[p] >= '0' && buf[p] <= '9'; p++) {
        count = count * 10 + (buf[p] - '0');
      }
      total += count;
    }
    header[0] = ':';
    int end = RespReplies.writeDecimal(total, header, 1);
    header[end] = '\r';
    header[end + 1] = '\n';
    reply.append(header, 0, end + 2);
  }
}
