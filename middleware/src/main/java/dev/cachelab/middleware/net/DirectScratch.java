package dev.cachelab.middleware.net;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A net thread's own direct buffer for socket reads and writes of heap buffers. The JDK copies a
 * heap buffer through a temporary direct buffer on every read and write anyway; taking it from its
 * per-thread cache costs a search and, when the sizes asked vary, an allocation. This one is
 * allocated once. Its net thread only ({@link #owns} tells a caller whether it may use it).
 */
public final class DirectScratch {
  static final int BYTES = 64 * 1024;

  private final ByteBuffer buffer = ByteBuffer.allocateDirect(BYTES);
  private volatile Thread owner;

  /** The net thread, as its loop starts. */
  void claim() {
    owner = Thread.currentThread();
  }

  /** Whether the calling thread is the one that may use this buffer. */
  public boolean owns() {
    return Thread.currentThread() == owner;
  }

  /**
   * Reads what is available (up to {@code into.remaining()}) into the heap buffer {@code into},
   * advancing its position; returns the count, 0 if none, -1 at end of stream.
   */
  public int read(SocketChannel channel, ByteBuffer into) throws IOException {
    byte[] bytes = into.array();
    int from = into.arrayOffset() + into.position();
    int length = into.remaining();
    int total = 0;
    while (total < length) {
      int chunk = Math.min(length - total, BYTES);
      buffer.clear().limit(chunk);
      int n = channel.read(buffer);
      if (n <= 0) {
        if (total == 0) {
          return n;
        }
        break;
      }
      buffer.flip();
      buffer.get(bytes, from + total, n);
      total += n;
      if (n < chunk) {
        break; // the socket is drained
      }
    }
    into.position(into.position() + total);
    return total;
  }

  /** Writes what the socket takes now from the heap buffer {@code from}. */
  public int write(SocketChannel channel, ByteBuffer from) throws IOException {
    int total = 0;
    while (from.hasRemaining()) {
      int chunk = Math.min(from.remaining(), BYTES);
      buffer.clear();
      buffer.put(from.array(), from.arrayOffset() + from.position(), chunk);
      buffer.flip();
      int n = channel.write(buffer);
      from.position(from.position() + n);
      total += n;
      if (n < chunk) {
        break; // the socket takes no more now
      }
    }
    return total;
  }
}
