package dev.cachelab.middleware.protocol;

import dev.cachelab.middleware.protocol.Command.Family;
import java.nio.charset.StandardCharsets;

/**
 * The redis commands the RESP front end understands, with their arity and key positions (as in
 * redis' {@code COMMAND} table), the routing family they share with the memcached commands (reads
 * go round-robin or to the key's primary, writes to every replica) and the shape of their reply
 * under RESP3 where it differs from RESP2's. Keyed commands of every data type are here: strings,
 * hashes, lists, sets, sorted sets, bitmaps and HyperLogLog. Immutable; any thread.
 */
public enum RespCommand {
  GET("get", Access.READ, 2),
  MGET("mget", Access.READ, -2, Keys.ALL),
  EXISTS("exists", Access.READ, -2, Keys.ALL),
  TTL("ttl", Access.READ, 2),
  PTTL("pttl", Access.READ, 2),
  STRLEN("strlen", Access.READ, 2),
  GETRANGE("getrange", Access.READ, 4),
  SUBSTR("substr", Access.READ, 4),
  LCS("lcs", Access.READ, -3, KeyGroup.positions(1, 2), Resp3Shape.MAP, "IDX"),
  SET("set", Access.STORE, -3),
  SETEX("setex", Access.STORE, 4),
  PSETEX("psetex", Access.STORE, 4),
  SETNX("setnx", Access.STORE, 3),
  MSET("mset", Access.STORE, -3, Keys.PAIRS),
  MSETNX("msetnx", Access.STORE, -3, KeyGroup.pairsFrom(1)),
  APPEND("append", Access.STORE, 3),
  SETRANGE("setrange", Access.STORE, 4),
  GETSET("getset", Access.STORE, 3),
  GETDEL("getdel", Access.WRITE, 2),
  GETEX("getex", Access.WRITE, -2),
  DEL("del", Access.WRITE, -2, Keys.ALL),
  UNLINK("unlink", Access.WRITE, -2, Keys.ALL),
  TOUCH("touch", Access.READ, -2, Keys.ALL),
  INCR("incr", Access.WRITE, 2),
  DECR("decr", Access.WRITE, 2),
  INCRBY("incrby", Access.WRITE, 3),
  DECRBY("decrby", Access.WRITE, 3),
  INCRBYFLOAT("incrbyfloat", Access.WRITE, 3),
  EXPIRE("expire", Access.WRITE, -3),
  PEXPIRE("pexpire", Access.WRITE, -3),
  EXPIREAT("expireat", Access.WRITE, -3),
  PEXPIREAT("pexpireat", Access.WRITE, -3),
  PERSIST("persist", Access.WRITE, 2),
  EXPIRETIME("expiretime", Access.READ, 2),
  PEXPIRETIME("pexpiretime", Access.READ, 2),
  TYPE("type", Access.READ, 2),
  RENAME("rename", Access.WRITE, 3, KeyGroup.positions(1, 2)),
  RENAMENX("renamenx", Access.WRITE, 3, KeyGroup.positions(1, 2)),
  COPY("copy", Access.WRITE, -3, KeyGroup.positions(1, 2)),
  HSET("hset", Access.WRITE, -4),
  HSETNX("hsetnx", Access.WRITE, 4),
  HMSET("hmset", Access.WRITE, -4),
  HDEL("hdel", Access.WRITE, -3),
  HINCRBY("hincrby", Access.WRITE, 4),
  HINCRBYFLOAT("hincrbyfloat", Access.WRITE, 4),
  HGET("hget", Access.READ, 3),
  HMGET("hmget", Access.READ, -3),
  HGETALL("hgetall", Access.READ, 2, Resp3Shape.MAP, null),
  HEXISTS("hexists", Access.READ, 3),
  HLEN("hlen", Access.READ, 2),
  HKEYS("hkeys", Access.READ, 2),
  HVALS("hvals", Access.READ, 2),
  HSTRLEN("hstrlen", Access.READ, 3),
  HRANDFIELD("hrandfield", Access.READ, -2, Resp3Shape.FIELD_PAIRS, "WITHVALUES"),
  HSCAN("hscan", Access.READ, -3),
  LPUSH("lpush", Access.WRITE, -3),
  RPUSH("rpush", Access.WRITE, -3),
  LPUSHX("lpushx", Access.WRITE, -3),
  RPUSHX("rpushx", Access.WRITE, -3),
  LPOP("lpop", Access.WRITE, -2),
  RPOP("rpop", Access.WRITE, -2),
  LSET("lset", Access.WRITE, 4),
  LREM("lrem", Access.WRITE, 4),
  LTRIM("ltrim", Access.WRITE, 4),
  LINSERT("linsert", Access.WRITE, 5),
  RPOPLPUSH("rpoplpush", Access.WRITE, 3, KeyGroup.positions(1, 2)),
  LMOVE("lmove", Access.WRITE, 5, KeyGroup.positions(1, 2)),
  LMPOP("lmpop", Access.WRITE, -4, KeyGroup.numkeys(1)),
  LLEN("llen", Access.READ, 2),
  LRANGE("lrange", Access.READ, 4),
  LINDEX("lindex", Access.READ, 3),
  LPOS("lpos", Access.READ, -3),
  SADD("sadd", Access.WRITE, -3),
  SREM("srem", Access.WRITE, -3),
  SPOP("spop", Access.RANDOM_WRITE, -2),
  SMOVE("smove", Access.WRITE, 4, KeyGroup.positions(1, 2)),
  SINTERSTORE("sinterstore", Access.WRITE, -3, KeyGroup.from(1)),
  SUNIONSTORE("sunionstore", Access.WRITE, -3, KeyGroup.from(1)),
  SDIFFSTORE("sdiffstore", Access.WRITE, -3, KeyGroup.from(1)),
  SMEMBERS("smembers", Access.READ, 2, Resp3Shape.SET, null),
  SISMEMBER("sismember", Access.READ, 3),
  SMISMEMBER("smismember", Access.READ, -3),
  SCARD("scard", Access.READ, 2),
  SRANDMEMBER("srandmember", Access.READ, -2),
  SINTER("sinter", Access.READ, -2, KeyGroup.from(1), Resp3Shape.SET, null),
  SUNION("sunion", Access.READ, -2, KeyGroup.from(1), Resp3Shape.SET, null),
  SDIFF("sdiff", Access.READ, -2, KeyGroup.from(1), Resp3Shape.SET, null),
  SINTERCARD("sintercard", Access.READ, -3, KeyGroup.numkeys(1)),
  SSCAN("sscan", Access.READ, -3),
  ZADD("zadd", Access.WRITE, -4, Resp3Shape.DOUBLE, "INCR"),
  ZINCRBY("zincrby", Access.WRITE, 4, Resp3Shape.DOUBLE, null),
  ZREM("zrem", Access.WRITE, -3),
  ZPOPMIN("zpopmin", Access.WRITE, -2, Resp3Shape.POP_PAIRS, null),
  ZPOPMAX("zpopmax", Access.WRITE, -2, Resp3Shape.POP_PAIRS, null),
  ZREMRANGEBYRANK("zremrangebyrank", Access.WRITE, 4),
  ZREMRANGEBYSCORE("zremrangebyscore", Access.WRITE, 4),
  ZREMRANGEBYLEX("zremrangebylex", Access.WRITE, 4),
  ZRANGESTORE("zrangestore", Access.WRITE, -5, KeyGroup.positions(1, 2)),
  ZUNIONSTORE("zunionstore", Access.WRITE, -4, KeyGroup.numkeys(2)),
  ZINTERSTORE("zinterstore", Access.WRITE, -4, KeyGroup.numkeys(2)),
  ZDIFFSTORE("zdiffstore", Access.WRITE, -4, KeyGroup.numkeys(2)),
  ZMPOP("zmpop", Access.WRITE, -4, KeyGroup.numkeys(1), Resp3Shape.MPOP, null),
  ZCARD("zcard", Access.READ, 2),
  ZCOUNT("zcount", Access.READ, 4),
  ZLEXCOUNT("zlexcount", Access.READ, 4),
  ZSCORE("zscore", Access.READ, 3, Resp3Shape.DOUBLE, null),
  ZMSCORE("zmscore", Access.READ, -3, Resp3Shape.DOUBLES, null),
  ZRANK("zrank", Access.READ, -3, Resp3Shape.RANK_SCORE, "WITHSCORE"),
  ZREVRANK("zrevrank", Access.READ, -3, Resp3Shape.RANK_SCORE, "WITHSCORE"),
  ZRANGE("zrange", Access.READ, -4, Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZRANGEBYSCORE("zrangebyscore", Access.READ, -4, Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZREVRANGE("zrevrange", Access.READ, -4, Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZREVRANGEBYSCORE("zrevrangebyscore", Access.READ, -4, Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZRANGEBYLEX("zrangebylex", Access.READ, -4),
  ZREVRANGEBYLEX("zrevrangebylex", Access.READ, -4),
  ZRANDMEMBER("zrandmember", Access.READ, -2, Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZUNION("zunion", Access.READ, -3, KeyGroup.numkeys(1), Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZINTER("zinter", Access.READ, -3, KeyGroup.numkeys(1), Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZDIFF("zdiff", Access.READ, -3, KeyGroup.numkeys(1), Resp3Shape.SCORE_PAIRS, "WITHSCORES"),
  ZINTERCARD("zintercard", Access.READ, -3, KeyGroup.numkeys(1)),
  ZSCAN("zscan", Access.READ, -3),
  SETBIT("setbit", Access.WRITE, 4),
  BITFIELD("bitfield", Access.WRITE, -2),
  BITOP("bitop", Access.WRITE, -4, KeyGroup.from(2)),
  GETBIT("getbit", Access.READ, 3),
  BITCOUNT("bitcount", Access.READ, -2),
  BITPOS("bitpos", Access.READ, -3),
  BITFIELD_RO("bitfield_ro", Access.READ, -2),
  PFADD("pfadd", Access.WRITE, -2),
  PFMERGE("pfmerge", Access.WRITE, -2, KeyGroup.from(1)),
  PFCOUNT("pfcount", Access.READ, -2, KeyGroup.from(1)),
  FLUSHALL("flushall", Family.BROADCAST, 1, -1),
  FLUSHDB("flushdb", Family.BROADCAST, 1, -1),
  DBSIZE("dbsize", Family.FIRST_SERVER, 1, 1),
  CONFIG(
      "config",
      Family.FIRST_SERVER,
      2,
      -1,
      Keys.NONE,
      OpType.OTHER,
      null,
      Resp3Shape.MAP,
      null,
      false),
  COMMAND("command", Family.FIRST_SERVER, 1, -1),
  PING("ping", Family.LOCAL, 1, 2),
  ECHO("echo", Family.LOCAL, 2, 2),
  INFO("info", Family.LOCAL, 1, -1),
  QUIT("quit", Family.LOCAL, 1, -1),
  SELECT("select", Family.LOCAL, 2, 2),
  HELLO("hello", Family.LOCAL, 1, -1),
  CLIENT("client", Family.LOCAL, 2, -1);

  /** Where a command's keys are among its arguments. */
  enum Keys {
    /** No key ({@code PING}, {@code FLUSHALL}). */
    NONE,
    /** The first argument only; later ones are values or options ({@code SET k v EX 10}). */
    FIRST,
    /** Every argument ({@code MGET}, {@code DEL}, {@code EXISTS}); reads may be split by key. */
    ALL,
    /** Key/value pairs ({@code MSET}). */
    PAIRS,
    /**
     * Several keys that go whole to one server ({@code SINTER}, {@code RENAME}), found by the
     * command's {@link KeyGroup}; routed by the group's first key.
     */
    GROUP
  }

  /**
   * The keys of a command that names several and is never split ({@code SMOVE src dst m}, {@code
   * ZUNIONSTORE dst 2 a b}): under hash routing they must all be on the same servers.
   *
   * @param first token of the first key
   * @param count keys from {@code first}, or -1 for every {@code step}-th token to the end
   * @param step tokens from one key to the next
   * @param numkeysAt token holding the key count ({@code numkeys}), or -1; the keys follow it, and
   *     with {@code numkeysAt == 2} token 1 (the destination) is a key too
   */
  record KeyGroup(int first, int count, int step, int numkeysAt) {
    static KeyGroup from(int first) {
      return new KeyGroup(first, -1, 1, -1);
    }

    static KeyGroup pairsFrom(int first) {
      return new KeyGroup(first, -1, 2, -1);
    }

    static KeyGroup positions(int first, int count) {
      return new KeyGroup(first, count, 1, -1);
    }

    static KeyGroup numkeys(int at) {
      return new KeyGroup(at == 2 ? 1 : at + 1, -1, 1, at);
    }
  }

  private final byte[] name;
  private final Family family;
  private final int minArgs;
  private final int maxArgs;
  private final Keys keys;
  private final OpType opType;
  private final KeyGroup group;
  private final Resp3Shape resp3Shape;
  private final byte[] resp3Option;
  private final boolean random;

  /** What a keyed command does to its key: decides its routing family and operation type. */
  enum Access {
    /** Reads: round-robin, or the key's primary ({@code get} counted as get, the rest as other). */
    READ,
    /** Modifies the key: sent to every replica (counted as other). */
    WRITE,
    /** Stores a value: sent to every replica (counted as set). */
    STORE,
    /**
     * Modifies the key in a way chosen at random ({@code SPOP}): replicas given it would differ, so
     * it is refused while writes go to several servers.
     */
    RANDOM_WRITE
  }

  /** A keyed command whose key is its first argument; {@code arity} as redis gives it. */
  RespCommand(String name, Access access, int arity) {
    this(name, access, arity, Keys.FIRST, null, Resp3Shape.SAME, null);
  }

  RespCommand(String name, Access access, int arity, Keys keys) {
    this(name, access, arity, keys, null, Resp3Shape.SAME, null);
  }

  RespCommand(String name, Access access, int arity, KeyGroup group) {
    this(name, access, arity, Keys.GROUP, group, Resp3Shape.SAME, null);
  }

  RespCommand(String name, Access access, int arity, Resp3Shape shape, String option) {
    this(name, access, arity, Keys.FIRST, null, shape, option);
  }

  RespCommand(
      String name, Access access, int arity, KeyGroup group, Resp3Shape shape, String option) {
    this(name, access, arity, Keys.GROUP, group, shape, option);
  }

  private RespCommand(
      String name,
      Access access,
      int arity,
      Keys keys,
      KeyGroup group,
      Resp3Shape shape,
      String option) {
    this(
        name,
        switch (access) {
          case READ -> Family.RETRIEVAL;
          case WRITE, RANDOM_WRITE -> Family.KEYED;
          case STORE -> Family.STORAGE;
        },
        Math.abs(arity),
        arity < 0 ? -1 : arity,
        keys,
        switch (access) {
          case READ ->
              name.equals("get")
                  ? OpType.GET
                  : name.equals("mget") ? OpType.MULTIGET : OpType.OTHER;
          case WRITE, RANDOM_WRITE -> OpType.OTHER;
          case STORE -> OpType.SET;
        },
        group,
        shape,
        option,
        access == Access.RANDOM_WRITE);
  }

  /** A command without keys, handled by family ({@code PING}, {@code FLUSHALL}). */
  RespCommand(String name, Family family, int minArgs, int maxArgs) {
    this(
        name,
        family,
        minArgs,
        maxArgs,
        Keys.NONE,
        OpType.OTHER,
        null,
        Resp3Shape.SAME,
        null,
        false);
  }

  /**
   * @param minArgs fewest arguments, the command name included (redis' arity)
   * @param maxArgs most arguments, or -1 for any number
   * @param keys where the keys are among the arguments
   * @param group the keys of a {@link Keys#GROUP} command, else null
   * @param resp3Shape how the reply changes under RESP3
   * @param resp3Option the option word that makes the reply take that shape ({@code WITHSCORES}),
   *     or null if it always does
   * @param random whether the command's effect is chosen at random ({@code SPOP}): replicas given
   *     it would diverge
   */
  RespCommand(
      String name,
      Family family,
      int minArgs,
      int maxArgs,
      Keys keys,
      OpType opType,
      KeyGroup group,
      Resp3Shape resp3Shape,
      String resp3Option,
      boolean random) {
    this.name = name.getBytes(StandardCharsets.US_ASCII);
    this.family = family;
    this.minArgs = minArgs;
    this.maxArgs = maxArgs;
    this.keys = keys;
    this.opType = opType;
    this.group = group;
    this.resp3Shape = resp3Shape;
    this.resp3Option = resp3Option == null ? null : resp3Option.getBytes(StandardCharsets.US_ASCII);
    this.random = random;
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

  /**
   * Whether the command's cost grows with the data or an argument without bound ({@code SRANDMEMBER
   * s -10000000}, {@code SMEMBERS}, {@code LRANGE}, set algebra): a timeout of it is the command's,
   * not a stopped server's, so it is neither hedged nor tried again on another replica.
   */
  public boolean isSlow() {
    return SLOW.contains(this);
  }

  private static final java.util.Set<RespCommand> SLOW =
      java.util.EnumSet.of(
          SRANDMEMBER,
          SMEMBERS,
          SINTER,
          SUNION,
          SDIFF,
          SINTERCARD,
          SSCAN,
          HGETALL,
          HKEYS,
          HVALS,
          HRANDFIELD,
          HSCAN,
          LRANGE,
          LPOS,
          ZRANGE,
          ZRANGEBYSCORE,
          ZREVRANGE,
          ZREVRANGEBYSCORE,
          ZRANGEBYLEX,
          ZREVRANGEBYLEX,
          ZRANDMEMBER,
          ZUNION,
          ZINTER,
          ZDIFF,
          ZINTERCARD,
          ZSCAN,
          LCS,
          BITCOUNT,
          BITPOS,
          PFCOUNT);

  /** Whether the command's effect is chosen at random, so replicas given it would diverge. */
  public boolean isRandom() {
    return random;
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

  /**
   * How many keys a request of {@code args} arguments (the name included) is routed by: a {@link
   * Keys#GROUP} command by its first key only.
   */
  public int keyCount(int args) {
    return switch (keys) {
      case NONE -> 0;
      case FIRST, GROUP -> 1;
      case ALL -> args - 1;
      case PAIRS -> (args - 1) / 2;
    };
  }

  /** The keys that must share their servers, or null ({@link Keys#GROUP} commands only). */
  KeyGroup group() {
    return group;
  }

  /** Whether a request naming several keys may be split over servers by key. */
  public boolean splittable() {
    return keys == Keys.ALL || keys == Keys.PAIRS;
  }

  /** How the reply changes under RESP3 (given {@link #resp3Option()} if there is one). */
  public Resp3Shape resp3Shape() {
    return resp3Shape;
  }

  /**
   * The first argument that may be {@link #resp3Option()}: the one after the first key, or after
   * the keys of a group of fixed length ({@code LCS}) or counted by {@code numkeys} ({@code ZUNION
   * 2 z WITHSCORES} names a key {@code WITHSCORES}); {@code args} if none may be (a {@code numkeys}
   * that is no number or names more keys than there are arguments: the server refuses the command).
   */
  int firstOptionArgument(Request request, int args) {
    if (group == null) {
      return keyCount(args) > 0 ? 2 : 1;
    }
    int at = group.numkeysAt();
    if (at < 0) {
      return group.count() > 0 ? group.first() + group.count() : args;
    }
    long count = RespTokens.number(request, at);
    return count < 1 || at + count >= args ? args : (int) (at + count + 1);
  }

  /** The option word that gives the reply its RESP3 shape, or null if it always has it. */
  byte[] resp3Option() {
    return resp3Option;
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
      if (command.name.length == length && equalsIgnoreCase(command.name, bytes, from)) {
        return command;
      }
    }
    return null;
  }

  /** Whether {@code bytes[from..)} is {@code lower} (lower-case ASCII) in any case. */
  static boolean equalsIgnoreCase(byte[] lower, byte[] bytes, int from) {
    for (int i = 0; i < lower.length; i++) {
      int b = bytes[from + i];
      if (b >= 'A' && b <= 'Z') {
        b += 'a' - 'A';
      }
      int l = lower[i];
      if (l >= 'A' && l <= 'Z') {
        l += 'a' - 'A';
      }
      if (b != l) {
        return false;
      }
    }
    return true;
  }
}
