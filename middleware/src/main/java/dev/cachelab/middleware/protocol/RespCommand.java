package dev.cachelab.middleware.protocol;

import dev.cachelab.middleware.protocol.Command.Family;
import java.nio.charset.StandardCharsets;

/**
 * The redis commands the RESP2 front end understands, with their arity and key positions (as in
 * redis' {@code COMMAND} table) and the routing family they share with the memcached commands:
 * reads go round-robin (or to the key's primary), writes to every replica. Immutable; any thread.
 */
public enum RespCommand {
  GET("get", Family.RETRIEVAL, 2, 2, Keys.FIRST, OpType.GET),
  MGET("mget", Family.RETRIEVAL, 2, -1, Keys.ALL, OpType.MULTIGET),
  EXISTS("exists", Family.RETRIEVAL, 2, -1, Keys.ALL, OpType.OTHER),
  TTL("ttl", Family.RETRIEVAL, 2, 2, Keys.FIRST, OpType.OTHER),
  PTTL("pttl", Family.RETRIEVAL, 2, 2, Keys.FIRST, OpType.OTHER),
  STRLEN("strlen", Family.RETRIEVAL, 2, 2, Keys.FIRST, OpType.OTHER),
  SET("set", Family.STORAGE, 3, -1, Keys.FIRST, OpType.SET),
  SETEX("setex", Family.STORAGE, 4, 4, Keys.FIRST, OpType.SET),
  PSETEX("psetex", Family.STORAGE, 4, 4, Keys.FIRST, OpType.SET),
  SETNX("setnx", Family.STORAGE, 3, 3, Keys.FIRST, OpType.SET),
  MSET("mset", Family.STORAGE, 3, -1, Keys.PAIRS, OpType.SET),
  APPEND("append", Family.STORAGE, 3, 3, Keys.FIRST, OpType.SET),
  DEL("del", Family.KEYED, 2, -1, Keys.ALL, OpType.OTHER),
  INCR("incr", Family.KEYED, 2, 2, Keys.FIRST, OpType.OTHER),
  DECR("decr", Family.KEYED, 2, 2, Keys.FIRST, OpType.OTHER),
  INCRBY("incrby", Family.KEYED, 3, 3, Keys.FIRST, OpType.OTHER),
  DECRBY("decrby", Family.KEYED, 3, 3, Keys.FIRST, OpType.OTHER),
  EXPIRE("expire", Family.KEYED, 3, -1, Keys.FIRST, OpType.OTHER),
  PEXPIRE("pexpire", Family.KEYED, 3, -1, Keys.FIRST, OpType.OTHER),
  PERSIST("persist", Family.KEYED, 2, 2, Keys.FIRST, OpType.OTHER),
  FLUSHALL("flushall", Family.BROADCAST, 1, -1, Keys.NONE, OpType.OTHER),
  FLUSHDB("flushdb", Family.BROADCAST, 1, -1, Keys.NONE, OpType.OTHER),
  DBSIZE("dbsize", Family.FIRST_SERVER, 1, 1, Keys.NONE, OpType.OTHER),
  CONFIG("config", Family.FIRST_SERVER, 2, -1, Keys.NONE, OpType.OTHER),
  COMMAND("command", Family.FIRST_SERVER, 1, -1, Keys.NONE, OpType.OTHER),
  PING("ping", Family.LOCAL, 1, 2, Keys.NONE, OpType.OTHER),
  ECHO("echo", Family.LOCAL, 2, 2, Keys.NONE, OpType.OTHER),
  INFO("info", Family.LOCAL, 1, -1, Keys.NONE, OpType.OTHER),
  QUIT("quit", Family.LOCAL, 1, -1, Keys.NONE, OpType.OTHER),
  SELECT("select", Family.LOCAL, 2, 2, Keys.NONE, OpType.OTHER);

  /** Where a command's keys are among its arguments. */
  enum Keys {
    /** No key ({@code PING}, {@code FLUSHALL}). */
    NONE,
    /** The first argument only; later ones are values or options ({@code SET k v EX 10}). */
    FIRST,
    /** Every argument ({@code MGET}, {@code DEL}, {@code EXISTS}). */
    ALL,
    /** Key/value pairs ({@code MSET}). */
    PAIRS
  }

  private final byte[] name;
  private final Family family;
  private final int minArgs;
  private final int maxArgs;
  private final Keys keys;
  private final OpType opType;

  /**
   * @param minArgs fewest arguments, the command name included (redis' arity)
   * @param maxArgs most arguments, or -1 for any number
   * @param keys where the keys are among the arguments
   */
  RespCommand(String name, Family family, int minArgs, int maxArgs, Keys keys, OpType opType) {
    this.name = name.getBytes(StandardCharsets.US_ASCII);
    this.family = family;
    this.minArgs = minArgs;
    this.maxArgs = maxArgs;
    this.keys = keys;
    this.opType = opType;
  }

  /** The lower-case command name. */
  public String label() {
    return new String(name, StandardCharsets.US_ASCII);
  }

  public Family family() {
    return family;
  }

  /** Whether the command may modify server state (and so is replicated). */
  public boolean isWrite() {
    return family == Family.STORAGE || family == Family.KEYED || family == Family.BROADCAST;
  }

  /** Whether {@code args} arguments (the name included) is a valid count for this command. */
  public boolean acceptsArgs(int args) {
    if (args < minArgs || maxArgs >= 0 && args > maxArgs) {
      return false;
    }
    return keys != Keys.PAIRS || (args - 1) % 2 == 0;
  }

  /** Arguments from one key to the next: 2 for key/value pairs ({@code MSET}), else 1. */
  public int keyStride() {
    return keys == Keys.PAIRS ? 2 : 1;
  }

  /** How many keys a request of {@code args} arguments (the name included) names. */
  public int keyCount(int args) {
    return switch (keys) {
      case NONE -> 0;
      case FIRST -> 1;
      case ALL -> args - 1;
      case PAIRS -> (args - 1) / 2;
    };
  }

  /** Whether a request naming several keys may be split over servers by key. */
  public boolean splittable() {
    return keys == Keys.ALL || keys == Keys.PAIRS;
  }

  /** The operation type a request with {@code keys} keys is counted as. */
  public OpType opType(int keys) {
    return this == MGET && keys == 1 ? OpType.GET : opType;
  }

  private static final RespCommand[] VALUES = values();

  /** The command whose name, in any case, is {@code bytes[from..to)}, or null. No allocation. */
  public static RespCommand lookup(byte[] bytes, int from, int to) {
    int length = to - from;
    for (RespCommand command : VALUES) {
      byte[] n = command.name;
      if (n.length != length) {
        continue;
      }
      boolean equal = true;
      for (int i = 0; i < length; i++) {
        int b = bytes[from + i];
        if (b >= 'A' && b <= 'Z') {
          b += 'a' - 'A';
        }
        if (b != n[i]) {
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
