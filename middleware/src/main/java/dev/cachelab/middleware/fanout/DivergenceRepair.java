package dev.cachelab.middleware.fanout;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RespReplies;
import java.io.IOException;

/**
 * After a replicated write: counts it in {@link ReplicaDivergence} if it was applied on some
 * targets and failed on others, and if asked, deletes its keys on the failed targets ({@code delete
 * <key>}, or redis {@code DEL <keys>}). The client's reply is not changed (it reports the failure).
 * One per worker; its thread only.
 */
final class DivergenceRepair {
  private static final byte[] DELETE = {'d', 'e', 'l', 'e', 't', 'e', ' '};
  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] DEL = {'$', '3', '\r', '\n', 'D', 'E', 'L', '\r', '\n'};

  private final WorkerBackends backends;
  private final TargetReplies targets;
  private final ReplicaDivergence divergence;

  DivergenceRepair(WorkerBackends backends, TargetReplies targets, ReplicaDivergence divergence) {
    this.backends = backends;
    this.targets = targets;
    this.divergence = divergence;
  }

  /** Checks the write {@code request} just sent to its {@code count} targets. */
  void afterWrite(Request request, int count) {
    if (count < 2 || request.keyCount() == 0 || !isWrite(request)) {
      return;
    }
    boolean applied = false;
    boolean failed = false;
    for (int i = 0; i < count; i++) {
      if (failedOn(request, i)) {
        failed = true;
      } else {
        applied = true;
      }
    }
    if (!applied || !failed) {
      return;
    }
    divergence.diverged();
    if (!divergence.deleteOnFailed()) {
      return;
    }
    if (request.respCommand() == null && request.command().isMeta()) {
      return; // a meta key may be base64 (b flag): counted, not deleted
    }
    for (int i = 0; i < count; i++) {
      if (failedOn(request, i)) {
        divergence.deleted(delete(request, backends.get(request.server(i))));
      }
    }
  }

  private static boolean isWrite(Request request) {
    Command.Family family = request.family();
    return family == Command.Family.STORAGE || family == Command.Family.KEYED;
  }

  /** Whether target {@code i} did not apply the write: no answer, or an error reply. */
  private boolean failedOn(Request request, int i) {
    return !targets.ok(i) || backends.get(request.server(i)).replyIsError();
  }

  private boolean delete(Request request, BackendConnection backend) {
    if (!WorkerBackends.open(backend, backends.deadline(System.nanoTime()))) {
      return false;
    }
    byte[] bytes = request.bytes();
    backend.beginCompose();
    if (request.respCommand() != null) {
      backend.append((byte) '*');
      appendDecimal(backend, request.keyCount() + 1);
      backend.append(CRLF, 0, 2);
      backend.append(DEL, 0, DEL.length);
      for (int k = 0; k < request.keyCount(); k++) {
        int length = request.keyEnd(k) - request.keyStart(k);
        backend.append((byte) '$');
        appendDecimal(backend, length);
        backend.append(CRLF, 0, 2);
        backend.append(bytes, request.keyStart(k), length);
        backend.append(CRLF, 0, 2);
      }
    } else {
      backend.append(DELETE, 0, DELETE.length);
      backend.append(bytes, request.keyStart(0), request.keyEnd(0) - request.keyStart(0));
      backend.append(CRLF, 0, 2);
    }
    try {
      backend.sendComposed();
      if (request.respCommand() != null) {
        backend.readRespReply();
      } else {
        backend.readLineReply();
      }
      backend.disarm();
      return !backend.replyIsError();
    } catch (IOException e) {
      backend.markDown();
      return false;
    }
  }

  private static void appendDecimal(BackendConnection backend, long value) {
    byte[] digits = new byte[20];
    int end = RespReplies.writeDecimal(value, digits, 0);
    backend.append(digits, 0, end);
  }
}
