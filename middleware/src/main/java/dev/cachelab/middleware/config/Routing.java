package dev.cachelab.middleware.config;

/** How keys map to servers. Immutable; any thread. */
public enum Routing {
  /** ASL 2017/2019: reads round-robin over all servers, writes to every server. */
  ROUND_ROBIN("round-robin"),
  /** ASL 2016 generalised: a consistent-hash ring, writes to the key's replicas. */
  HASH("hash");

  private final String flagValue;

  Routing(String flagValue) {
    this.flagValue = flagValue;
  }

  /** The value as written on the command line. */
  public String flagValue() {
    return flagValue;
  }

  /** Parses a {@code --routing} value. */
  public static Routing parse(String value) {
    for (Routing routing : values()) {
      if (routing.flagValue.equals(value)) {
        return routing;
      }
    }
    throw new ConfigException("--routing: " + value + " (expected: round-robin or hash)");
  }
}
