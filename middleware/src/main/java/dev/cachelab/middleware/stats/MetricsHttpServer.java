package dev.cachelab.middleware.stats;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;

/**
 * The HTTP/1.1 server of {@code GET /metrics}: one thread of its own ({@code metrics-http}) and one
 * selector, so that a slow client holds no thread. A connection must send its request line and
 * headers within {@link #HEADER_DEADLINE_NANOS} of its accept (slowloris: a byte a second holds
 * nothing up, and is closed at the deadline) and take its reply within {@link
 * #REPLY_DEADLINE_NANOS}; at most {@link #MAX_CONNECTIONS} are open, and a new one past that closes
 * the oldest still sending its headers, so a scraper always gets in. Each reply closes its
 * connection ({@code Connection: close}).
 *
 * <p>{@link #start} and {@link #close} are called by the main thread; the body supplier is called
 * on the server's thread, once per scrape.
 */
final class MetricsHttpServer implements AutoCloseable {
  /** Time from accept to the end of the request's headers. */
  static final long HEADER_DEADLINE_NANOS = 2_000_000_000L;

  /** Time from the end of the headers to the last byte of the reply taken by the client. */
  static final long REPLY_DEADLINE_NANOS = 10_000_000_000L;

  static final int MAX_CONNECTIONS = 32;

  /** Largest request line plus headers read. */
  static final int MAX_REQUEST_BYTES = 8192;

  private static final long SELECT_MILLIS = 100;
  private static final long ACCEPT_PAUSE_NANOS = 100_000_000L;
  private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final ServerSocketChannel listener;
  private final Selector selector;
  private final Supplier<byte[]> body;
  private final List<Connection> connections = new ArrayList<>();
  private final Thread thread;
  private volatile boolean running = true;
  private boolean acceptPaused;
  private long acceptResumeNanos;

  private MetricsHttpServer(
      ServerSocketChannel listener, Selector selector, Supplier<byte[]> body) {
    this.listener = listener;
    this.selector = selector;
    this.body = body;
    this.thread = new Thread(this::run, "metrics-http");
    this.thread.setDaemon(true);
  }

  /**
   * Binds {@code address} and starts serving {@code GET /metrics} (also {@code GET /}) with the
   * bytes {@code body} returns.
   *
   * @throws java.net.BindException if the port is in use
   */
  static MetricsHttpServer start(InetSocketAddress address, Supplier<byte[]> body)
      throws IOException {
    ServerSocketChannel listener = ServerSocketChannel.open();
    Selector selector = null;
    try {
      listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      listener.bind(address, 64);
      listener.configureBlocking(false);
      selector = Selector.open();
      listener.register(selector, SelectionKey.OP_ACCEPT);
    } catch (IOException e) {
      listener.close();
      if (selector != null) {
        selector.close();
      }
      throw e;
    }
    MetricsHttpServer server = new MetricsHttpServer(listener, selector, body);
    server.thread.start();
    return server;
  }

  int port() {
    return listener.socket().getLocalPort();
  }

  @Override
  public void close() {
    running = false;
    selector.wakeup();
    try {
      thread.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    try {
      while (running) {
        selector.select(SELECT_MILLIS);
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
          SelectionKey key = keys.next();
          keys.remove();
          if (key.attachment() instanceof Connection c) {
            c.onSelected();
          } else if (key.isValid() && key.isAcceptable()) {
            accept(key);
          }
        }
        long nowNanos = System.nanoTime();
        expire(nowNanos);
        if (acceptPaused && nowNanos - acceptResumeNanos > 0) {
          acceptPaused = false;
          listener.keyFor(selector).interestOps(SelectionKey.OP_ACCEPT);
        }
      }
    } catch (IOException e) {
      System.err.println("cachelab middleware: /metrics stopped: " + e);
    } finally {
      for (Connection c : new ArrayList<>(connections)) {
        c.close();
      }
      closeQuietly(listener);
      try {
        selector.close();
      } catch (IOException ignored) {
        // stopping anyway
      }
    }
  }

  private void accept(SelectionKey key) {
    SocketChannel channel;
    while ((channel = acceptOrPause(key)) != null) {
      if (connections.size() >= MAX_CONNECTIONS && !closeOldestReading()) {
        closeQuietly(channel);
        continue;
      }
      try {
        channel.configureBlocking(false);
        Connection c = new Connection(channel, System.nanoTime() + HEADER_DEADLINE_NANOS);
        c.key = channel.register(selector, SelectionKey.OP_READ, c);
        connections.add(c);
      } catch (IOException e) {
        closeQuietly(channel);
      }
    }
  }

  /**
   * The next pending connection, or null. A failed accept (out of file descriptors) pauses
   * accepting for {@link #ACCEPT_PAUSE_NANOS} rather than retrying at once on a socket that stays
   * ready.
   */
  private SocketChannel acceptOrPause(SelectionKey key) {
    try {
      return listener.accept();
    } catch (IOException e) {
      acceptPaused = true;
      acceptResumeNanos = System.nanoTime() + ACCEPT_PAUSE_NANOS;
      key.interestOps(0);
      return null;
    }
  }

  /** Closes the oldest connection still sending its request; false if there is none. */
  private boolean closeOldestReading() {
    for (Connection c : connections) {
      if (c.reply == null) {
        c.close();
        return true;
      }
    }
    return false;
  }

  private void expire(long nowNanos) {
    for (int i = connections.size() - 1; i >= 0; i--) {
      Connection c = connections.get(i);
      if (nowNanos - c.deadlineNanos > 0) {
        c.close();
      }
    }
  }

  /** One client connection: reading its request, then writing its reply. */
  private final class Connection {
    private final SocketChannel channel;
    private final ByteBuffer request = ByteBuffer.allocate(MAX_REQUEST_BYTES);
    private SelectionKey key;
    private ByteBuffer reply;
    private long deadlineNanos;

    Connection(SocketChannel channel, long deadlineNanos) {
      this.channel = channel;
      this.deadlineNanos = deadlineNanos;
    }

    void onSelected() {
      try {
        if (!key.isValid()) {
          close();
        } else if (reply == null && key.isReadable()) {
          read();
        } else if (reply != null && key.isWritable()) {
          write();
        }
      } catch (IOException | RuntimeException e) {
        close(); // this connection only
      }
    }

    private void read() throws IOException {
      int n = channel.read(request);
      if (n < 0) {
        close();
        return;
      }
      int end = headersEnd();
      if (end < 0) {
        if (!request.hasRemaining()) {
          respond("431 Request Header Fields Too Large", new byte[0]);
        }
        return;
      }
      String line = requestLine();
      String[] parts = line.split(" ");
      if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
        respond("400 Bad Request", new byte[0]);
      } else if (!parts[0].equals("GET")) {
        respond("405 Method Not Allowed", new byte[0]);
      } else {
        String path = parts[1];
        int query = path.indexOf('?');
        path = query < 0 ? path : path.substring(0, query);
        if (path.equals("/metrics") || path.equals("/")) {
          respond("200 OK", body.get());
        } else {
          respond("404 Not Found", new byte[0]);
        }
      }
    }

    /** Offset of the line end before the blank line ending the headers, or -1 if not yet in. */
    private int headersEnd() {
      byte[] b = request.array();
      int length = request.position();
      for (int i = 0; i + 1 < length; i++) {
        boolean blankLine =
            b[i + 1] == '\n' || (b[i + 1] == '\r' && i + 2 < length && b[i + 2] == '\n');
        if (b[i] == '\n' && blankLine) {
          return i;
        }
      }
      return -1;
    }

    private String requestLine() {
      byte[] b = request.array();
      int end = 0;
      while (end < request.position() && b[end] != '\r' && b[end] != '\n') {
        end++;
      }
      return new String(b, 0, end, StandardCharsets.ISO_8859_1);
    }

    private void respond(String status, byte[] content) throws IOException {
      String head =
          "HTTP/1.1 "
              + status
              + "\r\nContent-Type: "
              + CONTENT_TYPE
              + "\r\nContent-Length: "
              + content.length
              + "\r\nConnection: close\r\n\r\n";
      byte[] headBytes = head.getBytes(StandardCharsets.ISO_8859_1);
      reply = ByteBuffer.allocate(headBytes.length + content.length);
      reply.put(headBytes).put(content).flip();
      deadlineNanos = System.nanoTime() + REPLY_DEADLINE_NANOS;
      key.interestOps(SelectionKey.OP_WRITE);
      write();
    }

    private void write() throws IOException {
      channel.write(reply);
      if (!reply.hasRemaining()) {
        close();
      }
    }

    void close() {
      connections.remove(this);
      if (key != null) {
        key.cancel();
      }
      closeQuietly(channel);
    }
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}
