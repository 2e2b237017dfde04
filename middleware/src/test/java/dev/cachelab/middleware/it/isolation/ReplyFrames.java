package dev.cachelab.middleware.it.isolation;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Cuts a memcached reply stream into frames by its grammar alone, not by the requests: a line, or a
 * {@code VALUE <key> <flags> <bytes> [<cas>]} or {@code VA <bytes> ...} line with its data block.
 * So a value holding {@code \r\nEND\r\n} or {@code MN\r\n} is never taken for a frame, and a reply
 * out of step shows as a frame the model does not have. Text is ISO-8859-1 (any byte round-trips).
 * Used by one client's thread.
 */
final class ReplyFrames {
  /** The frame standing for the connection closed by the peer. */
  static final String CLOSED = "<closed>";

  private final InputStream in;

  ReplyFrames(InputStream in) {
    this.in = new BufferedInputStream(in, 64 * 1024);
  }

  /** The next frame, or {@link #CLOSED} if the peer closed the connection between frames. */
  String next() throws IOException {
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    String line = readLine(frame);
    if (line == null) {
      return CLOSED;
    }
    int block = dataBlockBytes(line);
    if (block >= 0) {
      byte[] data = in.readNBytes(block + 2);
      if (data.length < block + 2) {
        throw new IOException("closed inside the data block of " + Request.readable(line));
      }
      frame.write(data);
    }
    return frame.toString(StandardCharsets.ISO_8859_1);
  }

  /**
   * Reads one {@code \r\n}-terminated line into {@code frame}; returns it, or null at a clean end
   * of the stream (nothing read).
   */
  private String readLine(ByteArrayOutputStream frame) throws IOException {
    int previous = -1;
    while (true) {
      int b;
      try {
        b = in.read();
      } catch (java.net.SocketException reset) {
        b = -1; // closed with our requests unread: a reset, not a FIN
      }
      if (b < 0) {
        if (frame.size() == 0) {
          return null;
        }
        throw new IOException(
            "closed inside the line "
                + Request.readable(frame.toString(StandardCharsets.ISO_8859_1)));
      }
      frame.write(b);
      if (previous == '\r' && b == '\n') {
        return frame.toString(StandardCharsets.ISO_8859_1);
      }
      previous = b;
    }
  }

  /** The data block length a line announces ({@code VALUE}, {@code VA}), or -1 for none. */
  private static int dataBlockBytes(String line) throws IOException {
    String[] tokens = line.substring(0, line.length() - 2).split(" ");
    try {
      if (tokens[0].equals("VALUE") && (tokens.length == 4 || tokens.length == 5)) {
        return Integer.parseInt(tokens[3]);
      }
      if (tokens[0].equals("VA") && tokens.length >= 2) {
        return Integer.parseInt(tokens[1]);
      }
    } catch (NumberFormatException e) {
      throw new IOException("unreadable data block length in " + Request.readable(line));
    }
    if (tokens[0].equals("VALUE") || tokens[0].equals("VA")) {
      throw new IOException("malformed " + Request.readable(line));
    }
    return -1;
  }
}
