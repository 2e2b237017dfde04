package dev.cachelab.loadgen.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Allocation-free ASCII helpers for encoders and parsers. Stateless; any thread. */
public final class Ascii {
  private Ascii() {}

  /** The US-ASCII bytes of {@code text} (protocol constants). */
  public static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

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

  /** Index of the first '\n' in {@code in[from..limit)}, or -1 if there is no complete line yet. */
  public static int findLineEnd(byte[] in, int from, int limit) {
    for (int i = from; i < limit; i++) {
      if (in[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  /** Whether the bytes {@code in[at..end)} start with {@code expected}. */
  public static boolean startsWith(byte[] in, int at, int end, byte[] expected) {
    if (end - at < expected.length) {
      return false;
    }
    for (int i = 0; i < expected.length; i++) {
      if (in[at + i] != expected[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * The backing array of a reply buffer. Parsers index it directly (cheaper than {@code get(i)} on
   * every byte), so reply buffers are heap buffers with offset 0.
   */
  public static byte[] array(ByteBuffer in) {
    if (!in.hasArray() || in.arrayOffset() != 0) {
      throw new IllegalArgumentException("reply buffer: expected a heap buffer with offset 0");
    }
    return in.array();
  }
}
