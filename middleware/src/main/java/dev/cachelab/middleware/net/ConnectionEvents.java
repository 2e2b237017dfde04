package dev.cachelab.middleware.net;

import dev.cachelab.middleware.protocol.Request;

/**
 * What a {@link ClientConnection} tells its net thread. Called by whichever thread holds the
 * connection's monitor (the net thread or a worker completing a request).
 */
interface ConnectionEvents {
  /**
   * The connection's next chain of pipelined forwarded requests (its first, linked by {@link
   * Request#chainNext}), to be queued for the workers now.
   */
  void enqueueWaiting(Request request);

  /** A connection paused for its backlog may be read again. */
  void resumeReading(ClientConnection connection);

  /** The connection has closed. */
  void connectionClosed();
}
