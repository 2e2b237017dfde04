package dev.cachelab.middleware.fanout;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RespCommand;
import dev.cachelab.middleware.protocol.RespReplies;
import dev.cachelab.middleware.reply.ReplyBuilder;
import java.util.Arrays;

/**
 * The redis side of a {@link SplitRead} ({@code MGET}, {@code EXISTS} split by key when sharding is
 * on, or under hash routing): {@code *<n+1> <name> <keys of this server>} to each server, then the
 * {@code MGET} arrays merged element by element in the client's key order, or the {@code EXISTS}
 * counts added up. One per worker; its thread only.
 */
final class RespSplit {
  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final int[] cursor;
  private final byte[] header = new byte[32];

  RespSplit(WorkerBackends backends, ReplyBuilder reply) {
    this.backends = backends;
    this.reply = reply;
    this.cursor = new int[MiddlewareConfig.MAX_SERVERS];
  }

  /** Appends the request's command with the keys of {@code server} to its send buffer. */
  void composeKeysOf(Request request, int server, BackendConnection backend) {
    int keys = 0;
    for (int k = 0; k < request.keyCount(); k++) {
      if (request.keyServer(k) == server) {
        keys++;
      }
    }
    int length = header(header, (byte) '*', keys + 1);
    backend.append(header, 0, length);
    appendBulk(backend, request.bytes(), request.tokenStart(0), request.tokenEnd(0));
    for (int k = 0; k < request.keyCount(); k++) {
      if (request.keyServer(k) == server) {
        appendBulk(backend, request.bytes(), request.keyStart(k), request.keyEnd(k));
      }
    }
  }

  /** Appends the client's reply built from every server's (all succeeded). */
  void merge(Request request) {
    if (request.respCommand() == RespCommand.MGET) {
      mergeInKeyOrder(request);
    } else {
      addCounts(request);
    }
  }

  private void appendBulk(BackendConnection backend, byte[] bytes, int from, int to) {
    int length = header(header, (byte) '$', to - from);
    backend.append(header, 0, length);
    backend.append(bytes, from, to - from);
    WorkerBackends.appendCrlf(backend);
  }

  /** Writes {@code <type><value>\r\n} at the start of {@code out}; returns its length. */
  private static int header(byte[] out, byte type, long value) {
    out[0] = type;
    int end = RespReplies.writeDecimal(value, out, 1);
    out[end] = '\r';
    out[end + 1] = '\n';
    return end + 2;
  }

  // Each server answered an array with one element per key it was sent, in the order sent.
  private void mergeInKeyOrder(Request request) {
    Arrays.fill(cursor, 0);
    int keys = request.keyCount();
    reply.append(header, 0, header(header, (byte) '*', keys));
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
    reply.append(header, 0, header(header, (byte) ':', total));
  }
}
