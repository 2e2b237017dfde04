package dev.cachelab.middleware.config;

/**
 * The protocol the middleware speaks, to its clients and to its servers alike. Immutable; any
 * thread.
 */
public enum Protocol {
  /** memcached's text protocol, memcached servers (the default, as in the ASL). */
  MEMCACHED("memcached"),
  /** redis' RESP2, redis servers. */
  REDIS("redis");

  private final String flagValue;

  Protocol(String flagValue) {
    this.flagValue = flagValue;
  }

  /** The value as written on the command line. */
  public String flagValue() {
    return flagValue;
  }

  /** Parses a {@code --protocol} value. */
  public static Protocol parse(String value) {
    for (Protocol protocol : values()) {
      if (protocol.flagValue.equals(value)) {
        return protocol;
      }
    }
    throw new ConfigException("--protocol: " + value + " (expected: memcached or redis)");
  }
}
