package dev.cachelab.middleware.net;

import dev.cachelab.middleware.protocol.ReplySink;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RequestDecoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * One client socket: its read buffer and parser (net thread only), and the in-flight requests whose
 * replies must leave in request order (guarded by this object's monitor, shared by the net thread
 * and the workers that complete requests).
 *
 * <p>One forwarded request per connection is with the workers at a time, as memcached itself serves
 * a connection's requests one after another: a pipelined {@code get} never overtakes the {@code
 * set} (or {@code noreply} write) before it. Later forwarded requests wait in {@code waiting}; the
 * worker that completes one queues the next, so the net thread is not woken.
 *
 * <p>Ordering: the net thread appends each request to {@code inFlight} before it is queued. A
 * worker completing the head request writes its reply straight to the socket; a request completed
 * out of order keeps a copy of its reply until the requests before it are written. What the
 * non-blocking socket does not take goes to {@code pendingOut}, flushed when the selector reports
 * the socket writable.
 */
public final class ClientConnection implements ReplySink {
  private static final int POOL_LIMIT = 64;

  private final SocketChannel channel;
  private final NetThread net;
  private SelectionKey key;

  // Net thread only.
  final RequestDecoder parser;
  byte[] readBuf = new byte[16 * 1024];
  ByteBuffer readView = ByteBuffer.wrap(readBuf);
  int parseStart;
  int readEnd;
  Request current;
  boolean inputClosed;
  boolean paused;

  // Guarded by this.
  private final ArrayDeque<Request> inFlight = new ArrayDeque<>();
  private final ArrayDeque<Request> pool = new ArrayDeque<>();
  private final ArrayDeque<Request> waiting = new ArrayDeque<>();
  private boolean forwardedBusy;
  private ByteBuffer pendingOut = ByteBuffer.allocate(0);
  private boolean closeWhenDrained;
  private boolean closed;

  ClientConnection(SocketChannel channel, NetThread net, RequestDecoder parser) {
    this.channel = channel;
    this.net = net;
    this.parser = parser;
  }

  void attach(SelectionKey key) {
    this.key = key;
  }

  SocketChannel channel() {
    return channel;
  }

  // ---- net thread -------------------------------------------------------------------------------

  /** Reads once from the socket; grows the buffer for a request larger than it. */
  int read() throws IOException {
    if (readEnd == readBuf.length) {
      if (parseStart > 0) {
        compact();
      } else {
        readBuf = Arrays.copyOf(readBuf, Math.min(readBuf.length * 2, parser.maxRequestBytes()));
        readView = ByteBuffer.wrap(readBuf);
      }
    }
    readView.limit(readBuf.length).position(readEnd);
    int n = channel.read(readView);
    if (n > 0) {
      readEnd += n;
    }
    return n;
  }

  /** Moves unparsed bytes to the front of the buffer. */
  void compact() {
    if (parseStart == readEnd) {
      parseStart = 0;
      readEnd = 0;
    } else if (parseStart > 0) {
      System.arraycopy(readBuf, parseStart, readBuf, 0, readEnd - parseStart);
      readEnd -= parseStart;
      parseStart = 0;
    }
  }

  /** A reset request from the pool, or a new one. */
  Request acquire() {
    Request request;
    synchronized (this) {
      request = pool.pollFirst();
    }
    if (request == null) {
      request = new Request();
    }
    request.connection = this;
    return request;
  }

  /** Appends a request to the ordered in-flight list; call before completing it here. */
  synchronized void registerInFlight(Request request) {
    inFlight.addLast(request);
  }

  /**
   * Appends a forwarded request to the in-flight list.
   *
   * @return true if the caller must queue it now; false if it waits for the connection's previous
   *     forwarded request (its completion will queue it)
   */
  synchronized boolean admitForwarded(Request request) {
    inFlight.addLast(request);
    if (forwardedBusy) {
      waiting.addLast(request);
      return false;
    }
    forwardedBusy = true;
    return true;
  }

  /** Stops reading and closes once every in-flight reply is written (quit, lost framing). */
  void closeAfterReplies() {
    inputClosed = true;
    synchronized (this) {
      closeWhenDrained = true;
      if (!closed) {
        key.interestOpsAnd(~SelectionKey.OP_READ);
      }
      closeIfDrained();
    }
  }

  /** Selector reported the socket writable. */
  synchronized void onWritable() {
    flushPending();
    closeIfDrained();
  }

  void setReading(boolean reading) {
    synchronized (this) {
      if (closed) {
        return;
      }
      if (reading) {
        key.interestOpsOr(SelectionKey.OP_READ);
      } else {
        key.interestOpsAnd(~SelectionKey.OP_READ);
      }
    }
  }

  synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    inputClosed = true;
    pendingOut = ByteBuffer.allocate(0);
    for (Request r : waiting) {
      inFlight.remove(r);
    }
    waiting.clear();
    // In-flight requests are still with workers; they are dropped when they complete.
    if (key != null) {
      key.cancel();
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // already failing
    }
    net.connectionClosed();
  }

  synchronized boolean isClosed() {
    return closed;
  }

  // ---- any thread -------------------------------------------------------------------------------

  @Override
  public long complete(Request request, ByteBuffer reply) {
    synchronized (this) {
      boolean forwarded = request.status() == Request.Status.FORWARD;
      request.completed = true;
      if (closed) {
        dropCompletedHeads();
        return System.nanoTime();
      }
      if (forwarded) {
        Request next = waiting.pollFirst();
        if (next == null) {
          forwardedBusy = false;
        } else {
          net.enqueueWaiting(next);
        }
      }
      if (inFlight.peekFirst() == request && !pendingOut.hasRemaining()) {
        inFlight.pollFirst();
        writeDirect(reply);
        recycle(request);
      } else {
        keepReply(request, reply);
      }
      writeCompletedHeads();
      closeIfDrained();
      return System.nanoTime();
    }
  }

  private void writeDirect(ByteBuffer reply) {
    if (!reply.hasRemaining()) {
      return;
    }
    try {
      channel.write(reply);
    } catch (IOException e) {
      closeLater();
      return;
    }
    if (reply.hasRemaining()) {
      appendPending(reply.array(), reply.arrayOffset() + reply.position(), reply.remaining());
      flushPending();
    }
  }

  private void keepReply(Request request, ByteBuffer reply) {
    int length = reply.remaining();
    if (request.pendingReply.length < length) {
      request.pendingReply = new byte[Math.max(length, 64)];
    }
    reply.get(request.pendingReply, 0, length);
    request.pendingReplyLength = length;
  }

  private void writeCompletedHeads() {
    boolean appended = false;
    Request head;
    while ((head = inFlight.peekFirst()) != null && head.completed) {
      inFlight.pollFirst();
      appendPending(head.pendingReply, 0, head.pendingReplyLength);
      recycle(head);
      appended = true;
    }
    if (appended) {
      flushPending();
    }
  }

  private void dropCompletedHeads() {
    Request head;
    while ((head = inFlight.peekFirst()) != null && head.completed) {
      inFlight.pollFirst();
    }
  }

  private void appendPending(byte[] bytes, int from, int length) {
    if (length == 0) {
      return;
    }
    if (pendingOut.capacity() - pendingOut.limit() < length) {
      ByteBuffer bigger =
          ByteBuffer.allocate(Math.max(pendingOut.remaining() + length, pendingOut.capacity() * 2));
      bigger.put(pendingOut);
      bigger.flip();
      pendingOut = bigger;
    }
    int position = pendingOut.position();
    pendingOut.position(pendingOut.limit()).limit(pendingOut.limit() + length);
    pendingOut.put(bytes, from, length);
    pendingOut.position(position);
  }

  /** Writes what the socket takes; asks the selector for writability if bytes remain. */
  private void flushPending() {
    if (closed) {
      return;
    }
    if (pendingOut.hasRemaining()) {
      try {
        channel.write(pendingOut);
      } catch (IOException e) {
        closeLater();
        return;
      }
    }
    if (pendingOut.hasRemaining()) {
      key.interestOpsOr(SelectionKey.OP_WRITE);
      net.wakeup();
    } else {
      pendingOut.clear().limit(0);
      if ((key.interestOps() & SelectionKey.OP_WRITE) != 0) {
        key.interestOpsAnd(~SelectionKey.OP_WRITE);
      }
    }
  }

  private void closeIfDrained() {
    if (closeWhenDrained && !closed && inFlight.isEmpty() && !pendingOut.hasRemaining()) {
      close();
    }
  }

  private void closeLater() {
    // A write failed: the client is gone. Close now; the net thread sees the cancelled key.
    close();
  }

  private void recycle(Request request) {
    request.connection = null;
    if (pool.size() < POOL_LIMIT) {
      pool.addLast(request);
    }
  }
}
