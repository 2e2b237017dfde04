package dev.cachelab.middleware.protocol;

/**
 * How a command's reply differs under RESP3 from the RESP2 reply its server sends (redis' command
 * docs, "RESP3 reply"): the middleware speaks RESP2 to its servers and, to a client that said
 * {@code HELLO 3}, rewrites these replies ({@link Resp3Converter}). Immutable; any thread.
 */
public enum Resp3Shape {
  /** The same reply. */
  SAME,
  /** A flat array of field/value pairs becomes a map ({@code HGETALL}, {@code CONFIG GET}). */
  MAP,
  /** An array becomes a set ({@code SMEMBERS}, {@code SINTER}). */
  SET,
  /** A bulk string score becomes a double, nil becomes null ({@code ZSCORE}, {@code ZINCRBY}). */
  DOUBLE,
  /** An array of bulk string scores becomes an array of doubles ({@code ZMSCORE}). */
  DOUBLES,
  /** A flat member/score array becomes an array of [member, double] pairs ({@code WITHSCORES}). */
  SCORE_PAIRS,
  /** {@code ZPOPMIN k}: [member, double]; with a count, [member, double] pairs. */
  POP_PAIRS,
  /** A flat field/value array becomes an array of [field, value] pairs ({@code HRANDFIELD}). */
  FIELD_PAIRS,
  /** {@code ZRANK k m WITHSCORE}: [rank, double]. */
  RANK_SCORE,
  /** {@code ZMPOP}: [key, [[member, double], ...]]. */
  MPOP
}
