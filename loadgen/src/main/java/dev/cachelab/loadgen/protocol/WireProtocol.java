package dev.cachelab.loadgen.protocol;

import java.nio.ByteBuffer;

/**
 * Encodes requests and makes reply parsers for one protocol. Stateless; the parsers it makes are
 * used by one connection's thread only.
 */
public interface WireProtocol {

  /** Upper bound of the bytes {@link #encodeSet} writes. */
  int maxSetBytes(int prefixLength, int maxValueBytes);

  /** Upper bound of the bytes {@link #encodeGet} writes for {@code keys} keys. */
  int maxGetBytes(int prefixLength, int keys);

  /** Writes a SET of one key with the value {@code value[offset, offset + length)}. */
  void encodeSet(
      ByteBuffer out,
      byte[] prefix,
      long keyNumber,
      byte[] value,
      int offset,
      int length,
      int expirySeconds);

  /** Writes a GET of {@code count} keys {@code keyNumbers[0 .. count)} (a multi-get if > 1). */
  void encodeGet(ByteBuffer out, byte[] prefix, long[] keyNumbers, int count);

  /** A new parser for one connection's replies. */
  ReplyParser newParser();
}
