package dev.cachelab.middleware.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Rewrites a server's RESP2 reply into the RESP3 reply redis gives a client that said {@code HELLO
 * 3}, for the commands whose reply differs ({@link Resp3Shape}); errors and nil replies pass as
 * they are (RESP3 clients read {@code $-1} and {@code *-1} as null). One per worker, reusing its
 * buffer; its thread only.
 */
public final class Resp3Converter {
  private static final int KEEP_BYTES = 256 * 1024;
  private static final byte[] NULL = {'_', '\r', '\n'};
  private static final byte[] PAIR = {'*', '2', '\r', '\n'};

  private byte[] out = new byte[1024];
  private int length;
  private byte[] in;

  /**
   * The RESP3 form of {@code reply}, the complete reply to {@code request}; {@code reply} itself if
   * the request's shape is {@link Resp3Shape#SAME} or the reply is not the RESP2 form expected. The
   * returned buffer is valid until the next call.
   */
  public ByteBuffer convert(Request request, ByteBuffer reply) {
    Resp3Shape shape = request.resp3Shape();
    int limit = reply.limit();
    if (shape == Resp3Shape.SAME || limit < 3 || !reply.hasArray()) {
      return reply;
    }
    in = reply.array();
    int start = reply.arrayOffset() + reply.position();
    if (in[start] == '-' || in[start + 1] == '-') {
      return reply; // an error, or a nil ($-1, *-1)
    }
    if (out.length > KEEP_BYTES) {
      out = new byte[1024];
    }
    length = 0;
    boolean converted =
        switch (shape) {
          case SAME -> false;
          case MAP -> retype(start, '%', 2);
          case SET -> retype(start, '~', 1);
          case DOUBLE -> in[start] == '$' && toDouble(start) > 0;
          case DOUBLES -> doubles(start);
          case SCORE_PAIRS, FIELD_PAIRS -> pairs(start, shape == Resp3Shape.SCORE_PAIRS) > 0;
          case POP_PAIRS ->
              request.tokenCount() > 2 ? pairs(start, true) > 0 : pairFlat(start, false) > 0;
          case RANK_SCORE -> pairFlat(start, true) > 0;
          case MPOP -> mpop(start);
        };
    return converted ? ByteBuffer.wrap(out, 0, length) : reply;
  }

  // *2n then the elements, as <type>n then the same elements.
  private boolean retype(int at, char type, int per) {
    if (in[at] != '*') {
      return false;
    }
    int lineEnd = lineEnd(at);
    long count = number(at + 1, lineEnd);
    if (count < 0 || count % per != 0) {
      return false;
    }
    header(type, count / per);
    int end = skipElements(lineEnd + 2, count);
    append(lineEnd + 2, end - lineEnd - 2);
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
    for (long i = 0; i < count; i++) {
      pos = toDouble(pos);
      if (pos < 0) {
        return false;
      }
    }
    return true;
  }

  // *2n flat pairs as *n [a, b] pairs; with scores, each b a double. Returns the end or -1.
  private int pairs(int at, boolean scores) {
    if (in[at] != '*') {
      return -1;
    }
    int lineEnd = lineEnd(at);
    long count = number(at + 1, lineEnd);
    if (count < 0 || count % 2 != 0) {
      return -1;
    }
    header('*', count / 2);
    int pos = lineEnd + 2;
    for (long i = 0; i < count / 2; i++) {
      append(PAIR, PAIR.length);
      int next = skip(pos);
      append(pos, next - pos);
      pos = scores ? toDouble(next) : copy(next);
      if (pos < 0) {
        return -1;
      }
    }
    return pos;
  }

  // *2 [a, score] with the score as a double ([] passes as it is). Returns the end or -1.
  private int pairFlat(int at, boolean rank) {
    if (in[at] != '*') {
      return -1;
    }
    int lineEnd = lineEnd(at);
    long count = number(at + 1, lineEnd);
    if (count == 0) {
      return -1;
    }
    if (count != 2 || rank && in[lineEnd + 2] != ':') {
      return -1;
    }
    append(at, lineEnd + 2 - at);
    int next = skip(lineEnd + 2);
    append(lineEnd + 2, next - lineEnd - 2);
    return toDouble(next);
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
    int next = skip(lineEnd + 2);
    append(lineEnd + 2, next - lineEnd - 2);
    if (in[next] != '*') {
      return false;
    }
    int listEnd = lineEnd(next);
    long count = number(next + 1, listEnd);
    append(next, listEnd + 2 - next);
    int pos = listEnd + 2;
    for (long i = 0; i < count; i++) {
      int pairEnd = lineEnd(pos);
      append(pos, pairEnd + 2 - pos);
      int member = skip(pairEnd + 2);
      append(pairEnd + 2, member - pairEnd - 2);
      pos = toDouble(member);
      if (pos < 0) {
        return false;
      }
    }
    return true;
  }

  /** Appends the bulk string at {@code at} as a double ({@code $-1} as null); its end, or -1. */
  private int toDouble(int at) {
    if (in[at] != '$') {
      return -1;
    }
    int lineEnd = lineEnd(at);
    long bytes = number(at + 1, lineEnd);
    if (bytes < 0) {
      append(NULL, NULL.length);
      return lineEnd + 2;
    }
    ensure(bytes + 3);
    out[length++] = ',';
    append(lineEnd + 2, (int) bytes + 2);
    return lineEnd + 2 + (int) bytes + 2;
  }

  private int copy(int at) {
    int end = skip(at);
    append(at, end - at);
    return end;
  }

  /** End of the value at {@code at} (its last byte + 1). */
  private int skip(int at) {
    int lineEnd = lineEnd(at);
    byte type = in[at];
    if (type == '$') {
      long bytes = number(at + 1, lineEnd);
      return bytes < 0 ? lineEnd + 2 : lineEnd + 2 + (int) bytes + 2;
    }
    if (type == '*') {
      return skipElements(lineEnd + 2, number(at + 1, lineEnd));
    }
    return lineEnd + 2;
  }

  private int skipElements(int at, long count) {
    int pos = at;
    for (long i = 0; i < count; i++) {
      pos = skip(pos);
    }
    return pos;
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
