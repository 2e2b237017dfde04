package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.protocol.RespReplies;
import dev.cachelab.middleware.servers.BackendHealth;
import dev.cachelab.middleware.testing.FreePorts;
import dev.cachelab.middleware.testing.MetricsScrape;
import dev.cachelab.middleware.testing.RedisProcess;
import dev.cachelab.middleware.testing.RedisServers;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The middleware's RESP2 front end ({@code --protocol redis}) in front of three real redis-server
 * processes, compared with a fourth redis used directly.
 */
class RedisFrontEndIT {
  @RegisterExtension static final RedisServers redis = RedisServers.perClass(3);

  /** The middleware in front of the servers, FLUSHALL and FLUSHDB allowed (the script has them). */
  private static RunningMiddleware middleware(String... flags) throws IOException {
    List<String> args = new ArrayList<>(List.of(flags));
    args.addAll(List.of("--admin-commands", "true"));
    return redis.middleware(args.toArray(new String[0]));
  }

  private static final String[][] SCRIPT = {
    {"SET", "k", "v"},
    {"GET", "k"},
    {"GET", "missing"},
    {"SET", "k", "v2", "NX"},
    {"SET", "k", "v3", "XX"},
    {"GET", "k"},
    {"SET", "n", "v", "XX"},
    {"SET", "e", "x", "EX", "1000"},
    {"TTL", "e"},
    {"SET", "p", "x", "PX", "100000", "NX"},
    {"SET", "bad", "x", "EX", "notanumber"},
    {"SET", "bad", "x", "BOGUS"},
    {"SET", "bin", "a\r\nb\0c"},
    {"GET", "bin"},
    {"SET", "big", "x".repeat(300_000)},
    {"GET", "big"},
    {"INCR", "c"},
    {"INCR", "c"},
    {"INCRBY", "c", "40"},
    {"DECR", "c"},
    {"DECRBY", "c", "2"},
    {"INCR", "k"},
    {"EXPIRE", "c", "500"},
    {"TTL", "c"},
    {"TTL", "missing"},
    {"EXISTS", "k"},
    {"EXISTS", "k", "c", "missing"},
    {"MSET", "m1", "a", "m2", "b", "m3", "c"},
    {"MGET", "m1", "missing", "m2", "m3"},
    {"APPEND", "m1", "zz"},
    {"STRLEN", "m1"},
    {"DEL", "m1", "m2", "missing"},
    {"MGET", "m1", "m2", "m3"},
    {"PING"},
    {"PING", "hello"},
    {"ECHO", "echo me"},
    {"GET"},
    {"MSET", "a"},
    {"NOSUCHCOMMAND", "x"},
    {"get", "k"},
    {"DBSIZE"},
    // Found by probing with unusual requests: answered as redis answers them.
    {"NOSUCH", "x".repeat(200), "y".repeat(200)},
    {"NOSUCH", "a".repeat(100), "b".repeat(100), "c"},
    {"NO\0SUCH", "a\0b"},
    {"NOSUCH", "\u00e9t\u00e9"},
    {"EXPIRE", "k", "100", "NX", "XX"},
    {"EXPIRE", "k", "100", "GT", "LT"},
    {"FLUSHALL", "ASYNC", "SYNC"},
    {"SELECT", "0"},
    {"SELECT", "x"},
    {"SELECT", "-1"},
    {"SELECT", "99999999999999999999"},
    {"SELECT"},
    {"PING", "a", "b"},
    {"SET", "k", "v", "EX", "0"},
    {"SET", "k", "v", "EX", "-1"},
    {"SET", "k", "v", "NX", "XX"},
    {"SET", "k", "v", "EX"},
    {"SET", "k", "v", "EX", "010"},
    {"SET", "big", "9223372036854775807"},
    {"INCR", "big"},
    {"DECRBY", "c", "-9223372036854775808"},
    {"INCRBY", "c", "9223372036854775808"},
    {"INCR", "bin"},
    {"MSET", "a", "1", "b"},
    {"MGET"},
    {"EXISTS", "k", "k", "k"},
    {"DEL", "k", "k"},
  };

  /** Every command of the script: the same replies through the middleware as from redis. */
  @Test
  void everyCommandRepliesAsRedisDoes() throws Exception {
    List<String> viaMiddleware;
    try (RunningMiddleware mw = middleware("-t", "4")) {
      viaMiddleware = replies(mw.port(), SCRIPT);
    }
    List<String> viaDirect = replies(redis.direct().port(), SCRIPT);
    assertThat(viaMiddleware).containsExactlyElementsOf(viaDirect);
    assertThat(viaDirect).contains("+OK\r\n", "$-1\r\n", ":42\r\n", ":1000\r\n", "+PONG\r\n");
  }

  /**
   * Under RESP3 a reply takes the shape its option gives it ({@code WITHSCORES} pairs of member and
   * double) only when the option is given, not when a key or member bears its name: a {@code ZUNION
   * 2 z WITHSCORES} (the keys {@code z} and {@code WITHSCORES}) had its members sent as doubles
   * ({@code ,a}), which no RESP3 client can read.
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void resp3RepliesTakeTheShapeOfAnOptionOnlyWhenItIsGiven(String mode) throws Exception {
    String[][] script = {
      {"HELLO", "3"},
      {"ZADD", "WITHSCORES", "1", "a", "2", "b", "3", "c", "4", "d"},
      {"ZADD", "z", "1", "WITHSCORE", "5", "e"},
      {"SET", "IDX", "abcd"},
      {"SET", "k", "abd"},
      {"ZUNION", "2", "z", "WITHSCORES"},
      {"ZINTER", "2", "WITHSCORES", "WITHSCORES"},
      {"ZDIFF", "2", "WITHSCORES", "z"},
      {"ZUNION", "1", "WITHSCORES", "WITHSCORES"},
      {"ZRANK", "z", "WITHSCORE"},
      {"LCS", "k", "IDX"},
      {"LCS", "IDX", "k", "IDX"},
      {"ZRANGE", "WITHSCORES", "0", "1"},
      {"ZRANGE", "WITHSCORES", "0", "1", "WITHSCORES"},
    };
    redis.flushAll();
    List<String> viaMiddleware;
    try (RunningMiddleware mw = middleware((mode + " -s false").split(" "))) {
      viaMiddleware = replies(mw.port(), script);
    }
    List<String> viaDirect = replies(redis.direct().port(), script);
    assertThat(viaMiddleware.subList(1, script.length))
        .as(mode)
        .containsExactlyElementsOf(viaDirect.subList(1, script.length));
    assertThat(viaDirect.get(5))
        .as("six members, no scores")
        .startsWith("*6\r\n$9\r\nWITHSCORE\r\n");
  }

  /**
   * {@code SETRANGE} and {@code SETBIT} past {@code --max-value-bytes} are refused: a 40-byte
   * {@code SETRANGE k 536870000 x} made every server hold a 512 MB string.
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void offsetsPastTheValueLimitAreRefused(String mode) throws Exception {
    redis.flushAll();
    try (RunningMiddleware mw = middleware((mode + " --max-value-bytes 1048576").split(" "));
        RespClient client = new RespClient(mw.port())) {
      String tooLarge =
          "-ERR string exceeds maximum allowed size (--max-value-bytes: 1048576 bytes)\r\n";
      assertThat(client.call("SETRANGE", "k", "536870000", "x")).as(mode).isEqualTo(tooLarge);
      assertThat(client.call("SETBIT", "k", "8388608", "1")).as(mode).isEqualTo(tooLarge);
      assertThat(client.call("BITFIELD", "k", "SET", "u8", "#1048576", "1"))
          .as(mode)
          .isEqualTo(tooLarge);
      assertThat(client.call("SETRANGE", "k", "1048575", "x")).as(mode).isEqualTo(":1048576\r\n");
      assertThat(client.call("SETBIT", "b", "8388607", "1")).as(mode).isEqualTo(":0\r\n");
    }
    for (RedisProcess server : redis.behind()) {
      try (RespClient direct = new RespClient(server.port())) {
        assertThat(direct.call("STRLEN", "k")).as(mode).isEqualTo(":1048576\r\n");
      }
    }
  }

  /** The replies to the script's commands, sent one at a time on one connection to {@code port}. */
  private static List<String> replies(int port, String[][] script) throws IOException {
    List<String> replies = new ArrayList<>();
    try (RespClient client = new RespClient(port)) {
      for (String[] command : script) {
        replies.add(client.call(command));
      }
    }
    return replies;
  }

  @Test
  void writesGoToEveryServerAndReadsRoundRobin() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "2");
        RespClient client = new RespClient(mw.port())) {
      assertThat(client.call("SET", "w", "1", "EX", "100")).isEqualTo("+OK\r\n");
      assertThat(client.call("MSET", "w2", "a", "w3", "b")).isEqualTo("+OK\r\n");
      for (RedisProcess server : redis.behind()) {
        try (RespClient s = new RespClient(server.port())) {
          assertThat(s.call("GET", "w")).isEqualTo("$1\r\n1\r\n");
          assertThat(s.call("MGET", "w2", "w3")).isEqualTo("*2\r\n$1\r\na\r\n$1\r\nb\r\n");
          assertThat(s.call("TTL", "w")).isIn(":100\r\n", ":99\r\n");
          // Now each server holds its own value of r, to see which one a read went to.
          assertThat(s.call("SET", "r", server.address())).isEqualTo("+OK\r\n");
        }
      }
      Set<String> seen = new HashSet<>();
      for (int i = 0; i < 6; i++) {
        seen.add(client.call("GET", "r"));
      }
      assertThat(seen).hasSize(3);
      assertThat(client.call("DEL", "w")).isEqualTo(":1\r\n");
      for (RedisProcess server : redis.behind()) {
        try (RespClient s = new RespClient(server.port())) {
          assertThat(s.call("EXISTS", "w")).isEqualTo(":0\r\n");
        }
      }
    }
  }

  @Test
  void shardedMgetIsSplitOverTheServersAndMergedInKeyOrder() throws Exception {
    // 7 keys over 3 servers: keys 0-2 to server 0, 3-4 to server 1, 5-6 to server 2. Each key is
    // stored only on the server that should be asked for it.
    String[] keys = {"s0", "s1", "s2", "s3", "s4", "s5", "s6"};
    int[] serverOf = {0, 0, 0, 1, 1, 2, 2};
    for (int k = 0; k < keys.length; k++) {
      if (k == 4) {
        continue; // a miss in the middle
      }
      try (RespClient s = new RespClient(redis.behind().get(serverOf[k]).port())) {
        s.call("SET", keys[k], "value-" + k);
      }
    }
    try (RunningMiddleware mw = middleware("-t", "2", "-s", "true");
        RespClient client = new RespClient(mw.port())) {
      StringBuilder expected = new StringBuilder("*7\r\n");
      for (int k = 0; k < keys.length; k++) {
        expected.append(k == 4 ? "$-1\r\n" : "$7\r\nvalue-" + k + "\r\n");
      }
      String[] mget = new String[keys.length + 1];
      mget[0] = "MGET";
      System.arraycopy(keys, 0, mget, 1, keys.length);
      assertThat(client.call(mget)).isEqualTo(expected.toString());
      String[] exists = mget.clone();
      exists[0] = "EXISTS";
      assertThat(client.call(exists)).isEqualTo(":6\r\n");
      assertThat(client.call("MGET", "s0"))
          .isEqualTo("$7\r\nvalue-0\r\n".replace("$7", "*1\r\n$7"));
    }
  }

  @Test
  void pipelinedAndInlineCommandsAreAnsweredInOrderWithErrorsInPlace() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "4", "--worker-batch", "8");
        RespClient client = new RespClient(mw.port())) {
      ByteArrayOutputStream pipeline = new ByteArrayOutputStream();
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        pipeline.writeBytes(RespReplies.command("SET", "p" + i, "v" + i));
        expected.add("+OK\r\n");
        if (i % 7 == 0) {
          pipeline.writeBytes(RespReplies.command("BOGUS"));
          expected.add("-ERR unknown command 'BOGUS', with args beginning with: \r\n");
        }
        pipeline.writeBytes(("GET p" + i + "\r\n").getBytes());
        String value = "v" + i;
        expected.add("$" + value.length() + "\r\n" + value + "\r\n");
        if (i % 11 == 0) {
          pipeline.writeBytes("PING\r\n".getBytes());
          expected.add("+PONG\r\n");
        }
      }
      client.send(pipeline.toByteArray());
      List<String> replies = new ArrayList<>();
      for (int i = 0; i < expected.size(); i++) {
        replies.add(client.readReply());
      }
      assertThat(replies).containsExactlyElementsOf(expected);
    }
  }

  @Test
  void aFramingErrorIsAnsweredAfterTheRepliesBeforeItAndClosesTheConnection() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "2");
        RespClient client = new RespClient(mw.port())) {
      client.send(
          new String(RespReplies.command("SET", "f", "1"), "ISO-8859-1")
              + "GET f\r\n"
              + "*1\r\n$zz\r\n"
              + "GET f\r\n");
      assertThat(client.readReply()).isEqualTo("+OK\r\n");
      assertThat(client.readReply()).isEqualTo("$1\r\n1\r\n");
      assertThat(client.readReply()).isEqualTo("-ERR Protocol error: invalid bulk length\r\n");
      assertThat(client.closedByPeer()).isTrue();
    }
  }

  /**
   * An MGET of 300,000 keys (2.1 MB, more than --max-value-bytes + 1 MiB) is refused with an error
   * and the connection closed; before, it was never answered. Other clients are served meanwhile.
   */
  @Test
  void aRequestLargerThanTheLargestBufferIsRefusedNotLeftWaiting() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "2");
        RespClient client = new RespClient(mw.port());
        RespClient good = new RespClient(mw.port())) {
      StringBuilder mget = new StringBuilder("*300001\r\n$4\r\nMGET\r\n");
      String arg = "$1\r\nx\r\n";
      mget.append(arg.repeat(300_000));
      try {
        client.send(mget.toString());
      } catch (IOException closedWhileSending) {
        // refused before the last bytes were sent
      }
      assertThat(client.readReply())
          .isEqualTo("-ERR Protocol error: request too large (expected: <= 2097152 bytes)\r\n");
      assertThat(client.closedByPeer()).isTrue();
      assertThat(good.call("PING")).isEqualTo("+PONG\r\n");
    }
  }

  @Test
  void partialRequestsPastTheBufferBudgetAreClosedWithARespError() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "2", "--buffer-budget-bytes", "" + (4 << 20));
        RespClient good = new RespClient(mw.port())) {
      byte[] header = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000\r\n".getBytes("ISO-8859-1");
      byte[] partialValue = new byte[300_000];
      List<Socket> bad = new ArrayList<>();
      int closed = 0;
      List<String> replies = new ArrayList<>();
      try {
        for (int i = 0; i < 40; i++) {
          Socket s = new Socket("127.0.0.1", mw.port());
          bad.add(s);
          try {
            s.getOutputStream().write(header);
            s.getOutputStream().write(partialValue);
            s.getOutputStream().flush();
          } catch (IOException closedWhileWriting) {
            // closed past the budget while this client was still sending
          }
          assertThat(good.call("PING")).isEqualTo("+PONG\r\n");
        }
        for (Socket s : bad) {
          s.setSoTimeout(200);
          try {
            byte[] got = s.getInputStream().readAllBytes();
            closed++;
            if (got.length > 0) {
              replies.add(new String(got, "ISO-8859-1"));
            }
          } catch (java.net.SocketTimeoutException stillOpen) {
            // under the budget: still waiting for the rest of its value
          } catch (IOException reset) {
            closed++; // closed, its error reply lost to the reset
          }
        }
      } finally {
        for (Socket s : bad) {
          s.close();
        }
      }
      assertThat(closed).as("connections closed past the budget").isPositive();
      assertThat(replies).isNotEmpty().containsOnly("-ERR out of memory reading request\r\n");
      assertThat(good.call("SET", "after", "ok")).isEqualTo("+OK\r\n");
      assertThat(good.call("GET", "after")).isEqualTo("$2\r\nok\r\n");
    }
  }

  @Test
  void aStoppedRedisIsEjectedReadsGoElsewhereAndItReturnsAfterAPingProbe() throws Exception {
    try (RedisProcess a = RedisProcess.start();
        RedisProcess b = RedisProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.startWithAddresses(
                List.of(a.address(), b.address()),
                "--protocol",
                "redis",
                "-t",
                "4",
                "--backend-timeout-ms",
                "300",
                "--eject-after-failures",
                "1",
                "--eject-retry-ms",
                "300");
        RespClient client = new RespClient(mw.port())) {
      assertThat(client.call("SET", "hot", "v")).isEqualTo("+OK\r\n");
      b.signal("STOP");
      BackendHealth health = mw.middleware().stats().health(1);
      List<String> replies = new ArrayList<>();
      try {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (health.ejections() == 0 && System.nanoTime() < deadline) {
          replies.add(client.call("GET", "hot"));
        }
        for (int i = 0; i < 20; i++) {
          replies.add(client.call("GET", "hot"));
        }
      } finally {
        b.signal("CONT");
      }
      assertThat(health.ejections()).as("ejections").isGreaterThanOrEqualTo(1);
      // Every GET answered: the value, or the timeout of the one that found b stopped.
      assertThat(replies)
          .allMatch(r -> r.equals("$1\r\nv\r\n") || r.startsWith("-ERR backend " + b.address()));
      assertThat(replies.subList(replies.size() - 20, replies.size()))
          .as("reads while b is ejected go to a")
          .containsOnly("$1\r\nv\r\n");
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (health.ejected() && System.nanoTime() < deadline) {
        client.call("GET", "hot");
        Thread.sleep(50);
      }
      assertThat(health.ejected()).as("back in rotation after a PING probe").isFalse();
      assertThat(health.returns()).isGreaterThanOrEqualTo(1);
      assertThat(client.call("INFO")).contains("server_1_ejections:", "server_1_returns:");
      assertThat(client.call("SET", "back", "1")).isEqualTo("+OK\r\n");
      try (RespClient direct = new RespClient(b.port())) {
        assertThat(direct.call("GET", "back")).isEqualTo("$1\r\n1\r\n");
      }
    }
  }

  @Test
  void hashRoutingWritesToTheKeysReplicasAndSplitsMget() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "2", "--routing", "hash", "--replication", "2");
        RespClient client = new RespClient(mw.port())) {
      for (int k = 0; k < 30; k++) {
        assertThat(client.call("SET", "h" + k, "v" + k)).isEqualTo("+OK\r\n");
      }
      int copies = 0;
      for (RedisProcess server : redis.behind()) {
        try (RespClient s = new RespClient(server.port())) {
          copies += Integer.parseInt(s.call("DBSIZE").substring(1).trim());
        }
      }
      assertThat(copies).as("30 keys x 2 replicas").isEqualTo(60);
      StringBuilder expected = new StringBuilder("*31\r\n");
      String[] mget = new String[32];
      mget[0] = "MGET";
      for (int k = 0; k < 30; k++) {
        mget[k + 1] = "h" + k;
        String v = "v" + k;
        expected.append("$").append(v.length()).append("\r\n").append(v).append("\r\n");
      }
      mget[31] = "missing";
      expected.append("$-1\r\n");
      assertThat(client.call(mget)).isEqualTo(expected.toString());
      String[] mset = new String[21];
      mset[0] = "MSET";
      for (int k = 0; k < 10; k++) {
        mset[1 + 2 * k] = "h" + k;
        mset[2 + 2 * k] = "x";
      }
      assertThat(client.call(mset)) // 10 keys over 3 servers: not all on one replica set
          .startsWith("-ERR the keys of 'mset' are on different servers");
      assertThat(client.call("DEL", "h1")).isEqualTo(":1\r\n");
      assertThat(client.call("EXISTS", "h1", "h2", "h3")).isEqualTo(":2\r\n");
    }
  }

  @Test
  void quitAnswersOkAndCloses() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "1");
        RespClient client = new RespClient(mw.port())) {
      assertThat(client.call("QUIT")).isEqualTo("+OK\r\n");
      assertThat(client.closedByPeer()).isTrue();
    }
  }

  @Test
  void aDeadBackendGetsAnErrorReplyNotSilence() throws Exception {
    try (RedisProcess doomed = RedisProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.startWithAddresses(
                List.of(doomed.address()),
                "--protocol",
                "redis",
                "-t",
                "2",
                "--backend-timeout-ms",
                "500");
        RespClient client = new RespClient(mw.port())) {
      assertThat(client.call("SET", "d", "1")).isEqualTo("+OK\r\n");
      doomed.close();
      String down = "-ERR backend " + doomed.address() + " unavailable\r\n";
      // A write sent on a connection the dead server had closed cannot be told from one it read
      // before it died: the middleware does not send it again, and says it may have been applied.
      String mayHaveApplied =
          "-ERR backend "
              + doomed.address()
              + " connection broke before its reply; the write may have been applied\r\n";
      for (int i = 0; i < 4; i++) {
        assertThat(client.call("GET", "d")).isEqualTo(down);
        assertThat(client.call("SET", "d", "2")).isIn(down, mayHaveApplied);
      }
      assertThat(client.call("PING")).isEqualTo("+PONG\r\n");
    }
  }

  @Test
  void manyConcurrentClientsThroughBatchingWorkersEachSeeTheirOwnValues() throws Exception {
    try (RunningMiddleware mw = middleware("-t", "2", "-s", "true", "--worker-batch", "16")) {
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Future<Integer>> results = new ArrayList<>();
        for (int c = 0; c < 8; c++) {
          int id = c;
          results.add(
              pool.submit(
                  () -> {
                    int checked = 0;
                    try (RespClient client = new RespClient(mw.port())) {
                      for (int i = 0; i < 150; i++) {
                        String key = "c" + id + "-" + i;
                        assertThat(client.call("SET", key, key)).isEqualTo("+OK\r\n");
                        String bulk = "$" + key.length() + "\r\n" + key + "\r\n";
                        assertThat(client.call("GET", key)).isEqualTo(bulk);
                        assertThat(client.call("MGET", key, "nope", key))
                            .isEqualTo("*3\r\n" + bulk + "$-1\r\n" + bulk);
                        checked++;
                      }
                    }
                    return checked;
                  }));
        }
        for (Future<Integer> result : results) {
          assertThat(result.get(120, TimeUnit.SECONDS)).isEqualTo(150);
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void redisRequestsAreCountedPerOpTypeInMetricsAndInfo() throws Exception {
    int metricsPort = FreePorts.next();
    try (RunningMiddleware mw =
            middleware(
                "-t",
                "2",
                "--window-ms",
                "50",
                "--metrics-port",
                "" + metricsPort,
                "--metrics-address",
                "127.0.0.1");
        RespClient client = new RespClient(mw.port())) {
      client.call("SET", "a", "1");
      client.call("GET", "a");
      client.call("MGET", "a", "b");
      client.call("NOPE");
      String body =
          MetricsScrape.until(
              metricsPort, "cachelab_middleware_response_time_seconds_count{op=\"multiget\"} 1");
      assertThat(body)
          .contains(
              "cachelab_middleware_requests_total{op=\"get\"} 1",
              "cachelab_middleware_requests_total{op=\"set\"} 1",
              "cachelab_middleware_requests_total{op=\"multiget\"} 1",
              "cachelab_middleware_keys_requested_total{op=\"multiget\"} 2",
              "cachelab_middleware_hits_total{op=\"multiget\"} 1",
              "cachelab_middleware_hits_total{op=\"get\"} 1",
              "cachelab_middleware_errors_total{kind=\"client_error\",op=\"other\"} 1",
              "cachelab_middleware_queue_time_seconds_count{op=\"get\"} 1",
              "cachelab_middleware_service_time_seconds_count{op=\"set\"} 1");
      String info = client.call("INFO");
      assertThat(info).startsWith("$").contains("redis_mode:proxy", "curr_connections:1");
    }
  }
}
