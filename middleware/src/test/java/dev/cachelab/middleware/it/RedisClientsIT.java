package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cachelab.middleware.testing.RedisProcess;
import dev.cachelab.middleware.testing.RedisServers;
import dev.cachelab.middleware.testing.RunningMiddleware;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.args.ListDirection;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Real redis clients through the RESP front end at its defaults (round-robin reads, writes to every
 * server), compared with a redis-server used directly: Jedis with its default settings and with
 * RESP3 ({@code HELLO 3}), and {@code redis-cli} in RESP2 and RESP3 mode, over the keyed commands
 * of every data type.
 */
class RedisClientsIT {
  @RegisterExtension static final RedisServers redis = RedisServers.perClass(2);

  /** The middleware at its defaults (but the required flags) in front of both servers. */
  private static RunningMiddleware middleware(String... flags) throws IOException {
    List<String> args = new ArrayList<>(List.of("-t", "8", "-s", "false"));
    args.addAll(List.of(flags));
    return redis.middleware(args.toArray(new String[0]));
  }

  /** Commands of every data type, with what each returned (as Jedis gives it). */
  private static List<Object> everyType(Jedis j) {
    List<Object> r = new ArrayList<>();
    // hashes
    r.add(j.hset("h", Map.of("a", "1", "b", "2")));
    r.add(j.hget("h", "a"));
    r.add(j.hgetAll("h"));
    r.add(j.hincrBy("h", "n", 5));
    r.add(j.hincrByFloat("h", "f", 1.5));
    r.add(j.hmget("h", "a", "missing"));
    r.add(j.hdel("h", "b"));
    r.add(j.hlen("h"));
    r.add(j.hexists("h", "a"));
    r.add(j.hkeys("h"));
    r.add(j.hsetnx("h", "a", "x"));
    r.add(j.hstrlen("h", "a"));
    // lists
    r.add(j.rpush("l", "a", "b", "c"));
    r.add(j.lpush("l", "z"));
    r.add(j.lrange("l", 0, -1));
    r.add(j.lpop("l"));
    r.add(j.rpop("l"));
    r.add(j.llen("l"));
    r.add(j.lindex("l", 0));
    r.add(j.lset("l", 0, "x"));
    r.add(j.rpoplpush("l", "l2"));
    r.add(j.lmove("l", "l2", ListDirection.LEFT, ListDirection.RIGHT));
    r.add(j.lrange("l2", 0, -1));
    // sets
    r.add(j.sadd("s", "a", "b", "c"));
    r.add(j.sadd("t", "b", "c", "d"));
    r.add(j.smembers("s"));
    r.add(j.sismember("s", "a"));
    r.add(j.scard("s"));
    r.add(j.sinter("s", "t"));
    r.add(j.sunion("s", "t"));
    r.add(j.sdiff("s", "t"));
    r.add(j.sinterstore("st", "s", "t"));
    r.add(j.srem("s", "a"));
    r.add(j.smove("s", "t", "b"));
    r.add(j.smembers("t"));
    // sorted sets
    r.add(j.zadd("z", Map.of("a", 1.0, "b", 2.5, "c", 3.0)));
    r.add(j.zscore("z", "b"));
    r.add(j.zscore("z", "missing"));
    r.add(j.zincrby("z", 1.0, "a"));
    r.add(j.zrange("z", 0, -1));
    r.add(j.zrangeWithScores("z", 0, -1));
    r.add(j.zrank("z", "c"));
    r.add(j.zcard("z"));
    r.add(j.zcount("z", 0, 10));
    r.add(j.zrangeByScore("z", 1, 3));
    r.add(j.zmscore("z", "b", "missing"));
    r.add(j.zpopmin("z"));
    r.add(j.zpopmax("z", 2));
    r.add(j.zunionstore("zu", "z", "z2"));
    // bitmaps
    r.add(j.setbit("b", 7, true));
    r.add(j.getbit("b", 7));
    r.add(j.bitcount("b"));
    r.add(j.bitpos("b", true));
    // HyperLogLog
    r.add(j.pfadd("p", "a", "b", "c"));
    r.add(j.pfcount("p"));
    r.add(j.pfadd("q", "c", "d"));
    r.add(j.pfmerge("pq", "p", "q"));
    r.add(j.pfcount("pq"));
    // generic
    r.add(j.type("h"));
    r.add(j.rename("t", "t2"));
    r.add(j.exists("t", "t2"));
    r.add(j.expire("h", 100));
    r.add(j.ttl("h") > 0);
    r.add(j.del("h", "l", "s"));
    return r;
  }

  /** What a read of every key written by {@link #everyType} gives: each server's copy. */
  private static List<Object> stateOf(Jedis j) {
    return List.of(
        j.hgetAll("h"),
        j.lrange("l2", 0, -1),
        j.smembers("t2"),
        j.smembers("st"),
        j.zrangeWithScores("zu", 0, -1),
        j.bitcount("b"),
        j.pfcount("pq"),
        j.exists("h", "l", "s", "t"));
  }

  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void jedisWithItsDefaultsGetsWhatRedisGivesAndEveryServerHoldsTheWrites(int eventLoops)
      throws IOException {
    List<Object> expected;
    List<Object> expectedState;
    try (Jedis j = new Jedis("127.0.0.1", redis.direct().port())) {
      expected = everyType(j);
      expectedState = stateOf(j);
    }
    try (RunningMiddleware middleware = middleware("--event-loops", "" + eventLoops);
        Jedis j = new Jedis("127.0.0.1", middleware.port())) {
      assertThat(everyType(j)).isEqualTo(expected);
      assertThat(stateOf(j)).isEqualTo(expectedState);
    }
    for (RedisProcess server : redis.behind()) {
      try (Jedis j = new Jedis("127.0.0.1", server.port())) {
        assertThat(stateOf(j)).as("the copy on " + server.address()).isEqualTo(expectedState);
      }
    }
  }

  @Test
  void jedisOverRespThreeGetsWhatRedisGives() throws IOException {
    DefaultJedisClientConfig resp3 =
        DefaultJedisClientConfig.builder().protocol(RedisProtocol.RESP3).build();
    List<Object> expected;
    try (Jedis j = new Jedis(new HostAndPort("127.0.0.1", redis.direct().port()), resp3)) {
      expected = everyType(j);
    }
    try (RunningMiddleware middleware = middleware();
        Jedis j = new Jedis(new HostAndPort("127.0.0.1", middleware.port()), resp3)) {
      assertThat(j.clientId()).isPositive();
      assertThat(everyType(j)).isEqualTo(expected);
    }
  }

  @Test
  void underHashRoutingKeysOnDifferentServersAreRefusedClearly() throws IOException {
    try (RunningMiddleware middleware = middleware("--routing", "hash");
        Jedis j = new Jedis("127.0.0.1", middleware.port())) {
      j.sadd("a", "1", "2");
      int refused = 0;
      int served = 0;
      for (int i = 0; i < 32; i++) {
        String other = "k" + i;
        j.sadd(other, "2", "3");
        try {
          assertThat(j.sinter("a", other)).containsExactly("2");
          served++;
        } catch (JedisDataException e) {
          assertThat(e.getMessage())
              .isEqualTo(
                  "ERR the keys of 'sinter' are on different servers (--routing hash): give it"
                      + " keys that hash to the same servers, or one key per command");
          refused++;
        }
      }
      assertThat(served).as("keys on the same server as 'a'").isPositive();
      assertThat(refused).as("keys on the other server").isPositive();
      assertThat(j.spop("a")).isIn("1", "2"); // one server per key: no replica to differ
    }
  }

  @Test
  void spopIsRefusedWhileWritesGoToEveryServer() throws IOException {
    try (RunningMiddleware middleware = middleware();
        Jedis j = new Jedis("127.0.0.1", middleware.port())) {
      j.sadd("s", "a", "b");
      assertThatThrownBy(() -> j.spop("s"))
          .isInstanceOf(JedisDataException.class)
          .hasMessage(
              "ERR 'spop' picks at random, so replicas given it would differ: not supported while"
                  + " writes go to several servers");
      assertThat(j.scard("s")).isEqualTo(2);
    }
  }

  // The set holds integers: redis keeps a small one as an intset, in order, so two redis
  // processes list it alike (a small set of strings is a hash table ordered by a per-process seed).
  private static final String CLI_SCRIPT =
      """
      HSET h a 1 b 2
      HGETALL h
      SADD s 7 3
      SMEMBERS s
      ZADD z 1 a 2.5 b
      ZRANGE z 0 -1 WITHSCORES
      ZSCORE z b
      ZPOPMIN z
      HELLO 2
      """;

  private static String redisCli(int port, String protocolFlag) throws Exception {
    Process process =
        new ProcessBuilder("redis-cli", "--no-raw", "-p", "" + port, protocolFlag)
            .redirectErrorStream(true)
            .start();
    process.getOutputStream().write(CLI_SCRIPT.getBytes(StandardCharsets.UTF_8));
    process.getOutputStream().close();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
        .replaceAll("(\"id\"(\\s*=>\\s*|\\n\\s*\\d+\\)\\s*))\\(integer\\) \\d+", "$1<id>")
        .replaceAll("(\"version\"(\\s*=>\\s*|\\n\\s*\\d+\\)\\s*))\"[0-9.]+\"", "$1<version>");
  }

  @Test
  void redisCliInRespTwoAndThreeShowsWhatRedisShows() throws Exception {
    for (String protocol : List.of("-2", "-3")) {
      redis.flushAll();
      String expected = redisCli(redis.direct().port(), protocol);
      try (RunningMiddleware middleware = middleware()) {
        assertThat(redisCli(middleware.port(), protocol)).as(protocol).isEqualTo(expected);
      }
    }
  }
}
