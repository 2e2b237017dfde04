package dev.cachelab.loadgen.config;

import java.util.Locale;

/** Wire protocols the load generator speaks (memtier's {@code -P/--protocol}). */
public enum Protocol {
  MEMCACHE_TEXT("memcache_text"),
  REDIS("redis");

  private final String memtierName;

  Protocol(String memtierName) {
    this.memtierName = memtierName;
  }

  /** The name memtier uses for this protocol (also written to the JSON configuration). */
  public String memtierName() {
    return memtierName;
  }

  /**
   * Parses memtier's protocol names: {@code redis} and {@code resp2} mean RESP2, {@code
   * memcache_text} the memcached text protocol. memtier's other protocols are rejected by name.
   */
  public static Protocol parse(String text) {
    String name = text.trim().toLowerCase(Locale.ROOT);
    return switch (name) {
      case "redis", "resp2" -> REDIS;
      case "memcache_text" -> MEMCACHE_TEXT;
      case "resp3", "memcache_binary", "memcache_meta" ->
          throw new ConfigException(
              "--protocol: '"
                  + text
                  + "' is a memtier protocol that loadgen does not support"
                  + " (expected: redis, resp2 or memcache_text)");
      default ->
          throw new ConfigException(
              "--protocol: unknown protocol '"
                  + text
                  + "' (expected: redis, resp2 or memcache_text)");
    };
  }
}
