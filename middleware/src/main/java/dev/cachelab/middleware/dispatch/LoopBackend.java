package dev.cachelab.middleware.dispatch;

import dev.cachelab.middleware.backend.BackendHealth;
import dev.cachelab.middleware.backend.ReplyReader;
import dev.cachelab.middleware.backend.SendBuffer;
import dev.cachelab.middleware.net.DirectScratch;
import dev.cachelab.middleware.net.SelectorTask;
import dev.cachelab.middleware.protocol.Request;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

/**
 * An event loop's non-blocking connection to one server. Requests are appended to its send buffer
 * as the loop dispatches them and written together at the end of the loop's round ({@link #flush});
 * their replies are read as they arrive, in request order, by {@link ReplyReader} over a stream
 * that signals "no more bytes yet" instead of blocking ({@link #readReply}). Connects lazily, with
 * a blocking connect bounded by the connect timeout. Its event loop's thread only.
 */
final class LoopBackend implements SendBuffer, SelectorTask {
  // The send buffer is direct (written to the socket with no further copy): 64 KiB, grown for a
  // larger request and given back after it.
  private static final int BASE_SEND_BYTES = 64 * 1024;
  private static final long INITIAL_BACKOFF_NANOS = 1_000_000L;
  private static final long MAX_BACKOFF_NANOS = 200_000_000L;

  /** Thrown by the stream when the socket has no more bytes now; the reply is read again later. */
  private static final class NoBytesYet extends IOException {
    NoBytesYet() {
      super("no more bytes from the server yet");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this; // thrown on every partial reply: no stack trace
    }
  }

  private static final NoBytesYet NO_BYTES_YET = new NoBytesYet();

  private final EventLoopDispatch loop;
  private final int server;
  private final InetSocketAddress address;
  private final BackendHealth health;
  private final Selector selector;
  private final DirectScratch scratch;
  private final ReplyReader reader = new ReplyReader();
  private final ArrayDeque<Request> pending = new ArrayDeque<>();
  private final ByteBuffer idleProbe = ByteBuffer.allocate(1);
  private SocketChannel channel;
  private SelectionKey key;
  private ByteBuffer out = ByteBuffer.allocateDirect(BASE_SEND_BYTES);
  private ChannelInput input;
  private byte[] replyBytes;
  private ByteBuffer replyView;
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
      DirectScratch scratch) {
    this.loop = loop;
    this.server = server;
    this.address = address;
    this.health = health;
    this.selector = selector;
    this.scratch = scratch;
  }

  int server() {
    return server;
  }

  BackendHealth health() {
    return health;
  }

  ReplyReader reader() {
    return reader;
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
      input = new ChannelInput(opened, scratch);
      reader.reset(input);
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
    pending.addLast(request);
  }

  @Override
  public void append(byte[] bytes, int from, int length) {
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
    try {
      out.flip();
      while (out.hasRemaining() && channel.write(out) > 0) {
        // what the socket takes; the rest when it is writable
      }
      out.compact();
    } catch (IOException e) {
      out.clear();
      return false;
    }
    boolean more = out.position() > 0;
    key.interestOps(more ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    if (!more && out.capacity() > BASE_SEND_BYTES) {
      out = ByteBuffer.allocateDirect(BASE_SEND_BYTES);
    }
    return true;
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
   * Reads the reply to {@code request} (the head): true when it is complete, false when its bytes
   * have not all arrived yet.
   */
  boolean readReply(Request request) throws IOException {
    try {
      reader.readReplyTo(request);
      return true;
    } catch (NoBytesYet e) {
      return false;
    }
  }

  /** The last reply read, as a buffer over the reader's own bytes (valid until the next read). */
  ByteBuffer replyView() {
    byte[] bytes = reader.buffer();
    if (bytes != replyBytes) {
      replyBytes = bytes;
      replyView = ByteBuffer.wrap(bytes);
    }
    replyView.limit(reader.replyLength()).position(0);
    return replyView;
  }

  /** Values found by the last reply to the read {@code request}. */
  int hits(Request request) {
    return request.respCommand() != null ? reader.hitCount() : reader.valueCount();
  }

  /** Whether the server sent bytes beyond the replies asked for. */
  boolean outOfStep() {
    return pending.isEmpty() && reader.hasUnreadBytes();
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
      input.drained = false;
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
  }

  /**
   * A stream over the non-blocking socket: "no bytes yet" is thrown, not waited for. After a read
   * that did not fill what was asked the socket is taken as drained until the selector reports it
   * readable again, so a partial reply costs no read that finds nothing.
   */
  private static final class ChannelInput extends InputStream {
    private final SocketChannel channel;
    private final DirectScratch scratch;
    boolean drained;

    ChannelInput(SocketChannel channel, DirectScratch scratch) {
      this.channel = channel;
      this.scratch = scratch;
    }

    @Override
    public int read() {
      throw new UnsupportedOperationException("read(byte[], int, int) only");
    }

    @Override
    public int read(byte[] bytes, int from, int length) throws IOException {
      if (drained) {
        throw NO_BYTES_YET;
      }
      int n = scratch.read(channel, bytes, from, length);
      if (n == 0) {
        drained = true;
        throw NO_BYTES_YET;
      }
      drained = n < length;
      return n;
    }
  }
}
