package dev.cachelab.middleware.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reading the tokens of a decoded RESP request: a decimal as redis reads it, a token's length, its
 * bytes and its text for an error message. Stateless; used by the net thread that decodes the
 * request.
 */
final class RespTokens {
  /** Longest part of a token quoted in an error message. */
  static final int IN_ERROR_BYTES = 128;

  private RespTokens() {}

  /**
   * A signed decimal in {@code buf[from, to)} written as redis' {@code string2ll} accepts it (no
   * sign but {@code -}, no leading zero, no {@code -0}, no blank), or {@link Long#MIN_VALUE} if it
   * is not one. At most 18 digits: a longer number is too large for any use here.
   */
  static long number(byte[] buf, int from, int to) {
    if (to - from == 1 && buf[from] == '0') {
      return 0;
    }
    boolean negative = from < to && buf[from] == '-';
    int i = negative ? from + 1 : from;
    if (i == to || to - i > 18 || buf[i] == '0') {
      return Long.MIN_VALUE;
    }
    long value = 0;
    for (; i < to; i++) {
      int digit = buf[i] - '0';
      if (digit < 0 || digit > 9) {
        return Long.MIN_VALUE;
      }
      value = value * 10 + digit;
    }
    return negative ? -value : value;
  }

  /** Token {@code token} as a number (see {@link #number(byte[], int, int)}). */
  static long number(Request request, int token) {
    return number(request.bytes(), request.tokenStart(token), request.tokenEnd(token));
  }

  static int length(Request request, int token) {
    return request.tokenEnd(token) - request.tokenStart(token);
  }

  /** A copy of token {@code token}'s bytes. */
  static byte[] bytes(Request request, int token) {
    return Arrays.copyOfRange(request.bytes(), request.tokenStart(token), request.tokenEnd(token));
  }

  /** Token {@code token} as ISO-8859-1 text, cut at {@link #IN_ERROR_BYTES}. */
  static String text(Request request, int token) {
    int length = Math.min(IN_ERROR_BYTES, length(request, token));
    return new String(
        request.bytes(), request.tokenStart(token), length, StandardCharsets.ISO_8859_1);
  }
}
