package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.OpType;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.stats.ErrorKind;
import dev.cachelab.middleware.stats.ThreadRecorder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * A worker thread: takes a request, forwards it to its server(s) over this worker's own blocking
 * connections, waits for every reply, builds the client's reply, hands it to the client connection
 * and records the request's times. Reuses its buffers; one instance per thread.
 *
 * <p>Reply rules (see {@code middleware/README.md}): a request sent to several servers (a
 * replicated write, {@code flush_all}, {@code verbosity}) succeeds only if every server succeeds;
 * otherwise the client gets the first failing server's reply, in target order. A split multi-get is
 * merged in the client's key order; if any of its servers fails, the client gets that server's
 * error. {@code cas} is checked on the primary alone and, if stored, propagated to the other
 * replicas with {@code set}.
 */
public final class Worker implements Runnable {
  private static final byte[] END = "END\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] SET_PREFIX = "set".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] INTERNAL_ERROR =
      "SERVER_ERROR middleware internal error\r\n".getBytes(StandardCharsets.US_ASCII);

  /** Put on the queue once per worker to stop it. */
  public static final Request POISON = new Request();

  private final RequestQueue queue;
  private final BackendConnection[] backends;
  private final ThreadRecorder recorder;
  private final long timeoutNanos;
  private final byte[][] downReplies;
  private final byte[][] timeoutReplies;

  private byte[] out = new byte[16 * 1024];
  private ByteBuffer outView = ByteBuffer.wrap(out);
  private int outLength;
  private int hits;
  private ErrorKind error;
  private final boolean[] ok;
  private final byte[][] failReply;
  private final int[] cursor;

  // Pipelining: the requests taken together, and per server how many were sent and whether the
  // connection failed during the batch.
  private final Request[] batch;
  private final Request[] pipelined;
  private final boolean[] batchSent;
  private final int[] unanswered;
  private final boolean[] broken;
  private final boolean[] brokenTimedOut;

  /**
   * @param armAheadNanos how much earlier than the timeout the deadline is armed (the watchdog
   *     period), so that the client hears within the timeout
   */
  public Worker(
      RequestQueue queue,
      List<BackendConnection> backends,
      List<String> serverNames,
      ThreadRecorder recorder,
      long timeoutNanos,
      long armAheadNanos,
      int maxBatch) {
    this.queue = queue;
    this.backends = backends.toArray(new BackendConnection[0]);
    this.recorder = recorder;
    this.timeoutNanos = Math.max(1, timeoutNanos - armAheadNanos);
    int n = this.backends.length;
    this.ok = new boolean[n];
    this.failReply = new byte[n][];
    this.cursor = new int[n];
    this.batch = new Request[Math.max(1, maxBatch)];
    this.pipelined = new Request[batch.length];
    this.batchSent = new boolean[batch.length];
    this.unanswered = new int[n];
    this.broken = new boolean[n];
    this.brokenTimedOut = new boolean[n];
    this.downReplies = new byte[n][];
    this.timeoutReplies = new byte[n][];
    for (int s = 0; s < n; s++) {
      downReplies[s] = ascii("SERVER_ERROR backend " + serverNames.get(s) + " unavailable\r\n");
      timeoutReplies[s] = ascii("SERVER_ERROR backend " + serverNames.get(s) + " timed out\r\n");
    }
  }

  /** Connects to every server up front (failures are retried on demand). */
  public void connectAll() {
    for (BackendConnection backend : backends) {
      long now = System.nanoTime();
      backend.arm(now + timeoutNanos);
      backend.ensureConnected(now);
      backend.disarmQuietly();
    }
  }

  @Override
  public void run() {
    connectAll();
    try {
      while (true) {
        int taken = queue.take(batch);
        if (batch[0] == POISON) {
          batch[0] = null;
          break;
        }
        processTaken(taken);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      for (BackendConnection backend : backends) {
        backend.close();
      }
    }
  }

  /**
   * Processes {@code batch[0, taken)}: the single-server requests among them are pipelined (all
   * sent, one write per server, then their replies read in order), the others processed one by one.
   */
  private void processTaken(int taken) {
    int pipelinedCount = 0;
    for (int i = 0; i < taken; i++) {
      if (taken > 1 && pipelinable(batch[i])) {
        pipelined[pipelinedCount++] = batch[i];
        batch[i] = null;
      }
    }
    if (pipelinedCount > 0) {
      try {
        pipeline(pipelinedCount);
      } catch (RuntimeException e) {
        reportOnce(e);
      }
      Arrays.fill(pipelined, 0, pipelinedCount, null);
    }
    for (int i = 0; i < taken; i++) {
      Request request = batch[i];
      if (request != null) {
        batch[i] = null;
        try {
          process(request);
        } catch (RuntimeException e) {
          // Never let one request kill the worker (the request is dropped).
          reportOnce(e);
        }
      }
    }
  }

  private static boolean pipelinable(Request request) {
    return request.serverCount() == 1
        && !request.isSplit()
        && request.command().family() != Command.Family.LOCAL;
  }

  /**
   * Sends {@code pipelined[0, count)}, each to its one server, in one write per server, then reads
   * the replies in order and completes each request as its reply arrives. A server that fails fails
   * its remaining requests of the batch.
   */
  private void pipeline(int count) {
    Arrays.fill(unanswered, 0);
    Arrays.fill(broken, false);
    Arrays.fill(brokenTimedOut, false);
    for (int i = 0; i < count; i++) {
      Request request = pipelined[i];
      int server = request.server(0);
      BackendConnection backend = backends[server];
      batchSent[i] = false;
      request.sentNanos = 0;
      if (broken[server]) {
        continue;
      }
      if (unanswered[server] == 0) {
        if (!open(backend, request.dequeuedNanos + timeoutNanos)) {
          broken[server] = true;
          continue;
        }
        backend.beginCompose();
      }
      appendForward(backend, request);
      unanswered[server]++;
      batchSent[i] = true;
    }
    long sentNanos = System.nanoTime();
    for (int server = 0; server < backends.length; server++) {
      if (unanswered[server] > 0 && !broken[server]) {
        try {
          backends[server].sendComposed();
        } catch (IOException e) {
          broken[server] = true;
          brokenTimedOut[server] = fail(backends[server]);
        }
      }
    }
    for (int i = 0; i < count; i++) {
      Request request = pipelined[i];
      if (batchSent[i]) {
        request.sentNanos = sentNanos;
      }
      outLength = 0;
      hits = 0;
      error = null;
      readPipelinedReply(request);
      if (request.noreply()) {
        outLength = 0;
      }
      request.repliedNanos = System.nanoTime();
      if (request.sentNanos == 0) {
        request.sentNanos = request.repliedNanos;
      }
      finish(request);
    }
  }

  private void readPipelinedReply(Request request) {
    int server = request.server(0);
    BackendConnection backend = backends[server];
    if (broken[server]) {
      replyFailure(server, brokenTimedOut[server]);
      return;
    }
    boolean retrieval = request.command().family() == Command.Family.RETRIEVAL;
    try {
      if (retrieval) {
        backend.readRetrievalReply();
      } else {
        backend.readLineReply();
      }
      if (--unanswered[server] == 0) {
        backend.disarm();
      }
    } catch (IOException e) {
      broken[server] = true;
      brokenTimedOut[server] = fail(backend);
      replyFailure(server, brokenTimedOut[server]);
      return;
    }
    append(backend.buffer(), 0, backend.replyLength());
    if (retrieval) {
      hits = backend.valueCount();
    }
    countReply(server, backend);
  }

  /** Appends the request as forwarded ({@code noreply} stripped) to the server's send buffer. */
  private static void appendForward(BackendConnection backend, Request request) {
    if (!request.noreply()) {
      backend.append(request.bytes(), 0, request.wireLength());
      return;
    }
    backend.append(request.bytes(), 0, request.forwardLineLength());
    backend.append(CRLF, 0, 2);
    if (request.command().hasDataBlock()) {
      backend.append(request.bytes(), request.dataOffset(), request.dataLength() + 2);
    }
  }

  private boolean reported;

  private void reportOnce(RuntimeException e) {
    if (!reported) {
      reported = true;
      System.err.println("cachelab middleware: worker survived an unexpected error: " + e);
    }
  }

  private void process(Request request) {
    outLength = 0;
    hits = 0;
    error = null;
    request.sentNanos = 0;
    try {
      handle(request);
    } catch (RuntimeException e) {
      // Never let one request kill the worker.
      outLength = 0;
      append(INTERNAL_ERROR, 0, INTERNAL_ERROR.length);
      error = ErrorKind.SERVER_ERROR;
    }
    request.repliedNanos = System.nanoTime();
    if (request.sentNanos == 0) {
      request.sentNanos = request.repliedNanos;
    }
    finish(request);
  }

  private void handle(Request request) {
    long deadline = request.dequeuedNanos + timeoutNanos;
    Command command = request.command();
    switch (command.family()) {
      case RETRIEVAL -> {
        if (request.isSplit()) {
          splitRead(request, deadline);
        } else {
          singleRead(request, request.server(0), deadline);
        }
      }
      case STORAGE, KEYED, BROADCAST, FIRST_SERVER -> {
        if (command == Command.CAS && request.serverCount() > 1) {
          casThenPropagate(request, deadline);
        } else {
          lineToAll(request, deadline);
        }
      }
      case LOCAL -> throw new IllegalStateException("local command queued: " + command);
    }
    if (request.noreply()) {
      outLength = 0;
    }
  }

  // ---- retrieval --------------------------------------------------------------------------------

  private void singleRead(Request request, int server, long deadline) {
    BackendConnection backend = backends[server];
    if (!open(backend, deadline)) {
      replyFailure(server, false);
      return;
    }
    try {
      send(backend, request);
      backend.readRetrievalReply();
      backend.disarm();
    } catch (IOException e) {
      replyFailure(server, fail(backend));
      return;
    }
    append(backend.buffer(), 0, backend.replyLength());
    hits = backend.valueCount();
    countReply(server, backend);
  }

  // <cmd> [<exptime>] <key of this server>*\r\n to each server, then merge in key order.
  private void splitRead(Request request, long deadline) {
    int targets = request.serverCount();
    byte[] bytes = request.bytes();
    boolean withExptime = request.command() == Command.GAT || request.command() == Command.GATS;
    for (int i = 0; i < targets; i++) {
      int server = request.server(i);
      BackendConnection backend = backends[server];
      ok[i] = false;
      failReply[i] = null;
      if (!open(backend, deadline)) {
        failReply[i] = reportFailure(server, false);
        continue;
      }
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
      backend.append(CRLF, 0, 2);
      try {
        markSent(request);
        backend.sendComposed();
        ok[i] = true;
      } catch (IOException e) {
        failReply[i] = reportFailure(server, fail(backend));
      }
    }
    for (int i = 0; i < targets; i++) {
      if (!ok[i]) {
        continue;
      }
      int server = request.server(i);
      BackendConnection backend = backends[server];
      try {
        backend.readRetrievalReply();
        backend.disarm();
        countReply(server, backend);
        if (backend.replyIsError()) {
          ok[i] = false;
          failReply[i] = Arrays.copyOf(backend.buffer(), backend.replyLength());
        }
      } catch (IOException e) {
        ok[i] = false;
        failReply[i] = reportFailure(server, fail(backend));
      }
    }
    for (int i = 0; i < targets; i++) {
      if (!ok[i]) {
        append(failReply[i], 0, failReply[i].length);
        return;
      }
    }
    mergeInKeyOrder(request);
  }

  private void mergeInKeyOrder(Request request) {
    Arrays.fill(cursor, 0);
    byte[] bytes = request.bytes();
    for (int k = 0; k < request.keyCount(); k++) {
      BackendConnection backend = backends[request.keyServer(k)];
      int c = cursor[backend.serverIndex()];
      if (c < backend.valueCount()
          && backend.blockKeyEquals(c, bytes, request.keyStart(k), request.keyEnd(k))) {
        append(
            backend.buffer(), backend.blockStart(c), backend.blockEnd(c) - backend.blockStart(c));
        cursor[backend.serverIndex()] = c + 1;
        hits++;
      }
    }
    append(END, 0, END.length);
  }

  // ---- one-line replies -------------------------------------------------------------------------

  /** Sends the request to every target; the reply is the first failure, else the primary's. */
  private void lineToAll(Request request, long deadline) {
    int targets = request.serverCount();
    for (int i = 0; i < targets; i++) {
      int server = request.server(i);
      BackendConnection backend = backends[server];
      ok[i] = false;
      failReply[i] = null;
      if (!open(backend, deadline)) {
        failReply[i] = reportFailure(server, false);
        continue;
      }
      try {
        markSent(request);
        send(backend, request);
        ok[i] = true;
      } catch (IOException e) {
        failReply[i] = reportFailure(server, fail(backend));
      }
    }
    for (int i = 0; i < targets; i++) {
      if (ok[i]) {
        BackendConnection backend = backends[request.server(i)];
        try {
          backend.readLineReply();
          backend.disarm();
          countReply(request.server(i), backend);
        } catch (IOException e) {
          ok[i] = false;
          failReply[i] = reportFailure(request.server(i), fail(backend));
        }
      }
    }
    appendCombined(request.command(), targets, request);
  }

  private void appendCombined(Command command, int targets, Request request) {
    for (int i = 0; i < targets; i++) {
      if (!ok[i]) {
        append(failReply[i], 0, failReply[i].length);
        return;
      }
      BackendConnection backend = backends[request.server(i)];
      if (!Replies.isSuccess(command, backend.buffer(), backend.replyLength())) {
        append(backend.buffer(), 0, backend.replyLength());
        return;
      }
    }
    BackendConnection primary = backends[request.server(0)];
    append(primary.buffer(), 0, primary.replyLength());
  }

  // cas on the primary; if STORED, "set <key> <flags> <exptime> <bytes>" to the other replicas.
  private void casThenPropagate(Request request, long deadline) {
    int primaryServer = request.server(0);
    BackendConnection primary = backends[primaryServer];
    if (!open(primary, deadline)) {
      replyFailure(primaryServer, false);
      return;
    }
    try {
      markSent(request);
      send(primary, request);
      primary.readLineReply();
      primary.disarm();
    } catch (IOException e) {
      replyFailure(primaryServer, fail(primary));
      return;
    }
    countReply(primaryServer, primary);
    if (!Replies.isSuccess(Command.CAS, primary.buffer(), primary.replyLength())) {
      append(primary.buffer(), 0, primary.replyLength());
      return;
    }
    byte[] bytes = request.bytes();
    int targets = request.serverCount();
    ok[0] = true;
    for (int i = 1; i < targets; i++) {
      int server = request.server(i);
      BackendConnection backend = backends[server];
      ok[i] = false;
      if (!open(backend, deadline)) {
        failReply[i] = reportFailure(server, false);
        continue;
      }
      backend.beginCompose();
      backend.append(SET_PREFIX, 0, SET_PREFIX.length);
      backend.append(bytes, request.tokenEnd(0), request.tokenEnd(4) - request.tokenEnd(0));
      backend.append(CRLF, 0, 2);
      backend.append(bytes, request.dataOffset(), request.dataLength());
      backend.append(CRLF, 0, 2);
      try {
        backend.sendComposed();
        backend.readLineReply();
        backend.disarm();
        countReply(server, backend);
        ok[i] = true;
      } catch (IOException e) {
        failReply[i] = reportFailure(server, fail(backend));
      }
    }
    appendCombined(Command.CAS, targets, request);
  }

  // ---- helpers ----------------------------------------------------------------------------------

  private boolean open(BackendConnection backend, long deadline) {
    backend.arm(deadline);
    if (!backend.ensureConnected(System.nanoTime())) {
      backend.disarmQuietly();
      return false;
    }
    return true;
  }

  private void send(BackendConnection backend, Request request) throws IOException {
    markSent(request);
    if (!request.noreply()) {
      backend.send(request.bytes(), 0, request.wireLength());
      return;
    }
    // The middleware always waits for a reply, so "noreply" is not forwarded.
    backend.beginCompose();
    appendForward(backend, request);
    backend.sendComposed();
  }

  private static void markSent(Request request) {
    if (request.sentNanos == 0) {
      request.sentNanos = System.nanoTime();
    }
  }

  /** Marks the connection down; returns whether it was a timeout. */
  private static boolean fail(BackendConnection backend) {
    boolean timedOut = backend.timedOut();
    backend.markDown();
    return timedOut;
  }

  private void replyFailure(int server, boolean timedOut) {
    byte[] reply = reportFailure(server, timedOut);
    append(reply, 0, reply.length);
  }

  private byte[] reportFailure(int server, boolean timedOut) {
    recorder.recordServerRequest(server, true);
    if (error == null) {
      error = timedOut ? ErrorKind.TIMEOUT : ErrorKind.BACKEND_DOWN;
    }
    return timedOut ? timeoutReplies[server] : downReplies[server];
  }

  private void countReply(int server, BackendConnection backend) {
    boolean failed = backend.replyIsError();
    recorder.recordServerRequest(server, failed);
    if (failed && error == null) {
      error = ErrorKind.SERVER_ERROR;
    }
  }

  private void append(byte[] bytes, int from, int length) {
    if (outLength + length > out.length) {
      out = Arrays.copyOf(out, Math.max(outLength + length, out.length * 2));
      outView = ByteBuffer.wrap(out);
    }
    System.arraycopy(bytes, from, out, outLength, length);
    outLength += length;
  }

  private void finish(Request request) {
    OpType op = request.opType();
    int keys = request.command().family() == Command.Family.RETRIEVAL ? request.keyCount() : 0;
    long received = request.receivedNanos;
    long queueNanos = request.dequeuedNanos - request.enqueuedNanos;
    long serviceNanos = request.repliedNanos - request.sentNanos;
    long dequeued = request.dequeuedNanos;
    outView.limit(outLength).position(0);
    long written = request.connection.complete(request, outView);
    recorder.recordRequest(op, written - received, queueNanos, serviceNanos, keys, hits);
    if (error != null) {
      recorder.recordError(op, error);
    }
    recorder.addBusyNanos(written - dequeued);
    outView.clear();
  }

  private static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }
}
