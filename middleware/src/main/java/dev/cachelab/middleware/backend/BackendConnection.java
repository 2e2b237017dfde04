package dev.cachelab.middleware.backend;

import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.servers.BackendHealth;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One worker's blocking connection to one memcached (or redis) server: the socket's life cycle, the
 * request's deadline, a send buffer, and the {@link ReplyReader} that reads its replies. Owned and
 * used by one worker thread; the {@link Watchdog} thread may only {@link #abortIfExpired} it.
 *
 * <p>Timeouts: the worker arms a deadline before it writes a request and disarms it after the
 * reply; a blocking read past the deadline is ended by the watchdog closing the socket, which keeps
 * the fast path at one blocking read per reply (no timed poll). A read that another server could
 * answer may be cut short earlier ({@link #hedge}): after a delay derived from this connection's
 * recent latency, so that a stopped server costs a read that delay, not the whole timeout. The
 * watchdog also ends at once every request waiting on a server that was ejected meanwhile.
 *
 * <p>After a failure the connection is closed and reconnected on the next request; only failed
 * connection attempts back off (exponentially). A connection opened before the request that fails
 * before the server sent a byte of the reply (the server was restarted, or closed an idle
 * connection) is stale, not a sign of a failing server: {@link #reconnectIfStale} reconnects it for
 * one retry, and such a failure does not count towards ejection.
 *
 * <p>Health: failures and complete replies are reported to the server's shared {@link
 * BackendHealth}; while the server is ejected the connection refuses requests (the {@link Prober}
 * probes it on a connection of its own), and a request takes one of the server's waiter slots from
 * {@link #ensureConnected} until its reply or failure.
 */
public final class BackendConnection implements SendBuffer {
  private static final long INITIAL_BACKOFF_NANOS = 10_000_000L;
  private static final long MAX_BACKOFF_NANOS = 1_000_000_000L;
  private static final long DISARMED = 0;
  private static final long EXPIRED = -1;

  /** A write on a connection idle this long first checks that the server did not close it. */
  static final long IDLE_CHECK_NANOS = 1_000_000L;

  /** Shortest hedge delay: scheduling delays on a loaded machine must not look like a failure. */
  static final long MIN_HEDGE_NANOS = 100_000_000L;

  /** The hedge delay is this many times the connection's recent mean latency (at least the min). */
  static final int HEDGE_LATENCY_FACTOR = 8;

  private int serverIndex;
  private final String host;
  private final int port;
  private final BackendHealth health;
  private final ReplyReader reader;
  // The last reply was too large and the connection closed in its middle: the failures of the
  // requests read after it in a batch are not the server's.
  private boolean abandoned;
  // The client connection (identity hash) of the request armed now, whose timeout this would be.
  private int clientId;
  private boolean holdsWaiterSlot;
  private final AtomicLong deadlineNanos = new AtomicLong(DISARMED);
  private volatile boolean timedOut;
  // The armed deadline is a hedge (earlier than the request's own); the expiry cut the request
  // short of its own deadline (a hedge, or the server was ejected).
  private volatile boolean hedging;
  private volatile boolean cutShort;
  // The worker waits on another server's connection before it reads this one's reply: the watchdog
  // leaves it open (the reply may be in already) until the worker comes back to it.
  private volatile boolean setAside;

  private volatile Socket socket;
  private SocketChannel channel;
  private final ByteBuffer idleProbe = ByteBuffer.allocate(1);
  // When the connection's last reply was read (or it was opened): idle since.
  private long idleSinceNanos;
  private OutputStream out;
  private long reconnectAtNanos;
  private long backoffNanos = INITIAL_BACKOFF_NANOS;
  // Whether the socket was open before the armed request (a failure before any reply byte is then
  // stale: the server closed it meanwhile).
  private boolean reused;
  private long armedAtNanos;
  private long requestDeadlineNanos;
  private long bytesReadAtArm;
  private long meanLatencyNanos;

  /** Send buffer for requests the worker rewrites (noreply stripped, split multi-gets). */
  private byte[] sendBuf = new byte[1024];

  private int sendLength;

  public BackendConnection(int serverIndex, InetSocketAddress address, BackendHealth health) {
    this(serverIndex, address, health, ReplyLimit.NONE);
  }

  /**
   * @param limit how much heap one reply may take (see {@link ReplyLimit})
   */
  public BackendConnection(
      int serverIndex, InetSocketAddress address, BackendHealth health, ReplyLimit limit) {
    this.reader = new ReplyReader(limit);
    this.serverIndex = serverIndex;
    this.host = address.getHostString();
    this.port = address.getPort();
    this.health = health;
  }

  /** The server's position in the server list the worker serves now. */
  public int serverIndex() {
    return serverIndex;
  }

  /** The worker turned to a server list where the server is at {@code index}. */
  public void serverIndex(int index) {
    serverIndex = index;
  }

  /** Whether the server is in rotation (not ejected). */
  public boolean inRotation() {
    return health.inRotation();
  }

  /**
   * Whether the connection is usable now, connecting if it is down and its backoff has passed.
   * Never throws: a failed attempt doubles the backoff. Arm a deadline first: the connect itself is
   * untimed (a timed connect would leave the socket in non-blocking mode, turning every later read
   * that finds no data into read, poll, read) and the watchdog ends it by closing the socket.
   */
  public boolean ensureConnected(long nowNanos) {
    if (!health.inRotation()) {
      return false;
    }
    if (!holdsWaiterSlot && health.suspect()) {
      if (!health.tryEnter()) {
        return false;
      }
      holdsWaiterSlot = true;
    }
    if (out != null) {
      return true;
    }
    if (nowNanos - reconnectAtNanos < 0) {
      return false;
    }
    if (!connect()) {
      health.failed(System.nanoTime());
      return false;
    }
    return true;
  }

  // A blocking socket channel, used through its socket's streams; its channel also lets a write
  // check, without blocking, whether the server closed the connection while it was idle.
  private boolean connect() {
    SocketChannel ch;
    try {
      ch = SocketChannel.open();
    } catch (IOException e) {
      reconnectAtNanos = System.nanoTime() + backoffNanos;
      backoffNanos = Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
      return false;
    }
    Socket s = ch.socket();
    socket = s; // visible to the watchdog while connecting
    try {
      s.setTcpNoDelay(true);
      s.connect(new InetSocketAddress(host, port));
      reader.reset(s.getInputStream());
      out = s.getOutputStream();
      channel = ch;
      reused = false;
      idleSinceNanos = System.nanoTime();
      backoffNanos = INITIAL_BACKOFF_NANOS;
      return true;
    } catch (IOException e) {
      socket = null;
      closeQuietly(s);
      reconnectAtNanos = System.nanoTime() + backoffNanos;
      backoffNanos = Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
      return false;
    }
  }

  private void leaveWaiters() {
    if (holdsWaiterSlot) {
      holdsWaiterSlot = false;
      health.exit();
    }
  }

  /** Disarms the timeout without judging the connection (nothing was sent). */
  public void disarmQuietly() {
    deadlineNanos.set(DISARMED);
    timedOut = false;
    setAside = false;
    leaveWaiters();
  }

  /**
   * The request armed next is for client connection {@code client} (an identity hash; 0 for none):
   * a timeout counts once per client (see {@link BackendHealth#timedOut}).
   */
  public void forClient(int client) {
    clientId = client;
  }

  /** Arms the timeout at {@code deadline}; call before sending a request. */
  public void arm(long deadline, long nowNanos) {
    leaveWaiters();
    abandoned = false;
    timedOut = false;
    cutShort = false;
    hedging = false;
    setAside = false;
    armedAtNanos = nowNanos;
    reused = out != null;
    requestDeadlineNanos = deadline;
    bytesReadAtArm = reader.bytesRead();
    deadlineNanos.set(deadline == DISARMED || deadline == EXPIRED ? 1 : deadline);
  }

  /**
   * Cuts the armed request short at its hedge delay (see {@link #hedgeDelayNanos}), if that comes
   * before its deadline: a read that another server can answer.
   */
  public void hedge() {
    long hedgeAt = armedAtNanos + hedgeDelayNanos();
    if (hedgeAt - requestDeadlineNanos < 0 && hedgeAt != DISARMED && hedgeAt != EXPIRED) {
      hedging = true;
      deadlineNanos.set(hedgeAt);
    }
  }

  /**
   * How long a read may wait before it is cut short for another server: {@link
   * #HEDGE_LATENCY_FACTOR} times this connection's recent mean latency, at least {@link
   * #MIN_HEDGE_NANOS}.
   */
  long hedgeDelayNanos() {
    return Math.max(MIN_HEDGE_NANOS, HEDGE_LATENCY_FACTOR * meanLatencyNanos);
  }

  /**
   * Disarms the timeout after a complete reply. If the watchdog fired meanwhile, the socket is
   * closed and the connection is marked down.
   */
  public void disarm() {
    long deadline = deadlineNanos.get();
    if (deadline == EXPIRED || !deadlineNanos.compareAndSet(deadline, DISARMED) || timedOut) {
      markDown();
      return;
    }
    leaveWaiters();
    long nowNanos = System.nanoTime();
    idleSinceNanos = nowNanos;
    long latency = nowNanos - armedAtNanos;
    meanLatencyNanos += (latency - meanLatencyNanos) >> 3; // mean over about the last 8
    health.succeeded(nowNanos);
  }

  /**
   * The worker turns to other servers' connections (a request sent to several servers) before it
   * reads this one's reply: until {@link #resume}, the watchdog does not end it (unless the server
   * is ejected). Without this, a stopped server's timeout closed the other servers' connections
   * too, whose replies were in but not yet read (one deadline for all), and counted failures
   * against healthy servers.
   */
  public void setAside() {
    setAside = true;
  }

  /**
   * The worker is back to read this connection's reply. If less than {@code graceNanos} of its
   * deadline is left (it was spent waiting on another server), the deadline becomes now plus {@code
   * graceNanos}: a reply already in is read, a silent server still times out.
   */
  public void resume(long graceNanos) {
    if (!setAside) {
      return;
    }
    long nowNanos = System.nanoTime();
    long deadline = deadlineNanos.get();
    if (deadline != DISARMED && deadline != EXPIRED && nowNanos + graceNanos - deadline > 0) {
      deadlineNanos.compareAndSet(deadline, nowNanos + graceNanos);
    }
    setAside = false;
  }

  /**
   * Watchdog thread: closes the socket if the armed deadline has passed and it is not set aside, or
   * at once if the server has been ejected. A hedge deadline is not enforced while reply bytes wait
   * in the socket (the reply is in; the worker was slow to read it).
   */
  void abortIfExpired(long nowNanos) {
    long deadline = deadlineNanos.get();
    if (deadline == DISARMED || deadline == EXPIRED) {
      return;
    }
    boolean ejected = !health.inRotation();
    if (!ejected) {
      if (setAside || nowNanos - deadline < 0) {
        return;
      }
      if (hedging && bytesWaiting()) {
        return;
      }
    }
    if (deadlineNanos.compareAndSet(deadline, EXPIRED)) {
      cutShort = ejected || hedging;
      timedOut = true;
      Socket s = socket;
      if (s != null) {
        closeQuietly(s);
      }
    }
  }

  private boolean bytesWaiting() {
    Socket s = socket;
    try {
      return s != null && s.getInputStream().available() > 0;
    } catch (IOException e) {
      return false;
    }
  }

  /** Whether the last failure was the watchdog's timeout. */
  public boolean timedOut() {
    return timedOut;
  }

  /**
   * Whether the last timeout came before the request's own deadline (a hedge, or the server was
   * ejected): the request may still be served by another server.
   */
  public boolean cutShort() {
    return cutShort;
  }

  /**
   * After a failed send or read: if the connection was stale (it had served requests, and the
   * server sent no byte of this reply, and it did not time out), reconnects at once for one retry
   * of the request (the deadline stays armed) and returns true; else false, and the caller marks it
   * down. A stale failure is not counted against the server; a failed reconnect is.
   */
  public boolean reconnectIfStale() {
    if (!stale()) {
      return false;
    }
    closeSocket();
    if (connect()) {
      bytesReadAtArm = reader.bytesRead();
      return true;
    }
    deadlineNanos.set(DISARMED);
    setAside = false;
    leaveWaiters();
    health.failed(System.nanoTime());
    return false;
  }

  private boolean stale() {
    return !timedOut && reused && reader.bytesRead() == bytesReadAtArm && socket != null;
  }

  /**
   * Closes the connection after a failure and reports it to the server's health (unless it was
   * stale, or a hedge cut short a server that answered other requests meanwhile: slow, not down);
   * the next request reconnects at once (a failed reconnect backs off).
   */
  public void markDown() {
    boolean counts =
        !abandoned && !stale() && !(cutShort && hedging && health.answeredSince(armedAtNanos));
    if (cutShort && hedging) {
      health.hedged();
    }
    deadlineNanos.set(DISARMED);
    setAside = false;
    leaveWaiters();
    closeSocket();
    if (counts && timedOut) {
      health.timedOut(System.nanoTime(), clientId);
    } else if (counts) {
      health.failed(System.nanoTime());
    }
  }

  private void closeSocket() {
    if (socket != null) {
      closeQuietly(socket);
      socket = null;
      channel = null;
      out = null;
    }
  }

  /**
   * Before a write (which is never sent twice, see {@link #reconnectIfStale}) on a connection idle
   * for at least {@link #IDLE_CHECK_NANOS}: if the server closed it meanwhile (it was restarted, or
   * closed an idle connection), found by a read that does not block, it is reopened now, so that
   * the write goes on a live connection instead of failing with "may have been applied". Not the
   * server's failure; a failed reopen is (the send then fails). Call with the deadline armed.
   */
  public void reopenIfClosedWhileIdle(long nowNanos) {
    SocketChannel ch = channel;
    if (ch == null || nowNanos - idleSinceNanos < IDLE_CHECK_NANOS) {
      return;
    }
    boolean closed;
    try {
      ch.configureBlocking(false);
      idleProbe.clear();
      closed = ch.read(idleProbe) != 0; // -1: closed; a byte: sent unasked, out of step
      ch.configureBlocking(true);
    } catch (IOException | RuntimeException e) {
      closed = true;
    }
    if (!closed) {
      return;
    }
    closeSocket();
    if (connect()) {
      bytesReadAtArm = reader.bytesRead();
    } else {
      health.failed(System.nanoTime());
    }
  }

  /** Closes the socket for good (shutdown). */
  public void close() {
    leaveWaiters();
    closeSocket();
  }

  // ---- sending ----------------------------------------------------------------------------------

  /** Writes {@code bytes[from, from + length)} to the server. */
  public void send(byte[] bytes, int from, int length) throws IOException {
    if (reader.hasUnreadBytes()) {
      // Bytes beyond the last reply before a new request (every reply of the requests sent so
      // far has been read): the server sent something unasked, the stream is out of step.
      throw new IOException("unexpected bytes from server");
    }
    if (out == null) {
      throw new IOException("not connected");
    }
    out.write(bytes, from, length);
  }

  /** Starts composing a request in the send buffer. */
  public void beginCompose() {
    sendLength = 0;
  }

  @Override
  public void append(byte[] bytes, int from, int length) {
    if (sendLength + length > sendBuf.length) {
      sendBuf = Arrays.copyOf(sendBuf, Math.max(sendLength + length, sendBuf.length * 2));
    }
    System.arraycopy(bytes, from, sendBuf, sendLength, length);
    sendLength += length;
  }

  public void append(byte b) {
    if (sendLength == sendBuf.length) {
      sendBuf = Arrays.copyOf(sendBuf, sendBuf.length * 2);
    }
    sendBuf[sendLength++] = b;
  }

  /** Sends the composed request. */
  public void sendComposed() throws IOException {
    send(sendBuf, 0, sendLength);
  }

  // ---- replies (see ReplyReader) ----------------------------------------------------------------

  /**
   * Reads the reply to {@code request} (see {@link ReplyReader#readReplyTo}). A reply past the
   * connection's {@link ReplyLimit} is not read on: the reply becomes {@link
   * ReplyTooLargeException#reply}'s error and the connection, in the middle of it, is closed (the
   * next request reconnects; not the server's failure).
   */
  public int readReplyTo(Request request) throws IOException {
    try {
      return reader.readReplyTo(request);
    } catch (ReplyTooLargeException e) {
      return abandon(request.respCommand() != null);
    }
  }

  public int readLineReply() throws IOException {
    return reader.readLineReply();
  }

  public int readRetrievalReply() throws IOException {
    try {
      return reader.readRetrievalReply();
    } catch (ReplyTooLargeException e) {
      return abandon(false);
    }
  }

  public int readRespReply() throws IOException {
    try {
      return reader.readRespReply();
    } catch (ReplyTooLargeException e) {
      return abandon(true);
    }
  }

  public int readMetaReply() throws IOException {
    try {
      return reader.readMetaReply();
    } catch (ReplyTooLargeException e) {
      return abandon(false);
    }
  }

  public int readStatsReply() throws IOException {
    try {
      return reader.readStatsReply();
    } catch (ReplyTooLargeException e) {
      return abandon(false);
    }
  }

  private int abandon(boolean resp) {
    abandoned = true;
    closeSocket();
    reader.replyInstead(ReplyTooLargeException.reply(resp));
    return reader.replyLength();
  }

  /** Non-nil top-level bulk strings of the last RESP reply (hits of a GET or MGET). */
  public int hitCount() {
    return reader.hitCount();
  }

  /** The reply buffer; the last reply is at {@code [0, replyLength)}. */
  public byte[] buffer() {
    return reader.buffer();
  }

  public int replyLength() {
    return reader.replyLength();
  }

  /** Whether the last reply was an error (ERROR, CLIENT_ERROR, SERVER_ERROR; RESP {@code -}). */
  public boolean replyIsError() {
    return reader.replyIsError();
  }

  public int valueCount() {
    return reader.valueCount();
  }

  public int blockStart(int i) {
    return reader.blockStart(i);
  }

  public int blockEnd(int i) {
    return reader.blockEnd(i);
  }

  /** Whether value block {@code i} is for the key {@code key[from, to)}. */
  public boolean blockKeyEquals(int i, byte[] key, int from, int to) {
    return reader.blockKeyEquals(i, key, from, to);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing after a failure: nothing more to do
    }
  }
}
