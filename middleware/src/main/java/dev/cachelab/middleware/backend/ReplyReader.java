package dev.cachelab.middleware.backend;

import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Reads a server's replies from a blocking stream into a reusable buffer (a CRLF reader in the
 * spirit of Jedis' {@code RedisInputStream}): one line, memcached retrieval ({@code VALUE} blocks
 * to {@code END}), meta, {@code stats} and RESP2 replies, however the stream splits them. The last
 * reply stays at {@code [0, replyLength())} until the next one; bytes read beyond it (the next
 * pipelined replies) are kept. A reply past its {@link ReplyLimit} is not read on: {@link
 * ReplyTooLargeException}. Owned by one {@link BackendConnection}; its worker's thread only.
 */
public final class ReplyReader {
  // Reply buffer: the current reply starts at offset 0. Grown for a large reply, given back at the
  // next one (each worker has a connection to every server: kept large, they add up).
  private static final int BASE_BUFFER_BYTES = 16 * 1024;
  private static final int KEEP_BUFFER_BYTES = 2 * 1024 * 1024 + 64 * 1024;
  private static final int KEEP_BLOCKS = 4096;

  private final ReplyLimit limit;
  // Bytes of buf beyond KEEP_BUFFER_BYTES, reserved from the limit's budget.
  private long reservedBytes;
  private InputStream in;
  private byte[] buf = new byte[BASE_BUFFER_BYTES];
  private int end;
  private int scanFrom;
  // End of the last reply read; bytes in [consumed, end) are the next pipelined replies.
  private int consumed;
  // Bytes read from the stream since the reader was created.
  private long bytesRead;

  // Value blocks of the last retrieval reply: [blockStart, blockEnd) and the key inside.
  private int valueCount;
  private int[] blockStart = new int[8];
  private int[] blockEnd = new int[8];
  private int[] keyStart = new int[8];
  private int[] keyEnd = new int[8];
  private int replyLength;
  private boolean replyIsError;
  private int hitCount;

  /** A reader without a limit (tests). */
  public ReplyReader() {
    this(ReplyLimit.NONE);
  }

  public ReplyReader(ReplyLimit limit) {
    this.limit = limit;
  }

  /** Reads from {@code input} from now on, with an empty buffer (a new connection). */
  public void reset(InputStream input) {
    in = input;
    end = 0;
    scanFrom = 0;
    consumed = 0;
    shrink();
  }

  /**
   * Makes {@code line} the last reply, an error, in place of one that was not read whole (see
   * {@link ReplyTooLargeException}); the buffer grown for it is given back. The connection is out
   * of step after it and must be closed.
   */
  public void replyInstead(byte[] line) {
    end = 0;
    shrink();
    System.arraycopy(line, 0, buf, 0, line.length);
    end = line.length;
    scanFrom = 0;
    replyLength = line.length;
    consumed = replyLength;
    replyIsError = true;
    valueCount = 0;
    hitCount = 0;
  }

  // Back to the base buffer (nothing in it past BASE_BUFFER_BYTES is kept), budget given back.
  private void shrink() {
    if (buf.length > KEEP_BUFFER_BYTES && end <= BASE_BUFFER_BYTES) {
      buf = Arrays.copyOf(buf, BASE_BUFFER_BYTES);
      limit.release(reservedBytes);
      reservedBytes = 0;
    }
  }

  /** Whether bytes beyond the last reply were read (the server sent something unasked). */
  public boolean hasUnreadBytes() {
    return end > consumed;
  }

  /** Bytes read from the stream so far (over every connection). */
  public long bytesRead() {
    return bytesRead;
  }

  /**
   * Reads the server's reply to {@code request} in the request's protocol: a RESP value for a redis
   * request, else a memcached meta reply, retrieval reply ({@code VALUE} blocks up to {@code END}),
   * {@code stats} group or one line.
   */
  public int readReplyTo(Request request) throws IOException {
    if (request.respCommand() != null) {
      return readRespReply();
    } else if (request.command().isMeta()) {
      return readMetaReply();
    } else if (request.family() == Command.Family.RETRIEVAL) {
      return readRetrievalReply();
    } else if (request.command() == Command.STATS_GROUP) {
      return readStatsReply();
    }
    return readLineReply();
  }

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
    shrink();
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
      grow();
    }
    int n = in.read(buf, end, buf.length - end);
    if (n < 0) {
      throw new EOFException("server closed the connection");
    }
    end += n;
    bytesRead += n;
  }

  /**
   * Doubles the buffer, up to the limit's largest reply; past {@link #KEEP_BUFFER_BYTES} the growth
   * is reserved from the budget. The buffer holds the reply being read from offset 0 (and the next
   * pipelined ones after it): a full one at the limit, or a budget without room, ends the read.
   */
  private void grow() throws ReplyTooLargeException {
    int max = limit.maxReplyBytes();
    if (buf.length >= max) {
      throw new ReplyTooLargeException(max);
    }
    int size = (int) Math.min(max, 2L * buf.length);
    long reserve = Math.max(0, size - KEEP_BUFFER_BYTES) - reservedBytes;
    if (reserve > 0) {
      if (!limit.reserve(reserve)) {
        throw new ReplyTooLargeException(buf.length);
      }
      reservedBytes += reserve;
    }
    buf = Arrays.copyOf(buf, size);
  }

  private boolean isErrorLine(int pos) {
    return startsWith(pos, ERROR_PREFIX)
        || startsWith(pos, CLIENT_ERROR_PREFIX)
        || startsWith(pos, SERVER_ERROR_PREFIX);
  }

  boolean startsWith(int pos, byte[] prefix) {
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

  private static final byte[] END_LINE = {'E', 'N', 'D', '\r', '\n'};
  private static final byte[] META_VALUE_PREFIX = {'V', 'A', ' '};
  private static final byte[] META_HIT_PREFIX = {'H', 'D'};
  private static final byte[] VALUE_PREFIX = {'V', 'A', 'L', 'U', 'E', ' '};
  private static final byte[] ERROR_PREFIX = {'E', 'R', 'R', 'O', 'R'};
  private static final byte[] CLIENT_ERROR_PREFIX = "CLIENT_ERROR".getBytes();
  private static final byte[] SERVER_ERROR_PREFIX = "SERVER_ERROR".getBytes();
}
