package dev.cachelab.middleware.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A server's reply did not fit its {@link ReplyLimit}: it is not read on (its client gets {@link
 * #reply}), and the server connection, left in the middle of it, is closed without counting as the
 * server's failure. Thrown and handled on the thread reading the reply (a worker, an event loop).
 */
public final class ReplyTooLargeException extends IOException {
  private static final long serialVersionUID = 1L;

  private static final String MESSAGE =
      "reply too large for the middleware (more than a quarter of --buffer-budget-bytes, or the"
          + " budget full)";
  private static final byte[] MEMCACHED =
      ("SERVER_ERROR " + MESSAGE + "\r\n").getBytes(StandardCharsets.US_ASCII);
  private static final byte[] RESP =
      ("-ERR " + MESSAGE + "\r\n").getBytes(StandardCharsets.US_ASCII);

  public ReplyTooLargeException(long bytes) {
    super("reply too large: over " + bytes + " bytes");
  }

  /** The client's reply: {@code SERVER_ERROR ...}, or a RESP error for a redis client. */
  public static byte[] reply(boolean resp) {
    return resp ? RESP.clone() : MEMCACHED.clone();
  }
}
