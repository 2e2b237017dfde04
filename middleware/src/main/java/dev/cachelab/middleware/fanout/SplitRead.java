package dev.cachelab.middleware.fanout;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.reply.ReplyBuilder;
import java.io.IOException;
import java.util.Arrays;

/**
 * A multi-key retrieval split by key: {@code <cmd> [<exptime>] <keys of this server>\r\n} to each
 * of its servers (redis: {@code MGET}/{@code EXISTS} as {@link RespSplit} composes them), all sent
 * before any reply is read, then the values merged in the client's key order (redis: {@link
 * RespSplit#merge}). If a server fails, the client gets that server's error; but if its part failed
 * because its server is down, ejected or broke (none timed out), under round-robin routing (every
 * server holds every key) the read is retried whole, unsplit, on one server in rotation ({@link
 * SingleRead#retry}), and under hash routing with replication it is split again with each of that
 * server's keys on its next replica ({@link Request#keyFallback}). One per worker; its thread only.
 */
public final class SplitRead {
  private static final byte[] END = {'E', 'N', 'D', '\r', '\n'};

  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final TargetReplies targets;
  private final int[] cursor;
  private final RespSplit resp;
  private final SingleRead singleRead;
  // This request: a part failed because its server is down, ejected or broke (not a timeout, not
  // an error reply), and none timed out; then the whole read may be retried on one server.
  private boolean partDown;
  private boolean partTimedOut;
  // Per server: found down, ejected or broken (not timed out) by this pass.
  private final boolean[] serverDown = new boolean[MiddlewareConfig.MAX_SERVERS];
  private final boolean[] seen = new boolean[MiddlewareConfig.MAX_SERVERS];

  public SplitRead(
      WorkerBackends backends, ReplyBuilder reply, TargetReplies targets, SingleRead singleRead) {
    this.backends = backends;
    this.reply = reply;
    this.targets = targets;
    this.cursor = new int[MiddlewareConfig.MAX_SERVERS];
    this.resp = new RespSplit(backends, reply);
    this.singleRead = singleRead;
  }

  public void run(Request request, long deadline) {
    int failed = sendAndRead(request, deadline);
    if (failed >= 0 && partDown && !partTimedOut) {
      if (request.fallbackToAny()) {
        // Round-robin: every server holds every key. The whole read, unsplit, to one server.
        singleRead.retry(
            request, singleRead.fallbackFor(request, request.server(failed)), deadline);
        return;
      }
      if (moveKeysOfDownServers(request)) {
        // Hash routing with replication: each key of a server found down is read from its next
        // replica instead. The down servers' failures are counted; the re-read answers.
        reply.clearError();
        failed = sendAndRead(request, deadline);
      }
    }
    if (failed >= 0) {
      reply.append(targets.failReply(failed));
      return;
    }
    if (request.respCommand() != null) {
      resp.merge(request);
    } else {
      mergeInKeyOrder(request);
    }
  }

  /**
   * Sends every server its keys, then reads every reply; returns the first target that failed (no
   * answer, or an error reply), or -1.
   */
  private int sendAndRead(Request request, long deadline) {
    int count = request.serverCount();
    partDown = false;
    partTimedOut = false;
    Arrays.fill(serverDown, false);
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
        return i;
      }
    }
    return -1;
  }

  /**
   * Gives each key of a server found down to its fallback replica ({@link Request#keyFallback}), if
   * every such key has one that is in rotation and was not found down; false (nothing moved)
   * otherwise.
   */
  private boolean moveKeysOfDownServers(Request request) {
    for (int k = 0; k < request.keyCount(); k++) {
      if (serverDown[request.keyServer(k)]) {
        int fallback = request.keyFallback(k);
        if (fallback < 0 || serverDown[fallback] || !backends.get(fallback).inRotation()) {
          return false;
        }
      }
    }
    for (int k = 0; k < request.keyCount(); k++) {
      if (serverDown[request.keyServer(k)]) {
        request.moveKeyToFallback(k);
      }
    }
    request.serversFromKeys(seen);
    return true;
  }

  private void sendKeysOf(Request request, int target, long deadline) {
    int server = request.server(target);
    BackendConnection backend = backends.get(server);
    if (!targets.open(target, server, backend, deadline, reply, request)) {
      partDown = true;
      serverDown[server] = true;
      return;
    }
    backend.beginCompose();
    if (request.respCommand() != null) {
      resp.composeKeysOf(request, server, backend);
    } else {
      composeKeysOf(request, server, backend);
    }
    try {
      WorkerBackends.markSent(request);
      backend.sendComposed();
      targets.succeeded(target);
      backend.setAside(); // until its reply is read, after the sends to the other servers
    } catch (IOException e) {
      partFailed(target, server, backend);
    }
  }

  // <cmd> [<exptime>] <key of this server>*\r\n
  private static void composeKeysOf(Request request, int server, BackendConnection backend) {
    byte[] bytes = request.bytes();
    boolean withExptime = request.command() == Command.GAT || request.command() == Command.GATS;
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
  }

  private void readReplyOf(Request request, int target) {
    int server = request.server(target);
    BackendConnection backend = backends.get(server);
    backends.resume(backend);
    try {
      WorkerBackends.readReply(backend, request);
      backend.disarm();
      reply.countReply(server, backend);
      if (backend.replyIsError()) {
        targets.failed(target, Arrays.copyOf(backend.buffer(), backend.replyLength()));
      }
    } catch (IOException e) {
      partFailed(target, server, backend);
    }
  }

  private void partFailed(int target, int server, BackendConnection backend) {
    boolean timedOut = WorkerBackends.fail(backend);
    partTimedOut |= timedOut;
    partDown |= !timedOut;
    serverDown[server] |= !timedOut;
    targets.failed(target, reply.reportFailure(server, timedOut));
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
