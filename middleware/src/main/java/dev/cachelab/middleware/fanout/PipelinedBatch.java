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
 * Single-server requests taken together from the queue ({@code --worker-batch}): all sent, one
 * write per server, then their replies read in order, each request completed as its reply arrives.
 * A server that fails fails its remaining requests of the batch, except reads with a fallback
 * replica: those are retried there one by one after the batch ({@link SingleRead#retry}). A server
 * whose requests in the batch are all such reads is hedged as a single read is ({@link
 * BackendConnection#hedge}): if it has not answered within its hedge delay its reads go to their
 * fallbacks, so a stopped server costs them that delay, not the timeout. One per worker; its thread
 * only.
 */
public final class PipelinedBatch {
  /** Completes one request of the batch with the reply built so far. */
  public interface Completion {
    void complete(Request request);
  }

  private final WorkerBackends backends;
  private final ReplyBuilder reply;
  private final SingleRead singleRead;
  private final Completion completion;
  private final Request[] retries;
  private int retryCount;
  private final boolean[] sent;
  private final int[] unanswered;
  private final boolean[] broken;
  private final boolean[] brokenTimedOut;
  // The server's connection broke while its replies were read (its requests had all been sent).
  private final boolean[] brokenAfterSend;
  private final boolean[] brokenCutShort;
  private final boolean[] hedgeable;
  private boolean severalServers;

  public PipelinedBatch(
      WorkerBackends backends,
      ReplyBuilder reply,
      SingleRead singleRead,
      int maxBatch,
      Completion completion) {
    this.backends = backends;
    this.reply = reply;
    this.singleRead = singleRead;
    this.completion = completion;
    this.retries = new Request[maxBatch];
    int n = MiddlewareConfig.MAX_SERVERS;
    this.sent = new boolean[maxBatch];
    this.unanswered = new int[n];
    this.broken = new boolean[n];
    this.brokenTimedOut = new boolean[n];
    this.brokenAfterSend = new boolean[n];
    this.brokenCutShort = new boolean[n];
    this.hedgeable = new boolean[n];
  }

  /** Whether the request may join a pipelined batch: one server, not split, not local. */
  public static boolean accepts(Request request) {
    return request.serverCount() == 1
        && !request.isSplit()
        && request.family() != Command.Family.LOCAL;
  }

  /** Sends {@code requests[0, count)}, then reads and completes them in order. */
  public void run(Request[] requests, int count) {
    Arrays.fill(unanswered, 0);
    Arrays.fill(broken, false);
    Arrays.fill(brokenTimedOut, false);
    Arrays.fill(brokenAfterSend, false);
    Arrays.fill(brokenCutShort, false);
    Arrays.fill(hedgeable, true);
    for (int i = 0; i < count; i++) {
      compose(requests[i], i);
    }
    for (int server = 0; server < backends.size(); server++) {
      if (unanswered[server] > 0 && hedgeable[server] && !broken[server]) {
        backends.get(server).hedge();
      }
    }
    long sentNanos = System.nanoTime();
    int servers = 0;
    for (int server = 0; server < backends.size(); server++) {
      if (unanswered[server] > 0) {
        servers++;
      }
    }
    severalServers = servers > 1;
    for (int server = 0; server < backends.size(); server++) {
      if (unanswered[server] > 0 && !broken[server]) {
        try {
          backends.get(server).sendComposed();
          if (severalServers) {
            backends.get(server).setAside(); // the replies are read in request order
          }
        } catch (IOException e) {
          fail(server);
        }
      }
    }
    retryCount = 0;
    for (int i = 0; i < count; i++) {
      Request request = requests[i];
      if (sent[i]) {
        request.sentNanos = sentNanos;
      }
      reply.reset();
      if (!readReply(request)) {
        retries[retryCount++] = request;
        continue;
      }
      if (request.noreply()) {
        reply.discard();
      } else if (request.metaQuiet()) {
        reply.discardIfQuiet(request.command());
      }
      complete(request);
    }
    for (int i = 0; i < retryCount; i++) {
      Request request = retries[i];
      retries[i] = null;
      reply.reset();
      if (brokenCutShort[request.server(0)]) {
        reply.countCutShort(request.server(0));
      } else {
        reply.reportFailure(request.server(0), false);
      }
      singleRead.retry(
          request,
          singleRead.fallbackFor(request, request.server(0)),
          backends.deadline(request.dequeuedNanos));
      complete(request);
    }
  }

  /**
   * The error reply of a request whose server's connection broke: after the batch was sent, a write
   * may have been applied (and is not sent again); before, or by a timeout, the server's failure.
   */
  private void replyBroken(Request request, int server) {
    if (brokenAfterSend[server] && !brokenTimedOut[server]) {
      reply.append(reply.reportBroken(server, request));
    } else {
      reply.replyFailure(server, brokenTimedOut[server]);
    }
  }

  private void complete(Request request) {
    request.repliedNanos = System.nanoTime();
    if (request.sentNanos == 0) {
      request.sentNanos = request.repliedNanos;
    }
    completion.complete(request);
  }

  /**
   * A read whose server failed (not by timing out, unless a hedge cut it short) and that has a
   * fallback replica.
   */
  private boolean retriable(Request request, int server) {
    return (!brokenTimedOut[server] || brokenCutShort[server]) && hasFallback(request, server);
  }

  private static boolean hasFallback(Request request, int server) {
    return request.fallbackServer() >= 0
        && request.fallbackServer() != server
        && request.family() == Command.Family.RETRIEVAL;
  }

  /** Marks the server's connection broken after a failed send or read. */
  private void fail(int server) {
    BackendConnection backend = backends.get(server);
    broken[server] = true;
    brokenCutShort[server] = backend.cutShort();
    brokenTimedOut[server] = WorkerBackends.fail(backend);
  }

  private void compose(Request request, int index) {
    int server = request.server(0);
    BackendConnection backend = backends.get(server);
    hedgeable[server] &= hasFallback(request, server) && !request.slow();
    sent[index] = false;
    request.sentNanos = 0;
    if (broken[server]) {
      return;
    }
    if (unanswered[server] == 0) {
      if (!WorkerBackends.open(backend, backends.deadline(request.dequeuedNanos), request)) {
        broken[server] = true;
        return;
      }
      backend.reopenIfClosedWhileIdle(System.nanoTime()); // its writes are not sent again
      backend.beginCompose();
    }
    WorkerBackends.appendForward(backend, request);
    unanswered[server]++;
    sent[index] = true;
  }

  /** Reads the request's reply into the reply builder; false if it is to be retried. */
  private boolean readReply(Request request) {
    int server = request.server(0);
    BackendConnection backend = backends.get(server);
    if (broken[server]) {
      if (retriable(request, server)) {
        return false;
      }
      replyBroken(request, server);
      return true;
    }
    boolean retrieval = request.family() == Command.Family.RETRIEVAL;
    backends.resume(backend);
    try {
      WorkerBackends.readReply(backend, request);
      if (--unanswered[server] == 0) {
        backend.disarm();
      } else if (severalServers) {
        backend.setAside(); // until this server's next reply in request order
      }
    } catch (IOException e) {
      fail(server);
      brokenAfterSend[server] = true;
      if (retriable(request, server)) {
        return false;
      }
      replyBroken(request, server);
      return true;
    }
    reply.appendReply(backend);
    if (retrieval) {
      reply.setHits(WorkerBackends.hits(backend, request));
    }
    reply.countReply(server, backend);
    return true;
  }
}
