package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.ClientThreads;
import dev.cachelab.middleware.testing.FreePorts;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RedisProcess;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The middleware with two event loops ({@code --event-loops 2 -t 1 --worker-batch 16}) in front of
 * real memcached and redis servers: the replies of memcached itself, in order, for many pipelining
 * clients; requests needing several servers (replicated writes, split multi-gets) kept in order
 * with the loops' own single-server requests; and servers that stop, restart or are down at start
 * answered within the backend timeout and served again once back.
 */
class EventLoopIT {
  private static final String[] LOOPS = {"-t", "1", "--worker-batch", "16", "--event-loops", "2"};
  private static final String VALUE_K = "VALUE k 0 1\r\nv\r\nEND\r\n";
  // Keys over every server under hash routing (and every server in turn under round-robin).
  private static final List<String> KEYS =
      List.of("k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11");

  /** The middleware with two event loops in front of {@code servers}, with {@code flags}. */
  private static RunningMiddleware loops(List<MemcachedProcess> servers, String... flags)
      throws IOException {
    List<String> args = new ArrayList<>(List.of(LOOPS));
    args.addAll(List.of(flags));
    return RunningMiddleware.start(servers, args.toArray(new String[0]));
  }

  /** Meta and quiet commands, which answer nothing or only on a miss (see also MiddlewareIT). */
  @Test
  void metaAndQuietCommandsReplyAsMemcachedDoes() throws Exception {
    List<String> flags = new ArrayList<>(List.of(LOOPS));
    flags.addAll(List.of("-s", "false"));
    List<String> viaDirect =
        MiddlewareIT.sameRepliesAsMemcached(
            EventLoopIT::runMetaScript, flags.toArray(new String[0]));
    assertThat(viaDirect).contains("HD\r\nMN\r\n", "EN\r\nMN\r\n", "MN\r\n");
  }

  /**
   * Each command followed by {@code mn}; the reply is everything up to {@code MN} (so noreply and
   * quiet commands, which answer nothing, are compared too).
   */
  private static List<String> runMetaScript(TextClient c) throws IOException {
    String long60k = "x".repeat(60_000);
    String[] script = {
      "ms mk 5 T0 F3\r\nhello\r\n",
      "mg mk v f t\r\n",
      "mg mk s v c\r\n",
      "mg missing v\r\n",
      "mg missing v q\r\n",
      "mg mk k v q\r\n",
      "ma mc N0 J5\r\n",
      "ma mc v\r\n",
      "ma mc MD D2 v\r\n",
      "md mk q\r\n",
      "mg mk v\r\n",
      "md mk\r\n",
      "ms long " + long60k.length() + "\r\n" + long60k + "\r\n",
      "mg long s v\r\n",
      "set quiet 0 0 1 noreply\r\nq\r\n",
      "delete nothing noreply\r\n",
      "get quiet\r\n",
      "incr quiet 1 noreply\r\n",
      "touch quiet 100 noreply\r\n",
      "get quiet\r\n",
    };
    List<String> replies = new ArrayList<>();
    for (String command : script) {
      c.send(command + "mn\r\n");
      StringBuilder reply = new StringBuilder();
      String line;
      do {
        line = c.readLine();
        reply.append(line);
      } while (!line.equals("MN\r\n"));
      replies.add(reply.toString());
    }
    return replies;
  }

  /**
   * Round-robin routing (writes to every server: a worker's; reads: the loops') and hash routing
   * (every single-key request on a loop).
   */
  @ParameterizedTest(name = "--routing {0}")
  @ValueSource(strings = {"round-robin", "hash"})
  void sixteenPipeliningClientsGetTheirRepliesInOrderAndStatsCountThemAll(String routing)
      throws Exception {
    int clientCount = 16;
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    List<TextClient> clients = new ArrayList<>();
    try (RunningMiddleware mw = loops(servers, "-s", "false", "--routing", routing)) {
      for (int c = 0; c < clientCount; c++) {
        clients.add(mw.client());
      }
      atOnce(clientCount, id -> pipelineMixedRequests(clients.get(id), "c" + id));
      try (TextClient stats = mw.client()) {
        String reply = stats.call("stats\r\n");
        assertThat(reply)
            .as("the connections of both loops")
            .contains("STAT curr_connections " + (clientCount + 1) + "\r\n");
      }
    } finally {
      for (TextClient client : clients) {
        client.close();
      }
      servers.forEach(MemcachedProcess::close);
    }
  }

  /** One client's run in {@link #atOnce}; its own thread. */
  @FunctionalInterface
  private interface ClientRun {
    void run(int id) throws Exception;
  }

  /** Runs {@code count} clients at once, each on its own thread; rethrows the first failure. */
  private static void atOnce(int count, ClientRun run) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(count);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int c = 0; c < count; c++) {
        int id = c;
        runs.add(
            pool.submit(
                () -> {
                  run.run(id);
                  return null;
                }));
      }
      for (Future<?> done : runs) {
        done.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** memcached's reply to a get of {@code key} holding {@code value} (flags 0). */
  private static String valueReply(String key, String value) {
    return "VALUE " + key + " 0 " + value.length() + "\r\n" + value + "\r\nEND\r\n";
  }

  /** 50 requests of every kind in one write; each reply checked in order. */
  private static void pipelineMixedRequests(TextClient client, String prefix) throws IOException {
    assertThat(client.call("set " + prefix + "n 0 0 1\r\n0\r\n")).isEqualTo("STORED\r\n");
    List<String> commands = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    int counter = 0;
    for (int j = 0; j < 50; j++) {
      String key = prefix + "-" + (j - j % 5);
      String value = prefix + "v" + j;
      switch (j % 5) {
        case 0 -> {
          commands.add("set " + key + " 5 0 " + value.length() + "\r\n" + value + "\r\n");
          expected.add("STORED\r\n");
        }
        case 1 -> {
          String stored = prefix + "v" + (j - 1);
          commands.add("get " + key + "\r\n");
          expected.add("VALUE " + key + " 5 " + stored.length() + "\r\n" + stored + "\r\nEND\r\n");
        }
        case 2 -> {
          commands.add("incr " + prefix + "n 1\r\n");
          expected.add(++counter + "\r\n");
        }
        case 3 -> {
          commands.add("delete " + key + "\r\n");
          expected.add("DELETED\r\n");
        }
        default -> {
          commands.add("get " + key + " " + key + "x\r\n");
          expected.add("END\r\n");
        }
      }
    }
    client.send(String.join("", commands));
    for (int j = 0; j < commands.size(); j++) {
      assertThat(client.readReply(commands.get(j)))
          .as(prefix + " reply " + j)
          .isEqualTo(expected.get(j));
    }
  }

  @Test
  void splitMultiGetsMergeInKeyOrderAndReplicatedSetsComeBeforeLaterGets() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = loops(servers, "-s", "true");
        TextClient client = mw.client()) {
      for (int i = 0; i < 10; i++) {
        assertThat(client.call("set s" + i + " 0 0 2\r\nv" + i + "\r\n")).isEqualTo("STORED\r\n");
      }
      for (MemcachedProcess server : servers) {
        try (TextClient direct = new TextClient(server.port())) {
          for (int i = 0; i < 10; i++) {
            assertThat(direct.call("get s" + i + "\r\n"))
                .as("s" + i + " on " + server.address())
                .isEqualTo("VALUE s" + i + " 0 2\r\nv" + i + "\r\nEND\r\n");
          }
        }
      }
      String keys = "s9 s0 missing1 s5 s3 s7 missing2 s1 s8 s2";
      StringBuilder merged = new StringBuilder();
      for (String key : keys.split(" ")) {
        if (!key.startsWith("missing")) {
          merged.append("VALUE ").append(key).append(" 0 2\r\nv").append(key.substring(1));
          merged.append("\r\n");
        }
      }
      merged.append("END\r\n");
      for (int i = 0; i < 5; i++) {
        assertThat(client.call("get " + keys + "\r\n")).isEqualTo(merged.toString());
      }

      // Sets (to every server, by a worker) and single-key gets (by the loop) pipelined: each get
      // sees the set before it, whichever path the chain holding it took.
      StringBuilder pipeline = new StringBuilder();
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        String value = "v" + i;
        pipeline.append("set r 0 0 ").append(value.length()).append("\r\n");
        pipeline.append(value).append("\r\n");
        expected.add("STORED\r\n");
        for (int g = 0; g < 15; g++) {
          pipeline.append("get r\r\n");
          expected.add(valueReply("r", value));
        }
      }
      client.send(pipeline.toString());
      for (int i = 0; i < expected.size(); i++) {
        String reply =
            expected.get(i).startsWith("VALUE") ? client.readUntilEnd() : client.readLine();
        assertThat(reply).as("reply " + i).isEqualTo(expected.get(i));
      }
      // The get written on its own just after the set (a later selector round, a new chain).
      for (int i = 0; i < 20; i++) {
        String value = "w" + i;
        client.send("set r 0 0 " + value.length() + "\r\n" + value + "\r\n");
        Thread.sleep(1);
        client.send("get r\r\n");
        assertThat(client.readLine()).isEqualTo("STORED\r\n");
        assertThat(client.readUntilEnd()).isEqualTo(valueReply("r", value));
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  @Test
  void redisCommandsAndPipelinesOfSixteenWithKibibyteValuesAreAnsweredInOrder() throws Exception {
    List<RedisProcess> servers = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        servers.add(RedisProcess.start());
      }
      List<String> flags = new ArrayList<>(List.of("--protocol", "redis", "-s", "false"));
      flags.addAll(List.of(LOOPS));
      try (RunningMiddleware mw =
          RunningMiddleware.startWithAddresses(
              servers.stream().map(RedisProcess::address).toList(), flags.toArray(new String[0]))) {
        try (RespClient client = new RespClient(mw.port())) {
          assertThat(client.call("SET", "a", "1")).isEqualTo("+OK\r\n");
          assertThat(client.call("SET", "b", "22")).isEqualTo("+OK\r\n");
          assertThat(client.call("GET", "a")).isEqualTo("$1\r\n1\r\n");
          assertThat(client.call("GET", "missing")).isEqualTo("$-1\r\n");
          assertThat(client.call("MGET", "b", "missing", "a"))
              .isEqualTo("*3\r\n$2\r\n22\r\n$-1\r\n$1\r\n1\r\n");
        }
        atOnce(4, id -> pipelinesOfSixteen(mw.port(), "c" + id));
      }
    } finally {
      servers.forEach(RedisProcess::close);
    }
  }

  /** 20 pipelines of 8 SETs and 8 GETs with 1 KiB values, each reply checked in order. */
  private static void pipelinesOfSixteen(int port, String prefix) throws IOException {
    try (RespClient client = new RespClient(port)) {
      for (int round = 0; round < 20; round++) {
        StringBuilder pipeline = new StringBuilder();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          String key = prefix + "-" + round + "-" + i;
          String value = kibibyte(key);
          pipeline.append(command("SET", key, value));
          expected.add("+OK\r\n");
          pipeline.append(command("GET", key));
          expected.add("$1024\r\n" + value + "\r\n");
        }
        client.send(pipeline.toString());
        for (int i = 0; i < expected.size(); i++) {
          assertThat(client.readReply())
              .as(prefix + " round " + round + " reply " + i)
              .isEqualTo(expected.get(i));
        }
      }
    }
  }

  private static String kibibyte(String key) {
    StringBuilder value = new StringBuilder(1024);
    while (value.length() < 1024) {
      value.append(key).append('.');
    }
    return value.substring(0, 1024);
  }

  private static String command(String... parts) {
    StringBuilder out = new StringBuilder("*" + parts.length + "\r\n");
    for (String part : parts) {
      out.append('$').append(part.length()).append("\r\n").append(part).append("\r\n");
    }
    return out.toString();
  }

  /**
   * Under hash routing each key is read from the server it was written to, whichever loop routes
   * it, while both loops route at once.
   */
  @Test
  void hashRoutedKeysAreReadFromTheirServerByBothLoopsAtOnce() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    List<String> problems = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger hits = new AtomicInteger();
    try (RunningMiddleware mw = loops(servers, "-s", "false", "--routing", "hash")) {
      try (TextClient client = mw.client()) {
        for (String key : KEYS) {
          assertThat(client.call("set " + key + " 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
        }
      }
      try (ClientThreads clients =
          ClientThreads.start(
              8,
              "hash-reader",
              (id, stop) -> {
                try (TextClient client = mw.client()) {
                  for (int i = 0; i < 300 && !stop.get(); i++) {
                    String key = KEYS.get((id + i) % KEYS.size());
                    String reply = client.call("get " + key + "\r\n");
                    if (reply.equals("VALUE " + key + " 0 1\r\nv\r\nEND\r\n")) {
                      hits.incrementAndGet();
                    } else {
                      problems.add(key + ": " + reply);
                    }
                  }
                } catch (IOException e) {
                  problems.add(e.toString());
                }
              })) {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (hits.get() + problems.size() < 8 * 300 && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
      }
      assertThat(problems).isEmpty();
      assertThat(hits.get()).isEqualTo(8 * 300);
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * Values near memcached's 1 MB item limit written and read on the loops' own connections (hash
   * routing: one server a key), several clients at once: sends larger than a socket takes at once.
   */
  @Test
  void largeValuesAreWrittenAndReadOnTheLoopsConnections() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = loops(servers, "-s", "false", "--routing", "hash")) {
      atOnce(
          4,
          id -> {
            try (TextClient client = mw.client()) {
              StringBuilder sets = new StringBuilder();
              List<String> values = new ArrayList<>();
              for (int i = 0; i < 3; i++) {
                String value = MiddlewareIT.binaryValue(900_000 - 1000 * (id * 3 + i));
                values.add(value);
                sets.append("set big" + id + "-" + i + " 0 0 " + value.length() + "\r\n");
                sets.append(value).append("\r\n");
              }
              client.send(sets + "get big" + id + "-0\r\nget big" + id + "-2\r\n");
              for (int i = 0; i < 3; i++) {
                assertThat(client.readLine()).isEqualTo("STORED\r\n");
              }
              for (int i : new int[] {0, 2}) {
                assertThat(client.readUntilEnd())
                    .isEqualTo(valueReply("big" + id + "-" + i, values.get(i)));
              }
            }
          });
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * A client that reads none of its replies (12 MB of them) holds up no other client of its loop,
   * and gets every reply right when it reads them.
   */
  @Test
  void aClientThatDoesNotReadHoldsUpNoOtherClient() throws Exception {
    String big = MiddlewareIT.binaryValue(400_000);
    String bigReply = "VALUE big 3 " + big.length() + "\r\n" + big + "\r\nEND\r\n";
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = loops(servers, "-s", "false");
        TextClient slow = mw.client()) {
      assertThat(slow.call("set big 3 0 " + big.length() + "\r\n" + big + "\r\n"))
          .isEqualTo("STORED\r\n");
      assertThat(slow.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
      slow.send("get big\r\n".repeat(30));
      Thread.sleep(300);
      for (int c = 0; c < 4; c++) { // clients handed round-robin to the loops: two on its loop
        try (TextClient other = mw.client()) {
          other.setTimeoutMillis(5_000);
          for (int i = 0; i < 12; i++) {
            assertThat(other.call("get k\r\n")).as("client " + c).isEqualTo(VALUE_K);
          }
        }
      }
      for (int i = 0; i < 30; i++) {
        assertThat(slow.readUntilEnd()).as("reply " + i).isEqualTo(bigReply);
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * Clients that close with replies on their way (reset, and half-closed after their requests): the
   * replies are dropped, the loops' server connections stay in step for the other clients.
   */
  @Test
  void clientsThatLeaveWithRepliesOnTheirWayLeaveTheServerConnectionsInStep() throws Exception {
    String big = MiddlewareIT.binaryValue(200_000);
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = loops(servers, "-s", "false")) {
      try (TextClient client = mw.client()) {
        assertThat(client.call("set big 3 0 " + big.length() + "\r\n" + big + "\r\n"))
            .isEqualTo("STORED\r\n");
        for (String key : KEYS) {
          assertThat(client.call("set " + key + " 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
        }
      }
      for (int round = 0; round < 4; round++) {
        try (java.net.Socket leaving = new java.net.Socket("127.0.0.1", mw.port())) {
          leaving.setSoLinger(true, 0); // closed with a reset
          leaving.getOutputStream().write(TextClient.bytes("get big\r\nget k1\r\n".repeat(20)));
        }
        try (java.net.Socket leaving = new java.net.Socket("127.0.0.1", mw.port())) {
          leaving.getOutputStream().write(TextClient.bytes("get big k2\r\n".repeat(20)));
          leaving.shutdownOutput();
        }
      }
      for (int c = 0; c < 4; c++) {
        try (TextClient other = mw.client()) {
          other.setTimeoutMillis(5_000);
          for (int i = 0; i < 2 * KEYS.size(); i++) {
            String key = KEYS.get(i % KEYS.size());
            assertThat(other.call("get " + key + "\r\n"))
                .as("client " + c + " get " + i)
                .isEqualTo("VALUE " + key + " 0 1\r\nv\r\nEND\r\n");
          }
        }
      }
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (mw.stat("curr_connections") > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(mw.stat("curr_connections")).as("connections left open").isZero();
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * Round-robin routing (a read waiting on the stopped server is sent to another once timed out)
   * and hash routing (the stopped server's keys have no other: SERVER_ERROR). The stop (4 s)
   * outlasts the bound on the slowest get (the 1 s timeout and 2 s for a loaded machine), so a get
   * held until the server continues fails it.
   */
  @ParameterizedTest(name = "--routing {0}")
  @ValueSource(strings = {"round-robin", "hash"})
  void aStoppedServerCostsNoClientMoreThanTheTimeoutAndTrafficRecoversAfter(String routing)
      throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    AtomicLong slowestNanos = new AtomicLong();
    AtomicInteger values = new AtomicInteger();
    AtomicInteger serverErrors = new AtomicInteger();
    List<String> unexpected = Collections.synchronizedList(new ArrayList<>());
    try (RunningMiddleware mw =
        loops(servers, "-s", "false", "--routing", routing, "--eject-retry-ms", "200")) {
      try (TextClient client = mw.client()) {
        for (String key : KEYS) {
          assertThat(client.call("set " + key + " 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
        }
        for (String key : KEYS) {
          client.call("get " + key + "\r\n");
        }
      }
      // Hash routing spreads the keys by the servers' ports, which are random: the server stopped
      // is the one that served most of the gets above, so the stop is always felt.
      MemcachedProcess stopped = busiestReader(servers);
      try (ClientThreads clients =
          ClientThreads.start(
              4,
              "get-client",
              (id, stop) -> {
                try (TextClient client = mw.client()) {
                  client.setTimeoutMillis(10_000);
                  for (int i = id; !stop.get(); i++) {
                    int depth = 1 + 5 * id; // pipelines of 1, 6, 11 and 16 gets
                    StringBuilder gets = new StringBuilder();
                    for (int d = 0; d < depth; d++) {
                      gets.append("get ").append(KEYS.get((i + d) % KEYS.size())).append("\r\n");
                    }
                    long start = System.nanoTime();
                    client.send(gets.toString());
                    for (int d = 0; d < depth; d++) {
                      String key = KEYS.get((i + d) % KEYS.size());
                      String reply = client.readUntilEnd();
                      if (reply.equals("VALUE " + key + " 0 1\r\nv\r\nEND\r\n")) {
                        values.incrementAndGet();
                      } else if (reply.startsWith("SERVER_ERROR ")) {
                        serverErrors.incrementAndGet();
                      } else {
                        unexpected.add(key + ": " + reply);
                      }
                    }
                    slowestNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
                  }
                } catch (IOException e) {
                  unexpected.add(e.toString());
                }
              })) {
        Thread.sleep(500);
        stopped.signal("STOP");
        try {
          Thread.sleep(4_000);
        } finally {
          stopped.signal("CONT");
        }
        Thread.sleep(1_000);
      }
      System.out.printf(
          "EventLoopIT --routing %s: slowest get %d ms while a server was stopped for 4 s%n",
          routing, slowestNanos.get() / 1_000_000);
      assertThat(unexpected).isEmpty();
      assertThat(values.get()).isPositive();
      assertThat(slowestNanos.get())
          .as(
              "the slowest get, against the 1 s backend timeout + 2 s, less than the 4 s stop"
                  + " (%d errors)",
              serverErrors.get())
          .isLessThan(3_000_000_000L)
          .as("the stop was felt: a get waited for the timeout")
          .isGreaterThan(500_000_000L);
      assertThat(recovered(mw)).as("every get and set served within 10 s of SIGCONT").isTrue();
    } finally {
      servers.forEach(s -> signalQuietly(s, "CONT"));
      servers.forEach(MemcachedProcess::close);
    }
  }

  /** The server whose {@code get_hits} stat is highest (read directly from each memcached). */
  private static MemcachedProcess busiestReader(List<MemcachedProcess> servers) throws IOException {
    MemcachedProcess busiest = servers.get(0);
    long most = -1;
    for (MemcachedProcess server : servers) {
      try (TextClient direct = new TextClient(server.port())) {
        long hits = 0;
        for (String line : direct.call("stats\r\n").split("\r\n")) {
          if (line.startsWith("STAT get_hits ")) {
            hits = Long.parseLong(line.substring("STAT get_hits ".length()));
          }
        }
        if (hits > most) {
          most = hits;
          busiest = server;
        }
      }
    }
    assertThat(most).as("get_hits of the busiest server").isPositive();
    return busiest;
  }

  /** Whether, within 10 s, a set and a get of every key are all served, twice in a row. */
  private static boolean recovered(RunningMiddleware mw) throws Exception {
    long deadline = System.nanoTime() + 10_000_000_000L;
    try (TextClient client = mw.client()) {
      while (System.nanoTime() < deadline) {
        boolean all = true;
        for (int i = 0; all && i < 2 * KEYS.size(); i++) {
          String key = KEYS.get(i % KEYS.size());
          all =
              client.call("set " + key + " 0 0 1\r\nw\r\n").equals("STORED\r\n")
                  && client
                      .call("get " + key + "\r\n")
                      .equals("VALUE " + key + " 0 1\r\nw\r\nEND\r\n");
        }
        if (all) {
          return true;
        }
        Thread.sleep(100);
      }
    }
    return false;
  }

  private static void signalQuietly(MemcachedProcess server, String signal) {
    try {
      server.signal(signal);
    } catch (IOException e) {
      // the process is killed next anyway
    }
  }

  /**
   * The backend timeout is 5 s here so that the bound on the first gets (none waited it out) leaves
   * a loaded machine room.
   */
  @Test
  void aServerRestartedWhileIdleServesTheFirstRequestsAfter() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = loops(servers, "-s", "false", "--backend-timeout-ms", "5000");
        TextClient first = mw.client();
        TextClient second = mw.client()) {
      // Two clients, one on each loop (handed round-robin); 6 gets each reach every server twice.
      assertThat(first.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
      for (int i = 0; i < 6; i++) {
        assertThat(first.call("get k\r\n")).isEqualTo(VALUE_K);
        assertThat(second.call("get k\r\n")).isEqualTo(VALUE_K);
      }
      MemcachedProcess restarted = servers.get(1);
      restarted.kill();
      restarted.restart();
      try (TextClient direct = new TextClient(restarted.port())) {
        assertThat(direct.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
      }
      Thread.sleep(200); // idle: the loops see their connections to it end
      int failed = 0;
      long start = System.nanoTime();
      for (int i = 0; i < 6; i++) {
        for (TextClient client : List.of(first, second)) {
          String reply = client.call("get k\r\n");
          if (!reply.equals(VALUE_K)) {
            assertThat(reply).startsWith("SERVER_ERROR ");
            failed++;
          }
        }
      }
      long elapsedNanos = System.nanoTime() - start;
      assertThat(failed)
          .as("failed gets after the restart (at most one per loop)")
          .isLessThanOrEqualTo(2);
      System.out.printf(
          "EventLoopIT: 12 gets after the restart in %d ms%n", elapsedNanos / 1_000_000);
      assertThat(elapsedNanos)
          .as("12 gets after the restart, none waiting out the 5 s timeout")
          .isLessThan(4_000_000_000L);
      assertThat(first.call("set k 0 0 1\r\nw\r\n")).isEqualTo("STORED\r\n");
      for (int i = 0; i < 6; i++) {
        assertThat(second.call("get k\r\n")).isEqualTo("VALUE k 0 1\r\nw\r\nEND\r\n");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * The backend timeout is 5 s here so that the bound on each answer (not after the timeout) leaves
   * a loaded machine room.
   */
  @Test
  void aServerDownAtStartIsAnsweredQuicklyAndServedOnceUp() throws Exception {
    int port = FreePorts.next();
    MemcachedProcess late = null;
    try (RunningMiddleware mw =
            RunningMiddleware.startWithAddresses(
                List.of("127.0.0.1:" + port),
                "-t",
                "1",
                "--worker-batch",
                "16",
                "--event-loops",
                "2",
                "--backend-timeout-ms",
                "5000",
                "--eject-retry-ms",
                "200");
        TextClient client = mw.client()) {
      client.setTimeoutMillis(10_000);
      for (int i = 0; i < 10; i++) {
        long start = System.nanoTime();
        assertThat(client.call("get k\r\n"))
            .isEqualTo("SERVER_ERROR backend 127.0.0.1:" + port + " unavailable\r\n");
        assertThat(System.nanoTime() - start)
            .as("get %d, answered before the 5 s timeout", i)
            .isLessThan(4_000_000_000L);
      }
      late = MemcachedProcess.startOn(port);
      long deadline = System.nanoTime() + 10_000_000_000L;
      String reply;
      do {
        Thread.sleep(50);
        reply = client.call("get k\r\n");
      } while (!reply.equals("END\r\n") && System.nanoTime() < deadline);
      assertThat(reply).as("a get within 10 s of the server's start").isEqualTo("END\r\n");
      assertThat(client.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
      assertThat(client.call("get k\r\n")).isEqualTo(VALUE_K);
    } finally {
      if (late != null) {
        late.close();
      }
    }
  }
}
