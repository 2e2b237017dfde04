package dev.cachelab.middleware.loop;

import dev.cachelab.middleware.backend.ReplyFramer;
import dev.cachelab.middleware.backend.ReplyLimit;
import dev.cachelab.middleware.backend.ReplyTooLargeException;
import dev.cachelab.middleware.backend.SendBuffer;
import dev.cachelab.middleware.backend.WorkerBackends;
import dev.cachelab.middleware.net.SelectorTask;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.servers.BackendHealth;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

/**
 * An event loop's non-blocking connection to one server. Requests are appended to its direct send
 * buffer as the loop dispatches them and written together at the end of the loop's round ({@link
 * #flush}). Replies are read into a direct receive buffer and framed there ({@link ReplyFramer}),
 * in request order; each reply is handed to the client as a view of those bytes ({@link
 * #replyView}), with no copy on the way. Connects lazily, with a blocking connect bounded by the
 * connect timeout. Its event loop's thread only.
 */
final class LoopBackend implements SendBuffer, SelectorTask {
  // Both buffers are direct (socket I/O without the JDK's copy through a temporary one): 64 KiB,
  // grown only for a request or reply larger than that (a round's requests that do not fit are
  // written as the buffer fills), and given back after one past KEEP_BUFFER_BYTES.
  private static final int BASE_BUFFER_BYTES = 64 * 1024;
  private static final int KEEP_BUFFER_BYTES = 1 << 20;
  private static final long INITIAL_BACKOFF_NANOS = 1_000_000L;
  private static final long MAX_BACKOFF_NANOS = 200_000_000L;

  private final EventLoopDispatch loop;
  private final int server;
  private final InetSocketAddress address;
  private final BackendHealth health;
  private final Selector selector;
  private final ReplyLimit limit;
  // Bytes of the receive buffer beyond KEEP_BUFFER_BYTES, reserved from the limit's budget.
  private long reservedBytes;
  private final ReplyFramer framer = new ReplyFramer();
  private final ArrayDeque<Request> pending = new ArrayDeque<>();
  private final ByteBuffer idleProbe = ByteBuffer.allocate(1);
  private SocketChannel channel;
  private SelectionKey key;
  private ByteBuffer out = ByteBuffer.allocateDirect(BASE_BUFFER_BYTES);
  // Received bytes at [0, in.position()); the next reply starts at replyStart.
  private ByteBuffer in = ByteBuffer.allocateDirect(BASE_BUFFER_BYTES);
  private ByteBuffer view = in.duplicate();
  private int replyStart;
  private int replyEnd;
  private boolean lastReadFilled;
  private boolean writeFailed;
  private boolean backingOff;
  private long reconnectAtNanos;
  private long backoffNanos = INITIAL_BACKOFF_NANOS;
  boolean dirty; // the loop's: appended since the last flush

  LoopBackend(
      EventLoopDispatch loop,
      int server,
      InetSocketAddress address,
      BackendHealth health,
      Selector selector,
      ReplyLimit limit) {
    this.limit = limit;
    this.loop = loop;
    this.server = server;
    this.address = address;
    this.health = health;
    this.selector = selector;
  }

  int server() {
    return server;
  }

  BackendHealth health() {
    return health;
  }

  /**
   * Connected now, or connects (the host name resolved now); false if the server refuses (the
   * failure counted; no new attempt before a back-off, doubled at each failure, has passed).
   */
  boolean connected(long nowNanos, int connectTimeoutMs) {
    if (channel != null) {
      return true;
    }
    if (backingOff && nowNanos - reconnectAtNanos < 0) {
      return false;
    }
    SocketChannel opened = null;
    try {
      opened = SocketChannel.open();
      opened.setOption(StandardSocketOptions.TCP_NODELAY, true);
      opened
          .socket()
          .connect(
              new InetSocketAddress(address.getHostString(), address.getPort()), connectTimeoutMs);
      opened.configureBlocking(false);
      key = opened.register(selector, SelectionKey.OP_READ, this);
      channel = opened;
      in.clear();
      replyStart = 0;
      writeFailed = false;
      backingOff = false;
      backoffNanos = INITIAL_BACKOFF_NANOS;
      return true;
    } catch (IOException e) {
      if (opened != null) {
        try {
          opened.close();
        } catch (IOException ignored) {
          // failed anyway
        }
      }
      health.failed(nowNanos);
      backingOff = true;
      reconnectAtNanos = System.nanoTime() + backoffNanos;
      backoffNanos = Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
      return false;
    }
  }

  /** Appends the request as forwarded to the send buffer; its reply is awaited. */
  void send(Request request) {
    WorkerBackends.appendForward(this, request);
    request.dataForwarded(); // a data block lent by the client's read buffer is copied: let it go
    pending.addLast(request);
  }

  @Override
  public void append(byte[] bytes, int from, int length) {
    if (out.remaining() < length && out.position() > 0 && channel != null) {
      writeSome(); // the round's earlier requests go now
    }
    if (out.remaining() < length) {
      ByteBuffer grown =
          ByteBuffer.allocateDirect(Math.max(out.position() + length, out.capacity() * 2));
      out.flip();
      grown.put(out);
      out = grown;
    }
    out.put(bytes, from, length);
  }

  /** Writes what the send buffer holds; false if the connection failed. */
  boolean flush() {
    if (channel == null) {
      return pending.isEmpty();
    }
    if (writeFailed || !writeSome()) {
      return false;
    }
    boolean more = out.position() > 0;
    key.interestOps(more ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    if (!more && out.capacity() > KEEP_BUFFER_BYTES) {
      out = ByteBuffer.allocateDirect(BASE_BUFFER_BYTES);
    }
    return true;
  }

  /** Writes what the socket takes now; false if the connection failed (the loop fails it later). */
  private boolean writeSome() {
    try {
      out.flip();
      while (out.hasRemaining() && channel.write(out) > 0) {
        // what the socket takes; the rest when it is writable
      }
      out.compact();
      return true;
    } catch (IOException e) {
      out.clear();
      writeFailed = true; // reported by the next flush
      return false;
    }
  }

  boolean hasPending() {
    return !pending.isEmpty();
  }

  Request head() {
    return pending.peekFirst();
  }

  Request poll() {
    return pending.pollFirst();
  }

  /**
   * Reads once what the socket has (making room first); returns the bytes read, -1 at the end of
   * the stream.
   *
   * @throws ReplyTooLargeException if the head reply alone fills the largest buffer its {@link
   *     ReplyLimit} allows (or the budget has no room for a larger one)
   */
  int readSome() throws IOException {
    if (!in.hasRemaining()) {
      makeRoom();
    }
    int n = channel.read(in);
    lastReadFilled = n > 0 && !in.hasRemaining();
    return n;
  }

  /** Whether the last read filled the buffer (the socket may hold more). */
  boolean mayHaveMore() {
    return lastReadFilled;
  }

  /** Whether the head request's reply has arrived whole (then see {@link #replyView}). */
  boolean headReplyComplete() throws IOException {
    int end = framer.frame(in, replyStart, in.position(), ReplyFramer.Kind.of(pending.peekFirst()));
    if (end == ReplyFramer.INCOMPLETE) {
      return false;
    }
    replyEnd = end;
    return true;
  }

  /** The complete head reply's bytes, valid until the next read. */
  ByteBuffer replyView() {
    view.limit(replyEnd).position(replyStart);
    return view;
  }

  /** Values found by the complete head reply. */
  int hits() {
    return framer.hits();
  }

  boolean replyIsError() {
    return framer.error();
  }

  /** The head reply has been answered: the next one starts after it. */
  void consumeReply() {
    replyStart = replyEnd;
    if (replyStart == in.position()) {
      in.clear();
      replyStart = 0;
      if (in.capacity() > KEEP_BUFFER_BYTES) {
        replaceIn(ByteBuffer.allocateDirect(BASE_BUFFER_BYTES));
      }
    }
  }

  /** Whether bytes beyond the replies asked for were received (the stream is out of step). */
  boolean outOfStep() {
    return pending.isEmpty() && in.position() > replyStart;
  }

  // Moves a partial reply to the front, or grows the buffer if it fills it alone: doubled, up to
  // the limit's largest reply, the part past KEEP_BUFFER_BYTES reserved from the budget.
  private void makeRoom() throws ReplyTooLargeException {
    if (replyStart > 0) {
      in.limit(in.position()).position(replyStart);
      in.compact();
      replyStart = 0;
      return;
    }
    int max = limit.maxReplyBytes();
    if (in.capacity() >= max) {
      throw new ReplyTooLargeException(max);
    }
    int size = (int) Math.min(max, 2L * in.capacity());
    long reserve = Math.max(0, size - KEEP_BUFFER_BYTES) - reservedBytes;
    if (reserve > 0) {
      if (!limit.reserve(reserve)) {
        throw new ReplyTooLargeException(in.capacity());
      }
      reservedBytes += reserve;
    }
    ByteBuffer grown = ByteBuffer.allocateDirect(size);
    in.flip();
    grown.put(in);
    replaceIn(grown);
  }

  private void replaceIn(ByteBuffer buffer) {
    if (buffer.capacity() <= KEEP_BUFFER_BYTES && reservedBytes > 0) {
      limit.release(reservedBytes);
      reservedBytes = 0;
    }
    in = buffer;
    view = in.duplicate();
  }

  @Override
  public void onSelected(SelectionKey selected) {
    if (!selected.isValid() || selected != key) {
      return;
    }
    if (selected.isWritable() && !flush()) {
      loop.failed(this, false);
      return;
    }
    if (selected.isReadable()) {
      if (pending.isEmpty()) {
        closeIfIdleEnded();
      } else {
        loop.readReplies(this);
      }
    }
  }

  /**
   * Readable with nothing asked: the server closed (a restart) or sent something unasked; either
   * way the connection is dropped and the next request connects afresh.
   */
  private void closeIfIdleEnded() {
    try {
      idleProbe.clear();
      int n = channel.read(idleProbe);
      if (n == 0) {
        return;
      }
    } catch (IOException e) {
      // closed below
    }
    close();
  }

  /**
   * Closes the connection (the next request connects again); pending requests stay for the loop.
   */
  void close() {
    if (key != null) {
      key.cancel();
      key = null;
    }
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // closing anyway
      }
      channel = null;
    }
    out.clear();
    in.clear();
    replyStart = 0;
    if (in.capacity() > KEEP_BUFFER_BYTES) {
      replaceIn(ByteBuffer.allocateDirect(BASE_BUFFER_BYTES));
    }
  }
}
