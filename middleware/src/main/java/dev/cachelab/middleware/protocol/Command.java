package dev.cachelab.middleware.protocol;

import java.nio.charset.StandardCharsets;

/**
 * The memcached text-protocol commands the middleware understands (memcached {@code
 * doc/protocol.txt}). Immutable; any thread.
 */
public enum Command {
  GET("get", Family.RETRIEVAL),
  GETS("gets", Family.RETRIEVAL),
  GAT("gat", Family.RETRIEVAL),
  GATS("gats", Family.RETRIEVAL),
  SET("set", Family.STORAGE),
  ADD("add", Family.STORAGE),
  REPLACE("replace", Family.STORAGE),
  APPEND("append", Family.STORAGE),
  PREPEND("prepend", Family.STORAGE),
  CAS("cas", Family.STORAGE),
  DELETE("delete", Family.KEYED),
  INCR("incr", Family.KEYED),
  DECR("decr", Family.KEYED),
  TOUCH("touch", Family.KEYED),
  FLUSH_ALL("flush_all", Family.BROADCAST),
  VERBOSITY("verbosity", Family.BROADCAST),
  VERSION("version", Family.FIRST_SERVER),
  STATS("stats", Family.LOCAL),
  QUIT("quit", Family.LOCAL),
  /** Meta get: {@code mg <key> <flag>*}; read from one server like {@code get}. */
  MG("mg", Family.RETRIEVAL),
  /** Meta set: {@code ms <key> <datalen> <flag>*}, a data block follows; replicated. */
  MS("ms", Family.STORAGE),
  /** Meta delete: {@code md <key> <flag>*}; replicated. */
  MD("md", Family.KEYED),
  /** Meta arithmetic: {@code ma <key> <flag>*}; replicated. */
  MA("ma", Family.KEYED),
  /** Meta debug: {@code me <key>}; read from one server. */
  ME("me", Family.RETRIEVAL),
  /** Meta no-op: answered {@code MN} by the middleware, in order. */
  MN("mn", Family.LOCAL),
  /** {@code stats items|slabs|settings|sizes|conns}: forwarded to server 0 (never looked up). */
  STATS_GROUP("stats", Family.FIRST_SERVER);

  /** How a command is routed, independent of the routing mode. */
  public enum Family {
    /** get/gets/gat/gats: one or more keys, read from one server per key. */
    RETRIEVAL,
    /** set/add/replace/append/prepend/cas: one key with a data block, written to its replicas. */
    STORAGE,
    /** delete/incr/decr/touch: one key, no data block, written to its replicas. */
    KEYED,
    /** flush_all/verbosity: sent to every server. */
    BROADCAST,
    /** version: answered by the first server. */
    FIRST_SERVER,
    /** stats/quit: handled by the middleware itself. */
    LOCAL
  }

  private final byte[] name;
  private final Family family;

  Command(String name, Family family) {
    this.name = name.getBytes(StandardCharsets.US_ASCII);
    this.family = family;
  }

  /** The command name as on the wire. */
  public byte[] wireName() {
    return name;
  }

  public Family family() {
    return family;
  }

  /** Whether the command carries a data block after its line. */
  public boolean hasDataBlock() {
    return family == Family.STORAGE;
  }

  /** Whether this is a meta command ({@code mg ms md ma me mn}). */
  public boolean isMeta() {
    return this == MG || this == MS || this == MD || this == MA || this == ME || this == MN;
  }

  /** Token index of the data block length: 2 for {@code ms}, else 4. */
  public int dataLengthToken() {
    return this == MS ? 2 : 4;
  }

  /** Whether the command may modify server state (and so is replicated). */
  public boolean isWrite() {
    return family == Family.STORAGE || family == Family.KEYED;
  }

  private static final Command[] VALUES = values();

  /** The command whose name is {@code bytes[from..to)}, or null. No allocation. */
  public static Command lookup(byte[] bytes, int from, int to) {
    int length = to - from;
    for (Command command : VALUES) {
      byte[] n = command.name;
      if (n.length != length) {
        continue;
      }
      boolean equal = true;
      for (int i = 0; i < length; i++) {
        if (bytes[from + i] != n[i]) {
          equal = false;
          break;
        }
      }
      if (equal) {
        return command;
      }
    }
    return null;
  }
}
