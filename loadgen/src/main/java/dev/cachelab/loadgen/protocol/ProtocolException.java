package dev.cachelab.loadgen.protocol;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** A reply that does not follow the protocol; the message quotes the offending bytes. */
public final class ProtocolException extends IOException {
  private static final long serialVersionUID = 1L;

  public ProtocolException(String message) {
    super(message);
  }

  /** Printable form of {@code length} bytes at {@code start} (CR/LF shown as \r \n, max 80). */
  static String quote(ByteBuffer in, int start, int length) {
    StringBuilder sb = new StringBuilder("'");
    int end = Math.min(start + Math.min(length, 80), in.limit());
    for (int i = start; i < end; i++) {
      byte b = in.get(i);
      if (b == '\r') {
        sb.append("\\r");
      } else if (b == '\n') {
        sb.append("\\n");
      } else if (b >= 32 && b < 127) {
        sb.append((char) b);
      } else {
        sb.append(String.format("\\x%02x", b & 0xff));
      }
    }
    if (length > 80) {
      sb.append("...");
    }
    return sb.append('\'').toString();
  }

  static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.US_ASCII);
  }
}
