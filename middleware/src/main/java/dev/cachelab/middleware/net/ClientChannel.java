package dev.cachelab.middleware.net;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The socket side of a {@link ClientConnection}: the bytes it reads and writes and what it asks of
 * the selector. {@link SocketClientChannel} is the real one; the interface lets the connection's
 * ordering and backpressure be tested without sockets. {@link #read} and read interest are called
 * by the net thread; writes, write interest and {@link #close} by whichever thread holds the
 * connection's monitor.
 */
interface ClientChannel {
  /** Reads what is available into {@code into}; -1 at end of stream (non-blocking). */
  int read(ByteBuffer into) throws IOException;

  /** Writes what the socket takes now from {@code from} (non-blocking). */
  int write(ByteBuffer from) throws IOException;

  /** Whether the selector reports the socket readable. */
  void setReadInterest(boolean on);

  /** Whether the selector reports the socket writable; turning it on wakes the selector. */
  void setWriteInterest(boolean on);

  /** Leaves the selector and closes the socket. */
  void close();
}
