package dev.cachelab.middleware.backend;

import dev.cachelab.middleware.protocol.Command;
import dev.cachelab.middleware.protocol.Request;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Finds where a server's reply ends in a buffer (direct or not) without copying it, for an event
 * loop that answers the client from the server's bytes as they are: the reply kinds of {@link
 * ReplyReader} (one line, memcached retrieval {@code VALUE} blocks up to {@code END}, meta, {@code
 * stats}, RESP2 values nested to any depth). Each call scans from the reply's start again, so it
 * may be called after every read of a reply that arrives in parts; data blocks are skipped by their
 * length, not scanned. One instance per server connection; its owner's thread only.
 */
public final class ReplyFramer {
  /** Not complete yet: more bytes are needed. */
  public static final int INCOMPLETE = -1;

  private static final byte[] END_LINE = {'E', 'N', 'D', '\r', '\n'};
  private static final byte[] VALUE_PREFIX = {'V', 'A', 'L', 'U', 'E', ' '};
  private static final byte[] META_VALUE_PREFIX = {'V', 'A', ' '};
  private static final byte[] META_HIT_PREFIX = {'H', 'D'};
  private static final byte[] ERROR_PREFIX = {'E', 'R', 'R', 'O', 'R'};
  private static final byte[] CLIENT_ERROR_PREFIX = "CLIENT_ERROR".getBytes();
  private static final byte[] SERVER_ERROR_PREFIX = "SERVER_ERROR".getBytes();

  /** The reply a request gets, as far as its framing goes. */
  public enum Kind {
    RESP,
    META,
    RETRIEVAL,
    STATS,
    LINE;

    /** The kind of reply the server sends to {@code request}. */
    public static Kind of(Request request) {
      if (request.respCommand() != null) {
        return RESP;
      } else if (request.command().isMeta()) {
        return META;
      } else if (request.family() == Command.Family.RETRIEVAL) {
        return RETRIEVAL;
      } else if (request.command() == Command.STATS_GROUP) {
        return STATS;
      }
      return LINE;
    }
  }

  private ByteBuffer buf;
  private int limit;
  private int hits;
  private boolean error;

  /**
   * The end (exclusive) of the reply of {@code kind} that starts at {@code start} in {@code
   * bytes[start, limit)}, or {@link #INCOMPLETE}; malformed replies throw.
   */
  public int frame(ByteBuffer bytes, int start, int end, Kind kind) throws IOException {
    this.buf = bytes;
    this.limit = end;
    hits = 0;
    error = false;
    return switch (kind) {
      case LINE -> line(start);
      case RETRIEVAL -> untilEnd(start, true);
      case STATS -> untilEnd(start, false);
      case META -> meta(start);
      case RESP -> resp(start);
    };
  }

  /** Values found by the last complete reply (VALUE blocks, a meta hit, non-nil RESP bulks). */
  public int hits() {
    return hits;
  }

  /** Whether the last complete reply was an error (an error line, a RESP error). */
  public boolean error() {
    return error;
  }

  private int line(int start) {
    int newline = newline(start);
    if (newline < 0) {
      return INCOMPLETE;
    }
    error = isErrorLine(start);
    return newline + 1;
  }

  /**
   * Lines up to {@code END\r\n}: {@code VALUE <key> <flags> <bytes> [<cas>]\r\n<data>\r\n} blocks
   * (a retrieval; any other line is an error that ends it) or {@code STAT} lines (an error line
   * ends it only as the first line).
   */
  private int untilEnd(int start, boolean valueBlocks) throws IOException {
    int pos = start;
    while (true) {
      int newline = newline(pos);
      if (newline < 0) {
        return INCOMPLETE;
      }
      if (startsWith(pos, END_LINE)) {
        return newline + 1;
      }
      if (valueBlocks ? !startsWith(pos, VALUE_PREFIX) : pos == start && isErrorLine(start)) {
        error = true;
        return newline + 1;
      }
      if (!valueBlocks) {
        pos = newline + 1;
        continue;
      }
      pos = valueBlockEnd(pos, newline);
      if (pos == INCOMPLETE) {
        return INCOMPLETE;
      }
      hits++;
    }
  }

  private int valueBlockEnd(int pos, int newline) throws IOException {
    int keyEnd = indexOf(' ', pos + VALUE_PREFIX.length, newline);
    int flagsEnd = keyEnd < 0 ? -1 : indexOf(' ', keyEnd + 1, newline);
    if (flagsEnd < 0) {
      throw new IOException("bad VALUE line from server");
    }
    int bytesEnd = indexOf(' ', flagsEnd + 1, newline);
    int dataBytes = decimal(flagsEnd + 1, bytesEnd < 0 ? lineEnd(newline) : bytesEnd);
    long blockEnd = (long) newline + 1 + dataBytes + 2;
    return blockEnd > limit ? INCOMPLETE : (int) blockEnd;
  }

  // VA <size> <flags>*\r\n<data>\r\n, or one line (HD, EN, NF, NS, EX, ME ..., MN, an error).
  private int meta(int start) throws IOException {
    int newline = newline(start);
    if (newline < 0) {
      return INCOMPLETE;
    }
    if (startsWith(start, META_VALUE_PREFIX)) {
      int sizeStart = start + META_VALUE_PREFIX.length;
      int sizeEnd = indexOf(' ', sizeStart, newline);
      int dataBytes = decimal(sizeStart, sizeEnd < 0 ? lineEnd(newline) : sizeEnd);
      long end = (long) newline + 1 + dataBytes + 2;
      if (end > limit) {
        return INCOMPLETE;
      }
      hits = 1;
      return (int) end;
    }
    if (startsWith(start, META_HIT_PREFIX)) {
      hits = 1;
    }
    error = isErrorLine(start);
    return newline + 1;
  }

  private int resp(int start) throws IOException {
    if (start >= limit) {
      return INCOMPLETE;
    }
    error = buf.get(start) == '-';
    if (buf.get(start) != '*') {
      int end = respValue(start);
      if (end != INCOMPLETE) {
        countHit(start);
      }
      return end;
    }
    int newline = newline(start);
    if (newline < 0) {
      return INCOMPLETE;
    }
    long elements = respNumber(start + 1, newline);
    int pos = newline + 1;
    for (long e = 0; e < elements; e++) {
      int next = respValue(pos);
      if (next == INCOMPLETE) {
        hits = 0;
        return INCOMPLETE;
      }
      countHit(pos);
      pos = next;
    }
    return pos;
  }

  private void countHit(int pos) {
    if (buf.get(pos) == '$' && buf.get(pos + 1) != '-') {
      hits++;
    }
  }

  private int respValue(int pos) throws IOException {
    int newline = newline(pos);
    if (newline < 0) {
      return INCOMPLETE;
    }
    switch (buf.get(pos)) {
      case '+', '-', ':' -> {
        return newline + 1;
      }
      case '$' -> {
        long length = respNumber(pos + 1, newline);
        if (length < 0) {
          return newline + 1;
        }
        long end = newline + 1 + length + 2;
        return end > limit ? INCOMPLETE : (int) end;
      }
      case '*' -> {
        long elements = respNumber(pos + 1, newline);
        int next = newline + 1;
        for (long e = 0; e < elements && next != INCOMPLETE; e++) {
          next = respValue(next);
        }
        return next;
      }
      default -> throw new IOException("bad RESP reply from server");
    }
  }

  private long respNumber(int from, int newline) throws IOException {
    int to = lineEnd(newline);
    boolean negative = from < to && buf.get(from) == '-';
    int value = decimal(negative ? from + 1 : from, to);
    return negative ? -value : value;
  }

  /** The offset of the first {@code \n} at or after {@code from}, or -1. */
  private int newline(int from) {
    for (int i = from; i < limit; i++) {
      if (buf.get(i) == '\n') {
        return i;
      }
    }
    return -1;
  }

  /** The line's end without its {@code \r}. */
  private int lineEnd(int newline) {
    return newline > 0 && buf.get(newline - 1) == '\r' ? newline - 1 : newline;
  }

  private int indexOf(char c, int from, int to) {
    for (int i = from; i < to; i++) {
      if (buf.get(i) == c) {
        return i;
      }
    }
    return -1;
  }

  private int decimal(int from, int to) throws IOException {
    if (from >= to || to - from > 10) {
      throw new IOException("bad length from server");
    }
    long value = 0;
    for (int i = from; i < to; i++) {
      int digit = buf.get(i) - '0';
      if (digit < 0 || digit > 9) {
        throw new IOException("bad length from server");
      }
      value = value * 10 + digit;
    }
    if (value > Integer.MAX_VALUE - 64) {
      throw new IOException("bad length from server");
    }
    return (int) value;
  }

  private boolean isErrorLine(int pos) {
    return startsWith(pos, ERROR_PREFIX)
        || startsWith(pos, CLIENT_ERROR_PREFIX)
        || startsWith(pos, SERVER_ERROR_PREFIX);
  }

  private boolean startsWith(int pos, byte[] prefix) {
    if (limit - pos < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (buf.get(pos + i) != prefix[i]) {
        return false;
      }
    }
    return true;
  }
}
