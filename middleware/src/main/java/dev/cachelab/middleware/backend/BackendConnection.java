package dev.cachelab.middleware.backend;

import dev.cachelab.middleware.config.Protocol;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One worker's blocking connection to one memcached (or redis) server, with a reusable reply buffer
 * and a reply reader (a blocking CRLF reader in the spirit of Jedis' {@code RedisInputStream}).
 * Owned and used by one worker thread; the {@link Watchdog} thread may only {@link #abortIfExpired}
 * it.
 *
 * <p>Timeouts: the worker arms a deadline before it writes a request and disarms it after the
 * reply; a blocking read past the deadline is ended by the watchdog closing the socket, which keeps
 * the fast path at one blocking read per reply (no timed poll). After a failure the connection is
 * closed and reconnected on the next request; only failed connection attempts back off
 * (exponentially), so a server that drops one connection now and then costs one request, not every
 * request of a backoff period.
 *
 * <p>Health: every failure and every complete reply is reported to the server's shared {@link
 * BackendHealth}; while the server is ejected the connection refuses requests (one worker probes it
 * with {@code version}, or redis with {@code PING}, when its retry interval has passed), and a
 * request takes one of the server's waiter slots from {@link #ensureConnected} until its reply or
 * failure.
 */
public final class BackendConnection {
  private static final long INITIAL_BACKOFF_NANOS = 10_000_000L;
  private static final long MAX_BACKOFF_NANOS = 1_000_000_000L;
  private static final long DISARMED = 0;
  private static final long EXPIRED = -1;

  private static final byte[] VERSION_REQUEST = {'v', 'e', 'r', 's', 'i', 'o', 'n', '\r', '\n'};
  private static final byte[] VERSION_PREFIX = {'V', 'E', 'R', 'S', 'I', 'O', 'N', ' '};
  private static final byte[] PING_REQUEST = {
    '*', '1', '\r', '\n', '$', '4', '\r', '\n', 'P', 'I', 'N', 'G', '\r', '\n'
  };
  private static final byte[] PONG_REPLY = {'+', 'P', 'O', 'N', 'G', '\r', '\n'};

  private final int serverIndex;
  private final String host;
  private final int port;
  private final BackendHealth health;
  private final Protocol protocol;
  private boolean holdsWaiterSlot;
  private final AtomicLong deadlineNanos = new AtomicLong(DISARMED);
  private volatile boolean timedOut;
  // The worker waits on another server's connection before it reads this one's reply: the watchdog
  // leaves it open (the reply may be in already) until the worker comes back to it.
  private volatile boolean setAside;

  private volatile Socket socket;
  private InputStream in;
  private OutputStream out;
  private long reconnectAtNanos;
  private long backoffNanos = INITIAL_BACKOFF_NANOS;

  // Reply buffer: the current reply starts at offset 0. Grown for a large reply, given back at the
  // next one (each worker has a connection to every server: kept large, they add up).
  private static final int BASE_BUFFER_BYTES = 16 * 1024;
  private static final int KEEP_BUFFER_BYTES = 2 * 1024 * 1024 + 64 * 1024;
  private static final int KEEP_BLOCKS = 4096;
  private byte[] buf = new byte[BASE_BUFFER_BYTES];
  private int end;
  private int scanFrom;
  // End of the last reply read; bytes in [consumed, end) are the next pipelined replies.
  private int consumed;

  // Value blocks of the last retrieval reply: [blockStart, blockEnd) and the key inside.
  private int valueCount;
  private int[] blockStart = new int[8];
  private int[] blockEnd = new int[8];
  private int[] keyStart = new int[8];
  private int[] keyEnd = new int[8];
  private int replyLength;
  private boolean replyIsError;
  private int hitCount;

  /** Send buffer for requests the worker rewrites (noreply stripped, split multi-gets). */
  private byte[] sendBuf = new byte[1024];

  private int sendLength;

  /**
   * @param protocol the server's protocol: memcached is probed with {@code version}, redis with
   *     {@code PING}
   */
  public BackendConnection(
      int serverIndex, InetSocketAddress address, BackendHealth health, Protocol protocol) {
    this.serverIndex = serverIndex;
    this.protocol = protocol;
    this.host = address.getHostString();
    this.port = address.getPort();
    this.health = health;
  }

  public int serverIndex() {
    return serverIndex;
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
    if (!health.inRotation() && !(health.claimProbe(nowNanos) && probe(nowNanos))) {
      return false;
    }
    if (!holdsWaiterSlot && health.suspect()) {
      if (!health.tryEnter()) {
        return false;
      }
      holdsWaiterSlot = true;
    }
    if (in != null) {
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

  /**
   * Asks the ejected server for its {@code version} (redis: {@code PING}); reports the outcome to
   * its health. Runs under the caller's armed deadline (the watchdog ends a hung probe).
   */
  private boolean probe(long nowNanos) {
    boolean answered = false;
    try {
      if ((in != null || connect()) && protocol == Protocol.REDIS) {
        send(PING_REQUEST, 0, PING_REQUEST.length);
        readRespReply();
        answered = startsWith(0, PONG_REPLY);
      } else if (in != null) {
        send(VERSION_REQUEST, 0, VERSION_REQUEST.length);
        readLineReply();
        answered = startsWith(0, VERSION_PREFIX);
      }
    } catch (IOException e) {
      answered = false;
    }
    if (answered) {
      health.probeSucceeded();
      return true;
    }
    closeSocket();
    health.probeFailed(nowNanos);
    return false;
  }

  private boolean connect() {
    Socket s = new Socket();
    socket = s; // visible to the watchdog while connecting
    try {
      s.setTcpNoDelay(true);
      s.connect(new InetSocketAddress(host, port));
      in = s.getInputStream();
      out = s.getOutputStream();
      end = 0;
      scanFrom = 0;
      consumed = 0;
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

  /** Arms the timeout; call before sending a request. */
  public void arm(long deadline) {
    leaveWaiters();
    timedOut = false;
    if (setAside) {
      setAside = false;
    }
    deadlineNanos.set(deadline == DISARMED || deadline == EXPIRED ? 1 : deadline);
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
    health.succeeded();
  }

  /**
   * The worker turns to other servers' connections (a request sent to several servers) before it
   * reads this one's reply: until {@link #resume}, the watchdog does not end it. Without this, a
   * stopped server's timeout closed the other servers' connections too, whose replies were in but
   * not yet read (one deadline for all), and counted failures against healthy servers.
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
   * Watchdog thread: closes the socket if the armed deadline has passed and it is not set aside.
   */
  void abortIfExpired(long nowNanos) {
    if (setAside) {
      return;
    }
    long deadline = deadlineNanos.get();
    if (deadline != DISARMED && deadline != EXPIRED && nowNanos - deadline >= 0) {
      if (deadlineNanos.compareAndSet(deadline, EXPIRED)) {
        timedOut = true;
        Socket s = socket;
        if (s != null) {
          closeQuietly(s);
        }
      }
    }
  }

  /** Whether the last failure was the watchdog's timeout. */
  public boolean timedOut() {
    return timedOut;
  }

  /**
   * Closes the connection after a failure and reports it to the server's health; the next request
   * reconnects at once (a failed reconnect backs off).
   */
  public void markDown() {
    deadlineNanos.set(DISARMED);
    setAside = false;
    leaveWaiters();
    closeSocket();
    health.failed(System.nanoTime());
  }

  private void closeSocket() {
    if (socket != null) {
      closeQuietly(socket);
      socket = null;
      in = null;
      out = null;
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
    if (end > consumed) {
      // Bytes beyond the last reply before a new request (every reply of the requests sent so
      // far has been read): the server sent something unasked, the stream is out of step.
      throw new IOException("unexpected bytes from server");
    }
    out.write(bytes, from, length);
  }

  /** Starts composing a request in the send buffer. */
  public void beginCompose() {
    sendLength = 0;
  }

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

  // ---- replies ----------------------------------------------------------------------------------

  /** Reads a one-line reply ({@code STORED\r\n}, {@code 42\r\n}, ...) into {@link #buffer()}. */
  public int readLineReply() throws IOException {
    startReply();
    int newline = readLine(0);
    replyLength = newline + 1;
    replyIsError = isErrorLine(0);
    consumeReply();
    return replyLength;
  }

  /**
   * Reads a retrieval reply: {@code VALUE <key> <flags> <bytes> [<cas>]\r\n<data>\r\n} blocks until
   * {@code END\r\n}, or an error line. Value blocks are indexed for {@link #blockStart}.
   */
  public int readRetrievalReply() throws IOException {
    startReply();
    valueCount = 0;
    int pos = 0;
    while (true) {
      int newline = readLine(pos);
      if (startsWith(pos, END_LINE)) {
        replyLength = newline + 1;
        replyIsError = false;
        break;
      }
      if (!startsWith(pos, VALUE_PREFIX)) {
        replyLength = newline + 1;
        replyIsError = true;
        break;
      }
      // VALUE <key> <flags> <bytes> [<cas unique>]\r\n
      int kStart = pos + VALUE_PREFIX.length;
      int kEnd = indexOf(' ', kStart, newline);
      int flagsEnd = indexOf(' ', kEnd + 1, newline);
      int bytesStart = flagsEnd + 1;
      int bytesEnd = indexOf(' ', bytesStart, newline);
      if (bytesEnd < 0) {
        bytesEnd = buf[newline - 1] == '\r' ? newline - 1 : newline;
      }
      if (kEnd < 0 || flagsEnd < 0) {
        throw new IOException("bad VALUE line from server");
      }
      int dataBytes = parseDecimal(bytesStart, bytesEnd);
      int blockEndOffset = newline + 1 + dataBytes + 2;
      fill(blockEndOffset);
      addBlock(pos, blockEndOffset, kStart, kEnd);
      pos = blockEndOffset;
      scanFrom = pos;
    }
    consumeReply();
    return replyLength;
  }

  /**
   * Reads one RESP2 reply from a redis server (simple string, error, integer, bulk string or array,
   * nested to any depth) into {@link #buffer()}. For an array, each top-level element is indexed
   * for {@link #blockStart}/{@link #blockEnd} and {@link #valueCount()} is the element count (1 for
   * any other reply); {@link #hitCount()} is the number of non-nil top-level bulk strings.
   */
  public int readRespReply() throws IOException {
    startReply();
    valueCount = 0;
    hitCount = 0;
    int newline = readLine(0);
    if (buf[0] == '*') {
      long elements = parseRespNumber(1, newline);
      int pos = newline + 1;
      for (long e = 0; e < elements; e++) {
        int next = readRespValue(pos);
        addBlock(pos, next, pos, pos);
        countHit(pos);
        pos = next;
      }
      replyLength = pos;
    } else {
      scanFrom = 0;
      replyLength = readRespValue(0);
      addBlock(0, replyLength, 0, 0);
      countHit(0);
    }
    replyIsError = buf[0] == '-';
    scanFrom = replyLength;
    consumeReply();
    return replyLength;
  }

  /** Non-nil top-level bulk strings of the last RESP reply (hits of a GET or MGET). */
  public int hitCount() {
    return hitCount;
  }

  private void countHit(int pos) {
    if (buf[pos] == '$' && buf[pos + 1] != '-') {
      hitCount++;
    }
  }

  /** Reads the RESP value starting at {@code pos}; returns the offset just after it. */
  private int readRespValue(int pos) throws IOException {
    int newline = readLine(pos);
    switch (buf[pos]) {
      case '+', '-', ':' -> {
        return newline + 1;
      }
      case '$' -> {
        long length = parseRespNumber(pos + 1, newline);
        if (length < 0) {
          return newline + 1;
        }
        int valueEnd = newline + 1 + (int) length + 2;
        fill(valueEnd);
        scanFrom = valueEnd;
        return valueEnd;
      }
      case '*' -> {
        long elements = parseRespNumber(pos + 1, newline);
        int next = newline + 1;
        for (long e = 0; e < elements; e++) {
          next = readRespValue(next);
        }
        return next;
      }
      default -> throw new IOException("bad RESP reply from server");
    }
  }

  /** The signed decimal in {@code buf[from, newline)} without its {@code \r}. */
  private long parseRespNumber(int from, int newline) throws IOException {
    int to = newline > from && buf[newline - 1] == '\r' ? newline - 1 : newline;
    boolean negative = from < to && buf[from] == '-';
    int value = parseDecimal(negative ? from + 1 : from, to);
    return negative ? -value : value;
  }

  /**
   * Reads a meta-protocol reply: {@code VA <size> <flags>*\r\n<data>\r\n}, or one line ({@code HD},
   * {@code EN}, {@code NF}, {@code NS}, {@code EX}, {@code ME ...}, {@code MN}, an error). {@link
   * #valueCount()} is 1 for a hit ({@code VA} or {@code HD}), else 0.
   */
  public int readMetaReply() throws IOException {
    startReply();
    valueCount = 0;
    int newline = readLine(0);
    replyLength = newline + 1;
    if (startsWith(0, META_VALUE_PREFIX)) {
      int sizeEnd = indexOf(' ', META_VALUE_PREFIX.length, newline);
      if (sizeEnd < 0) {
        sizeEnd = buf[newline - 1] == '\r' ? newline - 1 : newline;
      }
      int dataBytes = parseDecimal(META_VALUE_PREFIX.length, sizeEnd);
      replyLength = newline + 1 + dataBytes + 2;
      fill(replyLength);
      scanFrom = replyLength;
      valueCount = 1;
    } else if (startsWith(0, META_HIT_PREFIX)) {
      valueCount = 1;
    }
    replyIsError = isErrorLine(0);
    consumeReply();
    return replyLength;
  }

  /**
   * Reads the reply to {@code stats <group>}: {@code STAT} (or other) lines up to {@code END}, or a
   * single error line.
   */
  public int readStatsReply() throws IOException {
    startReply();
    valueCount = 0;
    int pos = 0;
    while (true) {
      int newline = readLine(pos);
      if (startsWith(pos, END_LINE)) {
        replyIsError = false;
        break;
      }
      if (pos == 0 && isErrorLine(0)) {
        replyIsError = true;
        break;
      }
      pos = newline + 1;
    }
    replyLength = scanFrom;
    consumeReply();
    return replyLength;
  }

  /** The reply buffer; the last reply is at {@code [0, replyLength)}. */
  public byte[] buffer() {
    return buf;
  }

  public int replyLength() {
    return replyLength;
  }

  /** Whether the last reply was an error line (ERROR, CLIENT_ERROR, SERVER_ERROR). */
  public boolean replyIsError() {
    return replyIsError;
  }

  public int valueCount() {
    return valueCount;
  }

  public int blockStart(int i) {
    return blockStart[i];
  }

  public int blockEnd(int i) {
    return blockEnd[i];
  }

  /** Whether value block {@code i} is for the key {@code key[from, to)}. */
  public boolean blockKeyEquals(int i, byte[] key, int from, int to) {
    return Arrays.equals(buf, keyStart[i], keyEnd[i], key, from, to);
  }

  private void addBlock(int start, int stop, int kStart, int kEnd) {
    if (valueCount == blockStart.length) {
      int n = valueCount * 2;
      blockStart = Arrays.copyOf(blockStart, n);
      blockEnd = Arrays.copyOf(blockEnd, n);
      keyStart = Arrays.copyOf(keyStart, n);
      keyEnd = Arrays.copyOf(keyEnd, n);
    }
    blockStart[valueCount] = start;
    blockEnd[valueCount] = stop;
    keyStart[valueCount] = kStart;
    keyEnd[valueCount] = kEnd;
    valueCount++;
  }

  // Moves bytes already read beyond the previous reply (pipelined replies) to the front; gives back
  // what a very large previous reply grew (its buffer, the index of its values).
  private void startReply() {
    scanFrom = 0;
    if (consumed > 0) {
      if (end > consumed) {
        System.arraycopy(buf, consumed, buf, 0, end - consumed);
      }
      end -= consumed;
      consumed = 0;
    }
    if (blockStart.length > KEEP_BLOCKS) {
      blockStart = new int[8];
      blockEnd = new int[8];
      keyStart = new int[8];
      keyEnd = new int[8];
    }
    if (buf.length > KEEP_BUFFER_BYTES && end <= BASE_BUFFER_BYTES) {
      buf = Arrays.copyOf(buf, BASE_BUFFER_BYTES);
    }
  }

  // The reply stays at [0, replyLength) until the next reply. Bytes beyond it belong to the next
  // reply of a pipelined batch; if nothing more was asked, send() finds them and fails the
  // connection (a server never sends unasked bytes).
  private void consumeReply() {
    consumed = replyLength;
  }

  /** Reads until a {@code \n} at or after {@code from}; returns its offset. */
  private int readLine(int from) throws IOException {
    int i = Math.max(from, scanFrom);
    while (true) {
      for (; i < end; i++) {
        if (buf[i] == '\n') {
          scanFrom = i + 1;
          return i;
        }
      }
      readMore();
    }
  }

  private void fill(int length) throws IOException {
    while (end < length) {
      readMore();
    }
  }

  private void readMore() throws IOException {
    if (end == buf.length) {
      buf = Arrays.copyOf(buf, buf.length * 2);
    }
    int n = in.read(buf, end, buf.length - end);
    if (n < 0) {
      throw new EOFException("server closed the connection");
    }
    end += n;
  }

  private boolean isErrorLine(int pos) {
    return startsWith(pos, ERROR_PREFIX)
        || startsWith(pos, CLIENT_ERROR_PREFIX)
        || startsWith(pos, SERVER_ERROR_PREFIX);
  }

  private boolean startsWith(int pos, byte[] prefix) {
    if (end - pos < prefix.length) {
      return false;
    }
    return Arrays.equals(buf, pos, pos + prefix.length, prefix, 0, prefix.length);
  }

  private int indexOf(char c, int from, int to) {
    for (int i = from; i < to; i++) {
      if (buf[i] == c) {
        return i;
      }
    }
    return -1;
  }

  private int parseDecimal(int from, int to) throws IOException {
    if (from >= to || to - from > 10) {
      throw new IOException("bad value length from server");
    }
    long value = 0;
    for (int i = from; i < to; i++) {
      int digit = buf[i] - '0';
      if (digit < 0 || digit > 9) {
        throw new IOException("bad value length from server");
      }
      value = value * 10 + digit;
    }
    if (value > Integer.MAX_VALUE - 64) {
      throw new IOException("bad value length from server");
    }
    return (int) value;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing after a failure: nothing more to do
    }
  }

  private static final byte[] END_LINE = {'E', 'N', 'D', '\r', '\n'};
  private static final byte[] META_VALUE_PREFIX = {'V', 'A', ' '};
  private static final byte[] META_HIT_PREFIX = {'H', 'D'};
  private static final byte[] VALUE_PREFIX = {'V', 'A', 'L', 'U', 'E', ' '};
  private static final byte[] ERROR_PREFIX = {'E', 'R', 'R', 'O', 'R'};
  private static final byte[] CLIENT_ERROR_PREFIX = "CLIENT_ERROR".getBytes();
  private static final byte[] SERVER_ERROR_PREFIX = "SERVER_ERROR".getBytes();
}
