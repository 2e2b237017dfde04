package dev.cachelab.middleware.reply;

import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.OpType;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.Resp3Converter;
import dev.cachelab.middleware.stats.ErrorKind;
import dev.cachelab.middleware.stats.ThreadRecorder;
import java.nio.ByteBuffer;

/**
 * Hands a served request's reply (built in a {@link ReplyBuilder}) to its client connection and
 * records the request's times. One per thread that serves requests (a worker, an event loop); that
 * thread only.
 */
public final class RequestFinisher {
  private final ThreadRecorder recorder;
  private final ReplyBuilder reply;
  private final Resp3Converter resp3 = new Resp3Converter();

  public RequestFinisher(ThreadRecorder recorder, ReplyBuilder reply) {
    this.recorder = recorder;
    this.reply = reply;
  }

  /** Completes the request with the reply built so far. */
  public void finish(Request request) {
    finish(request, reply.view());
  }

  /**
   * Completes the request with {@code view} as its reply (the bytes are written or copied before
   * this returns), counted with the hits and error the reply builder holds.
   */
  public void finish(Request request, ByteBuffer replyView) {
    OpType op = request.opType();
    int keys = request.family() == Command.Family.RETRIEVAL ? request.keyCount() : 0;
    long received = request.receivedNanos;
    long queueNanos = request.dequeuedNanos - request.enqueuedNanos;
    long stagingNanos = request.publishedNanos - request.enqueuedNanos;
    long serviceNanos = request.repliedNanos - request.sentNanos;
    long dequeued = request.dequeuedNanos;
    int hits = reply.hits();
    ErrorKind error = reply.error();
    ByteBuffer view = replyView;
    if (request.resp3Shape() != null) {
      view = resp3.convert(request, view); // a RESP3 client's reply (HELLO 3)
    }
    long written = request.connection.complete(request, view);
    recorder.recordRequest(
        op, written - received, queueNanos, stagingNanos, serviceNanos, keys, hits);
    if (error != null) {
      recorder.recordError(op, error);
    }
    recorder.addBusyNanos(written - dequeued);
  }
}
