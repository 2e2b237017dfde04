package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The middleware in front of three real memcached processes, compared with a fourth memcached used
 * directly.
 */
class MiddlewareIT {
  private static final List<MemcachedProcess> servers = new ArrayList<>();
  private static MemcachedProcess direct;

  @BeforeAll
  static void startServers() throws IOException {
    servers.addAll(MemcachedProcess.startMany(3));
    direct = MemcachedProcess.start();
  }

  @AfterAll
  static void stopServers() {
    servers.forEach(MemcachedProcess::close);
    if (direct != null) {
      direct.close();
    }
  }

  @BeforeEach
  void flushEverything() throws IOException {
    for (MemcachedProcess server : servers) {
      try (TextClient client = new TextClient(server.port())) {
        assertThat(client.call("flush_all\r\n")).isEqualTo("OK\r\n");
      }
    }
  }

  /**
   * Every command, the same replies through the middleware as from memcached directly: with the
   * workers, and with two event loops (which send single-server requests themselves).
   */
  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void everyCommandRepliesAsMemcachedDoes(int eventLoops) throws Exception {
    String[] flags =
        eventLoops == 0
            ? new String[] {"-t", "4", "-s", "false"}
            : new String[] {
              "-t", "1", "--worker-batch", "16", "-s", "false", "--event-loops", "" + eventLoops
            };
    List<String> viaDirect = sameRepliesAsMemcached(MiddlewareIT::runScript, flags);
    assertThat(viaDirect).contains("STORED\r\n", "EXISTS\r\n", "NOT_STORED\r\n", "TOUCHED\r\n");
  }

  /** A client's requests and the replies it read, in order. Its test's thread. */
  @FunctionalInterface
  interface Script {
    List<String> run(TextClient client) throws IOException;
  }

  /**
   * Runs {@code script} through the middleware (with {@code flags}, in front of three fresh
   * memcached processes) and against a fourth directly, asserts both got the same replies, and
   * returns them. Fresh processes, so that cas uniques (per-server counters) line up. The admin
   * commands ({@code flush_all}, {@code verbosity}) are allowed, to be compared too.
   */
  static List<String> sameRepliesAsMemcached(Script script, String... flags) throws Exception {
    List<MemcachedProcess> fresh = MemcachedProcess.startMany(4);
    List<String> allowingAdmin = new ArrayList<>(List.of(flags));
    allowingAdmin.addAll(List.of("--admin-commands", "true"));
    try {
      List<String> viaMiddleware;
      try (RunningMiddleware mw =
              RunningMiddleware.start(fresh.subList(0, 3), allowingAdmin.toArray(new String[0]));
          TextClient client = mw.client()) {
        viaMiddleware = script.run(client);
      }
      List<String> viaDirect;
      try (TextClient client = new TextClient(fresh.get(3).port())) {
        viaDirect = script.run(client);
      }
      assertThat(viaMiddleware).containsExactlyElementsOf(viaDirect);
      return viaDirect;
    } finally {
      fresh.forEach(MemcachedProcess::close);
    }
  }

  private static List<String> runScript(TextClient c) throws IOException {
    String big = binaryValue(200_000);
    List<String> replies = new ArrayList<>();
    String[] script = {
      "get nothing\r\n",
      "set k1 7 0 5\r\nhello\r\n",
      "get k1\r\n",
      "add k1 0 0 1\r\nx\r\n",
      "add k2 3 0 2\r\nab\r\n",
      "replace missing 0 0 1\r\nx\r\n",
      "replace k2 0 0 3\r\nabc\r\n",
      "append k2 0 0 2\r\nde\r\n",
      "prepend k2 0 0 2\r\nzz\r\n",
      "append missing 0 0 1\r\nx\r\n",
      "get k1 k2 missing k1\r\n",
      "gets k1\r\n",
      "cas k1 0 0 1 999999\r\nx\r\n",
      "cas missing 0 0 1 1\r\nx\r\n",
      "set n 0 0 2\r\n10\r\n",
      "incr n 5\r\n",
      "decr n 100\r\n",
      "incr n 18446744073709551615\r\n",
      "incr k1 1\r\n",
      "incr missing 1\r\n",
      "touch k1 100\r\n",
      "touch missing 100\r\n",
      "gat 100 k1 missing k2\r\n",
      "gats 100 k1\r\n",
      "delete k2\r\n",
      "delete k2\r\n",
      "delete k1 0\r\n",
      "set e 0 0 0\r\n\r\n",
      "get e\r\n",
      "set big 1 0 " + big.length() + "\r\n" + big + "\r\n",
      "get big\r\n",
      "set quiet 0 0 1 noreply\r\nq\r\n",
      "delete nothing noreply\r\n",
      "get quiet\r\n",
      "incr n 1 noreply\r\n",
      "get n\r\n",
      "bogus\r\n",
      "get\r\n",
      "set k 0 0\r\n",
      "version\r\n",
      "verbosity 0\r\n",
      "flush_all\r\n",
      "get n quiet\r\n",
      "flush_all 0 noreply\r\n",
      "get n\r\n",
    };
    for (String command : script) {
      replies.add(c.call(command));
    }
    // cas with the unique gets reports
    c.call("set c 0 0 1\r\nv\r\n");
    String gets = c.call("gets c\r\n");
    Matcher m = Pattern.compile("VALUE c 0 1 (\\d+)").matcher(gets);
    assertThat(m.find()).as(gets).isTrue();
    replies.add(c.call("cas c 0 0 1 " + m.group(1) + "\r\nw\r\n"));
    replies.add(c.call("get c\r\n"));
    return replies;
  }

  static String binaryValue(int length) {
    StringBuilder s = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      s.append((char) ((i * 31 + 7) % 256));
    }
    return s.toString();
  }

  @Test
  void replicatesSetToEveryServer() throws Exception {
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "2");
        TextClient client = mw.client()) {
      for (int i = 0; i < 5; i++) {
        assertThat(client.call("set rep" + i + " 1 0 3\r\nv" + i + "x\r\n"))
            .isEqualTo("STORED\r\n");
      }
    }
    for (MemcachedProcess server : servers) {
      try (TextClient client = new TextClient(server.port())) {
        for (int i = 0; i < 5; i++) {
          assertThat(client.call("get rep" + i + "\r\n"))
              .isEqualTo("VALUE rep" + i + " 1 3\r\nv" + i + "x\r\nEND\r\n");
        }
      }
    }
  }

  @Test
  void shardedMultiGetReturnsEveryKeyOnceInClientOrder() throws Exception {
    long[] before = cmdGetPerServer();
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "3", "-s", "true");
        TextClient client = mw.client()) {
      for (int i = 0; i < 10; i++) {
        client.call("set s" + i + " 0 0 2\r\nv" + i + "\r\n");
      }
      String keys = "s9 s0 missing1 s5 s3 s7 missing2 s1 s8 s2";
      String reply = client.call("get " + keys + "\r\n");
      StringBuilder expected = new StringBuilder();
      for (String key : keys.split(" ")) {
        if (!key.startsWith("missing")) {
          expected.append("VALUE ").append(key).append(" 0 2\r\nv").append(key.substring(1));
          expected.append("\r\n");
        }
      }
      expected.append("END\r\n");
      assertThat(reply).isEqualTo(expected.toString());
    }
    // memcached counts keys in cmd_get: 10 keys over 3 servers are split 4, 3, 3.
    long[] after = cmdGetPerServer();
    assertThat(new long[] {after[0] - before[0], after[1] - before[1], after[2] - before[2]})
        .containsExactly(4, 3, 3);
  }

  private static long[] cmdGetPerServer() throws IOException {
    long[] gets = new long[servers.size()];
    for (int s = 0; s < servers.size(); s++) {
      try (TextClient client = new TextClient(servers.get(s).port())) {
        gets[s] = stat(client.call("stats\r\n"), "cmd_get");
      }
    }
    return gets;
  }

  @Test
  void hashRoutingWritesEachKeyToItsReplicasAndSplitsMultiGets() throws Exception {
    List<String> keys = new ArrayList<>();
    try (RunningMiddleware mw =
            RunningMiddleware.start(servers, "-t", "2", "--routing", "hash", "--replication", "2");
        TextClient client = mw.client()) {
      for (int i = 0; i < 30; i++) {
        keys.add("h" + i);
        assertThat(client.call("set h" + i + " 0 0 1\r\nx\r\n")).isEqualTo("STORED\r\n");
      }
      String reply = client.call("get " + String.join(" ", keys) + "\r\n");
      assertThat(reply.split("VALUE ", -1)).hasSize(31);
      assertThat(reply).startsWith("VALUE h0 ").endsWith("VALUE h29 0 1\r\nx\r\nEND\r\n");
    }
    int[] copies = new int[keys.size()];
    int[] perServer = new int[servers.size()];
    for (int s = 0; s < servers.size(); s++) {
      try (TextClient client = new TextClient(servers.get(s).port())) {
        for (int k = 0; k < keys.size(); k++) {
          if (client.call("get " + keys.get(k) + "\r\n").startsWith("VALUE")) {
            copies[k]++;
            perServer[s]++;
          }
        }
      }
    }
    assertThat(copies).containsOnly(2);
    assertThat(perServer).doesNotContain(0);
  }

  @Test
  void answersPipelinedRequestsInOrder() throws Exception {
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "8", "-s", "true");
        TextClient client = mw.client()) {
      StringBuilder batch = new StringBuilder();
      for (int i = 0; i < 50; i++) {
        batch.append("set p").append(i).append(" 0 0 ").append(("" + i).length()).append("\r\n");
        batch.append(i).append("\r\n");
      }
      for (int i = 0; i < 50; i++) {
        batch.append("get p").append(i).append(" p").append((i + 1) % 50).append("\r\n");
        batch.append("bogus").append("\r\n");
      }
      client.send(batch.toString());
      for (int i = 0; i < 50; i++) {
        assertThat(client.readLine()).isEqualTo("STORED\r\n");
      }
      for (int i = 0; i < 50; i++) {
        int j = (i + 1) % 50;
        assertThat(client.readUntilEnd())
            .isEqualTo(
                "VALUE p"
                    + i
                    + " 0 "
                    + ("" + i).length()
                    + "\r\n"
                    + i
                    + "\r\n"
                    + "VALUE p"
                    + j
                    + " 0 "
                    + ("" + j).length()
                    + "\r\n"
                    + j
                    + "\r\n"
                    + "END\r\n");
        assertThat(client.readLine()).isEqualTo("ERROR\r\n");
      }
    }
  }

  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void buffersRepliesForAClientThatReadsSlowly(int eventLoops) throws Exception {
    String big = binaryValue(400_000);
    try (RunningMiddleware mw =
            RunningMiddleware.start(servers, "-t", "4", "--event-loops", "" + eventLoops);
        TextClient client = mw.client()) {
      assertThat(client.call("set big 3 0 " + big.length() + "\r\n" + big + "\r\n"))
          .isEqualTo("STORED\r\n");
      // ~12 MB of replies: far more than the socket buffers hold while the client is not reading.
      client.send("get big\r\n".repeat(30) + "version\r\n");
      Thread.sleep(500);
      String expected = "VALUE big 3 " + big.length() + "\r\n" + big + "\r\nEND\r\n";
      for (int i = 0; i < 30; i++) {
        assertThat(client.readUntilEnd()).isEqualTo(expected);
      }
      assertThat(client.readLine()).startsWith("VERSION ");
    }
  }

  @Test
  void answersStatsItself() throws Exception {
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "2");
        TextClient client = mw.client()) {
      client.call("get a b\r\n");
      // A worker records a request after it has written the reply (the reply-written timestamp is
      // part of the record), so the client can ask for stats before the count is in: poll briefly.
      String stats = client.call("stats\r\n");
      long deadlineNanos = System.nanoTime() + 5_000_000_000L;
      while (!stats.contains("STAT requests_multiget 1\r\n") && System.nanoTime() < deadlineNanos) {
        Thread.sleep(10);
        stats = client.call("stats\r\n");
      }
      assertThat(stats).contains("STAT threads 2\r\n", "STAT requests_multiget 1\r\n");
      assertThat(stats).contains("STAT server_0_address " + servers.get(0).address() + "\r\n");
      assertThat(stats).endsWith("END\r\n");
    }
  }

  static long stat(String stats, String name) {
    Matcher m = Pattern.compile("STAT " + name + " (\\d+)").matcher(stats);
    assertThat(m.find()).as(name).isTrue();
    return Long.parseLong(m.group(1));
  }
}
