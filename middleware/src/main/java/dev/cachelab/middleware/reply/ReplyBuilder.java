package dev.cachelab.middleware.reply;

import dev.cachelab.middleware.backend.BackendConnection;
import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.servers.ErrorReplies;
import dev.cachelab.middleware.stats.ErrorKind;
import dev.cachelab.middleware.stats.ThreadRecorder;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The client reply of the request a worker is serving, built in a reusable buffer, with what the
 * request is counted as (hits, error kind) and the per-server counts. One per worker; its thread
 * only.
 */
public final class ReplyBuilder {
  private static final int INITIAL_BYTES = 16 * 1024;

  /** A buffer grown past this for one large reply is given back afterwards. */
  private static final int KEEP_BYTES = 256 * 1024;

  private final ThreadRecorder recorder;
  private ErrorReplies errors;
  private byte[] out = new byte[INITIAL_BYTES];
  private ByteBuffer view = ByteBuffer.wrap(out);
  private int length;
  private int hits;
  private ErrorKind error;

  public ReplyBuilder(ThreadRecorder recorder, ErrorReplies errors) {
    this.recorder = recorder;
    this.errors = errors;
  }

  /** The error replies of the server list of the request served now. */
  public void use(ErrorReplies errorReplies) {
    errors = errorReplies;
  }

  /** Starts the reply of a new request. */
  public void reset() {
    if (out.length > KEEP_BYTES) {
      out = new byte[INITIAL_BYTES];
      view = ByteBuffer.wrap(out);
    }
    length = 0;
    hits = 0;
    error = null;
  }

  /** Drops what was built (a {@code noreply} request, or before an error reply). */
  public void discard() {
    length = 0;
  }

  /** Drops the reply if it is one a meta command's {@code q} flag leaves out. */
  public void discardIfQuiet(Command command) {
    if (Replies.quietSuppressed(command, out, length)) {
      length = 0;
    }
  }

  public void append(byte[] bytes, int from, int count) {
    if (length + count > out.length) {
      out = Arrays.copyOf(out, Math.max(length + count, out.length * 2));
      view = ByteBuffer.wrap(out);
    }
    System.arraycopy(bytes, from, out, length, count);
    length += count;
  }

  /** Appends the bytes between the buffer's position and limit (its position is left as it is). */
  public void append(ByteBuffer bytes) {
    int count = bytes.remaining();
    if (length + count > out.length) {
      out = Arrays.copyOf(out, Math.max(length + count, out.length * 2));
      view = ByteBuffer.wrap(out);
    }
    bytes.get(bytes.position(), out, length, count);
    length += count;
  }

  public void append(byte[] bytes) {
    append(bytes, 0, bytes.length);
  }

  /** Appends the server's last reply. */
  public void appendReply(BackendConnection backend) {
    append(backend.buffer(), 0, backend.replyLength());
  }

  public void setHits(int count) {
    hits = count;
  }

  public void addHit() {
    hits++;
  }

  public int hits() {
    return hits;
  }

  /** The first error of the request, or null. */
  ErrorKind error() {
    return error;
  }

  public void internalError() {
    length = 0;
    append(errors.internalError());
    error = ErrorKind.SERVER_ERROR;
  }

  /**
   * The failures counted so far were retried on other servers: the request is judged by the retry
   * (its server failures stay counted).
   */
  public void clearError() {
    error = null;
  }

  /** Appends the error reply of a failed server and counts the failure. */
  public void replyFailure(int server, boolean timedOut) {
    append(reportFailure(server, timedOut));
  }

  /** Counts a failed server; returns its error reply (not appended). */
  public byte[] reportFailure(int server, boolean timedOut) {
    recorder.recordServerRequest(server, true);
    if (error == null) {
      error = timedOut ? ErrorKind.TIMEOUT : ErrorKind.BACKEND_DOWN;
    }
    return timedOut ? errors.backendTimedOut(server) : errors.backendDown(server);
  }

  /**
   * Counts a failed server whose connection broke after {@code request} was sent (not by a
   * timeout); returns the error reply: for a request that changes data, that it may have been
   * applied, else that the server is unavailable.
   */
  public byte[] reportBroken(int server, Request request) {
    byte[] down = reportFailure(server, false);
    return request.idempotent() ? down : errors.outcomeUnknown(server);
  }

  /**
   * Counts a failed server after {@code request} was sent: a timeout, or a broken connection (see
   * {@link #reportBroken}).
   */
  public byte[] reportSentFailure(int server, boolean timedOut, Request request) {
    return timedOut ? reportFailure(server, true) : reportBroken(server, request);
  }

  /**
   * Counts a read cut short on {@code server} (and retried elsewhere) as a failed server request,
   * not as an error of the client's request.
   */
  public void countCutShort(int server) {
    recorder.recordServerRequest(server, true);
  }

  /** Appends the reply for a request none of whose replicas could answer (failures counted). */
  public void replyNoReplica() {
    append(errors.noReplicaLeft());
  }

  /** Counts a server's reply (an error line counts as a failed server request). */
  public void countReply(int server, BackendConnection backend) {
    countReply(server, backend.replyIsError());
  }

  /** Counts a server's reply, failed if it was an error line. */
  public void countReply(int server, boolean failed) {
    recorder.recordServerRequest(server, failed);
    if (failed && error == null) {
      error = ErrorKind.SERVER_ERROR;
    }
  }

  /** The reply as a buffer positioned at its start; valid until the next {@link #reset()}. */
  ByteBuffer view() {
    view.limit(length).position(0);
    return view;
  }
}
