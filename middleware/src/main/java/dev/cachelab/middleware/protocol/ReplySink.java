package dev.cachelab.middleware.protocol;

import java.nio.ByteBuffer;

/**
 * Where a request's reply goes: its client connection, which writes replies in request order.
 * Called by the worker (or the net thread) that finished the request.
 */
public interface ReplySink {
  /**
   * Hands over the reply of {@code request} ({@code reply}'s remaining bytes, possibly none). The
   * caller must not touch the request afterwards: it returns to its connection's pool.
   *
   * @return {@link System#nanoTime()} once the reply is written or queued for writing
   */
  long complete(Request request, ByteBuffer reply);
}
