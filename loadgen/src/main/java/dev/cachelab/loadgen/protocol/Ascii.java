package dev.cachelab.loadgen.protocol;

import java.nio.ByteBuffer;

/** Allocation-free ASCII helpers for encoders and parsers. Stateless; any thread. */
public final class Ascii {
  private Ascii() {}

  /** Number of decimal digits of a non-negative value. */
  public static int digits(long value) {
    int n = 1;
    while (value >= 10) {
      value /= 10;
      n++;
    }
    return n;
  }

  /** Writes a non-negative value in decimal. */
  public static void putDecimal(ByteBuffer out, long value) {
    int n = digits(value);
    int end = out.position() + n;
    for (int i = end - 1; i >= out.position(); i--) {
      out.put(i, (byte) ('0' + (value % 10)));
      value /= 10;
    }
    out.position(end);
  }

  /** Writes a key: the prefix followed by the key number in decimal. */
  public static void putKey(ByteBuffer out, byte[] prefix, long keyNumber) {
    out.put(prefix);
    putDecimal(out, keyNumber);
  }

  /**
   * Index of the '\n' of the first CRLF at or after {@code from}, or -1 if the buffer (up to its
   * limit) holds no complete line yet.
   */
  public static int findLineEnd(ByteBuffer in, int from) {
    int limit = in.limit();
    for (int i = from; i < limit; i++) {
      if (in.get(i) == '\n') {
        return i;
      }
    }
    return -1;
  }

  /** Whether the bytes at {@code at} equal {@code expected}. */
  public static boolean startsWith(ByteBuffer in, int at, int end, byte[] expected) {
    if (end - at < expected.length) {
      return false;
    }
    for (int i = 0; i < expected.length; i++) {
      if (in.get(at + i) != expected[i]) {
        return false;
      }
    }
    return true;
  }
}
