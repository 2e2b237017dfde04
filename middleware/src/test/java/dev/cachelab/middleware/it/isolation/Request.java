package dev.cachelab.middleware.it.isolation;

/**
 * One generated request of a client: the bytes sent to the middleware and the bytes sent to the
 * model memcached for it (the same but where the middleware differs from memcached on purpose, see
 * {@link ModelDifferences}). Immutable; made by the generator's thread and read by the client's.
 *
 * @param wire the request as the middleware gets it; {@link #LATEST_CAS} stands for the cas unique
 *     the connection last read for the request's key
 * @param model the request as the model memcached gets it
 * @param closes whether the middleware answers it with a {@code CLIENT_ERROR} and closes the
 *     connection (it is then the last request of its round)
 */
public record Request(String wire, String model, boolean closes) {
  /** Replaced, when sent, by the last cas unique read on the connection for the key. */
  public static final String LATEST_CAS = "{cas}";

  /** A cas unique no server reaches in a test. */
  public static final String STALE_CAS = "999999999999";

  private static final int SHOWN_CHARS = 72;

  static Request same(String wire) {
    return new Request(wire, wire, false);
  }

  /** The key of a request naming one (its second token), for the cas substitution. */
  String key() {
    String[] tokens = wire.split("[ \r\n]", 3);
    return tokens.length > 1 ? tokens[1] : "";
  }

  @Override
  public String toString() {
    String shown = readable(wire);
    String model = wire.equals(this.model) ? "" : "  [model: " + readable(this.model) + "]";
    return shown + model + (closes ? "  [closes]" : "");
  }

  /** The text with CR, LF and NUL spelled out and long runs cut, for failure reports. */
  static String readable(String text) {
    String cut =
        text.length() <= SHOWN_CHARS
            ? text
            : text.substring(0, SHOWN_CHARS) + "...(" + text.length() + " bytes)";
    return cut.replace("\r", "\\r").replace("\n", "\\n").replace("\0", "\\0");
  }
}
