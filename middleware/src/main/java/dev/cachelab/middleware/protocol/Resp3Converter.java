package dev.cachelab.middleware.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Rewrites a server's RESP2 reply into the RESP3 reply redis gives a client that said {@code HELLO
 * 3}: nil ({@code $-1}, {@code *-1}) becomes RESP3's null ({@code _}) at any depth, and the replies
 * of the commands whose RESP3 reply has another shape ({@link Resp3Shape}) take it. Errors pass as
 * they are. One per worker, reusing its buffer; its thread only.
 */
public final class Resp3Converter {
  private static final int KEEP_BYTES = 256 * 1024;
  private static final byte[] NULL = {'_', '\r', '\n'};
  private static final byte[] PAIR = {'*', '2', '\r', '\n'};

  private byte[] out = new byte[1024];
  private int length;
  private byte[] in;

  /**
   * The RESP3 form of {@code reply}, the complete RESP2 reply to {@code request} (whose {@link
   * Request#resp3Shape()} is not null); if the reply is not of the form its shape expects, it is
   * converted value by value only. The returned buffer is valid until the next call.
   */
  public ByteBuffer convert(Request request, ByteBuffer reply) {
    if (reply.remaining() < 3 || !reply.hasArray()) {
      return reply;
    }
    in = reply.array();
    int start = reply.arrayOffset() + reply.position();
    if (in[start] == '-') {
      return reply;
    }
    if (out.length > KEEP_BYTES) {
      out = new byte[1024];
    }
    length = 0;
    if (!shaped(request, start)) {
      length = 0;
      value(start);
    }
    return ByteBuffer.wrap(out, 0, length);
  }

  /** Writes the reply in its command's RESP3 shape; false if it does not have the RESP2 form. */
  private boolean shaped(Request request, int at) {
    boolean nil = in[at + 1] == '-';
    return switch (request.resp3Shape()) {
      case SAME -> false;
      case MAP -> !nil && retype(at, '%', 2);
      case SET -> !nil && retype(at, '~', 1);
      case DOUBLE -> in[at] == '$' && toDouble(at) > 0;
      case DOUBLES -> !nil && doubles(at);
      case SCORE_PAIRS, FIELD_PAIRS -> !nil && pairs(at, request.resp3Shape()) > 0;
      case POP_PAIRS ->
          !nil
              && (request.tokenCount() > 2
                  ? pairs(at, Resp3Shape.SCORE_PAIRS) > 0
                  : pairFlat(at, false) > 0);
      case RANK_SCORE -> !nil && pairFlat(at, true) > 0;
      case MPOP -> !nil && mpop(at);
    };
  }

  /** Writes the value at {@code at} with its nils as nulls; returns its end. */
  private int value(int at) {
    int lineEnd = lineEnd(at);
    byte type = in[at];
    if (type != '$' && type != '*') {
      append(at, lineEnd + 2 - at);
      return lineEnd + 2;
    }
    long count = number(at + 1, lineEnd);
    if (count < 0) {
      append(NULL, NULL.length);
      return lineEnd + 2;
    }
    append(at, lineEnd + 2 - at);
    if (type == '$') {
      append(lineEnd + 2, (int) count + 2);
      return lineEnd + 2 + (int) count + 2;
    }
    int pos = lineEnd + 2;
    for (long i = 0; i < count; i++) {
      pos = value(pos);
    }
    return pos;
  }

  // *(per * n) then the elements, as <type>n then the same elements.
  private boolean retype(int at, char type, int per) {
    if (in[at] != '*') {
      return false;
    }
    int lineEnd = lineEnd(at);
    long count = number(at + 1, lineEnd);
    if (count % per != 0) {
      return false;
    }
    header(type, count / per);
    int pos = lineEnd + 2;
    for (long i = 0; i < count; i++) {
      pos = value(pos);
    }
    return true;
  }

  private boolean doubles(int at) {
    if (in[at] != '*') {
      return false;
    }
    int lineEnd = lineEnd(at);
    long count = number(at + 1, lineEnd);
    append(at, lineEnd + 2 - at);
    int pos = lineEnd + 2;
    for (long i = 0; i < count && pos > 0; i++) {
      pos = toDouble(pos);
    }
    return pos > 0;
  }

  // *2n flat pairs as *n [a, b] pairs, each b a double for scores. Returns the end or -1.
  private int pairs(int at, Resp3Shape shape) {
    if (in[at] != '*') {
      return -1;
    }
    int lineEnd = lineEnd(at);
    long count = number(at + 1, lineEnd);
    if (count % 2 != 0) {
      return -1;
    }
    header('*', count / 2);
    int pos = lineEnd + 2;
    for (long i = 0; i < count / 2 && pos > 0; i++) {
      append(PAIR, PAIR.length);
      pos = value(pos);
      pos = shape == Resp3Shape.SCORE_PAIRS ? toDouble(pos) : value(pos);
    }
    return pos;
  }

  // *2 [a, score] with the score as a double (an empty array is left to value()).
  private int pairFlat(int at, boolean rank) {
    if (in[at] != '*') {
      return -1;
    }
    int lineEnd = lineEnd(at);
    if (number(at + 1, lineEnd) != 2 || rank && in[lineEnd + 2] != ':') {
      return -1;
    }
    append(at, lineEnd + 2 - at);
    return toDouble(value(lineEnd + 2));
  }

  // *2 [key, *n [member, score]...] with the scores as doubles.
  private boolean mpop(int at) {
    if (in[at] != '*') {
      return false;
    }
    int lineEnd = lineEnd(at);
    if (number(at + 1, lineEnd) != 2) {
      return false;
    }
    append(at, lineEnd + 2 - at);
    int next = value(lineEnd + 2);
    if (in[next] != '*') {
      return false;
    }
    int listEnd = lineEnd(next);
    long count = number(next + 1, listEnd);
    append(next, listEnd + 2 - next);
    int pos = listEnd + 2;
    for (long i = 0; i < count && pos > 0; i++) {
      if (in[pos] != '*') {
        return false;
      }
      int pairEnd = lineEnd(pos);
      append(pos, pairEnd + 2 - pos);
      pos = toDouble(value(pairEnd + 2));
    }
    return pos > 0;
  }

  /** Writes the bulk string at {@code at} as a double ({@code $-1} as null); its end, or -1. */
  private int toDouble(int at) {
    if (at < 0 || in[at] != '$') {
      return -1;
    }
    int lineEnd = lineEnd(at);
    long bytes = number(at + 1, lineEnd);
    if (bytes < 0) {
      append(NULL, NULL.length);
      return lineEnd + 2;
    }
    ensure(1);
    out[length++] = ',';
    append(lineEnd + 2, (int) bytes + 2);
    return lineEnd + 2 + (int) bytes + 2;
  }

  private int lineEnd(int at) {
    int i = at;
    while (in[i] != '\r') {
      i++;
    }
    return i;
  }

  private long number(int from, int to) {
    boolean negative = in[from] == '-';
    long value = 0;
    for (int i = negative ? from + 1 : from; i < to; i++) {
      value = value * 10 + (in[i] - '0');
    }
    return negative ? -value : value;
  }

  private void header(char type, long count) {
    ensure(24);
    out[length++] = (byte) type;
    length = RespReplies.writeDecimal(count, out, length);
    out[length++] = '\r';
    out[length++] = '\n';
  }

  private void append(int from, int count) {
    ensure(count);
    System.arraycopy(in, from, out, length, count);
    length += count;
  }

  private void append(byte[] bytes, int count) {
    ensure(count);
    System.arraycopy(bytes, 0, out, length, count);
    length += count;
  }

  private void ensure(long more) {
    if (length + more > out.length) {
      out = Arrays.copyOf(out, (int) Math.max(length + more, out.length * 2L));
    }
  }
}
