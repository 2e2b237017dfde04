package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.ClientThreads;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RedisServers;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One client cannot hurt the others: whatever a client sends, every other client gets its own
 * replies, in time, and no healthy server is taken out of rotation. Run with the ASL workers, with
 * batching workers, and with event loops.
 */
class ClientIsolationIT {
  private static final int GOOD_CLIENTS = 4;
  private static final int BAD_CLIENTS = 8;
  private static final int KEYS_PER_CLIENT = 8;
  private static final long RUN_MILLIS = 3_000;

  /**
   * Every quiet spelling memcached accepts (a flag is a token's first byte), and its neighbours.
   */
  private static final String QUIET_VARIANTS =
      "mg nokey qx\r\n"
          + "mg nokey v k qx O12\r\n"
          + "ms qk 1 q1\r\nx\r\n"
          + "md qk qq\r\n"
          + "ms qk 1 q q\r\nx\r\n"
          + "mg nokey v q k q\r\n"
          + "ma nocounter qz\r\n"
          + "md qk q\u00ff\r\n"
          + "mg nokey v k O1 O2 q\r\n"
          + "mg nokey a b c d e f g h i j l m n o p r s t u w q\r\n"
          + "ms qk 1 T1 F1 C1 I k O q q\r\nx\r\n";

  @ParameterizedTest
  @ValueSource(
      strings = {
        "-t 4",
        "-t 1 --worker-batch 16",
        "-t 4 --event-loops 2",
        "-t 1 --worker-batch 16 --event-loops 2"
      })
  void quietMetaFlagsInAnySpellingDisturbNoOtherClient(String mode) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    try (RunningMiddleware mw = start(servers, mode)) {
      storeOwnKeys(mw);
      List<String> problems = new CopyOnWriteArrayList<>();
      AtomicLong goodReplies = new AtomicLong();
      AtomicLong badRounds = new AtomicLong();
      try (ClientThreads bad =
              ClientThreads.start(
                  BAD_CLIENTS,
                  "quiet",
                  (id, stop) -> sendQuietVariants(mw, id, stop, badRounds, problems));
          ClientThreads good =
              ClientThreads.start(
                  GOOD_CLIENTS,
                  "own",
                  (id, stop) -> readOwnKeys(mw, id, stop, goodReplies, problems))) {
        Thread.sleep(RUN_MILLIS);
      }
      assertThat(problems).as(mode).isEmpty();
      assertThat(goodReplies.get()).as(mode + ": replies read").isGreaterThan(100);
      assertThat(badRounds.get()).as(mode + ": quiet pipelines answered").isGreaterThan(10);
      for (int i = 0; i < servers.size(); i++) {
        assertThat(mw.stat("server_" + i + "_ejections")).as(mode + ": ejections").isZero();
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * A write whose server connection broke after it was sent (the server read it and hung up) may
   * have been applied: it is not sent again (an incr would count twice), and the client is told so.
   * A read is still answered, by an error or by a second try.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "-t 1",
        "-t 1 --worker-batch 16",
        "-t 1 --event-loops 2",
        "-t 1 --worker-batch 16 --event-loops 2"
      })
  void aWriteWhoseConnectionBrokeIsNotSentAgain(String mode) throws Exception {
    try (HangUpServer server = HangUpServer.start();
        RunningMiddleware mw =
            RunningMiddleware.startWithAddresses(
                List.of(server.address()),
                (mode + " -s false --eject-after-failures 0").split(" "));
        TextClient client = mw.client()) {
      String mayHaveApplied =
          "SERVER_ERROR backend "
              + server.address()
              + " connection broke before its reply; the write may have been applied\r\n";
      assertThat(client.call("get ok\r\n")).isEqualTo("END\r\n");
      assertThat(client.call("incr drop 1\r\n")).as(mode).isEqualTo(mayHaveApplied);
      assertThat(client.call("get ok\r\n")).isEqualTo("END\r\n");
      assertThat(client.call("set drop 0 0 1\r\nv\r\n")).as(mode).isEqualTo(mayHaveApplied);
      assertThat(client.call("get ok\r\n")).isEqualTo("END\r\n");
      assertThat(client.call("get drop\r\n"))
          .as(mode)
          .startsWith("SERVER_ERROR backend " + server.address() + " ")
          .doesNotContain("applied");
      assertThat(server.received("incr drop 1")).as(mode + ": incr received").isEqualTo(1);
      assertThat(server.received("set drop 0 0 1")).as(mode + ": set received").isEqualTo(1);
    }
  }

  /**
   * Hash routing with two replicas per key and one server of three dead: a multi-get is answered
   * whole, each key from a live replica, before the dead server is ejected and after; so is redis'
   * MGET.
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void aMultiGetUnderReplicationIsServedFromALiveReplicaOfEachKey(String mode) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw =
            start(
                servers,
                mode,
                "--routing",
                "hash",
                "--replication",
                "2",
                "--eject-retry-ms",
                "60000");
        TextClient client = mw.client()) {
      StringBuilder get = new StringBuilder("get");
      StringBuilder expected = new StringBuilder();
      for (int k = 0; k < 12; k++) {
        String key = "mk" + k;
        assertThat(client.call("set " + key + " 0 0 2\r\nv" + (k % 10) + "\r\n"))
            .isEqualTo("STORED\r\n");
        get.append(' ').append(key);
        expected.append("VALUE ").append(key).append(" 0 2\r\nv").append(k % 10).append("\r\n");
      }
      get.append("\r\n");
      expected.append("END\r\n");
      assertThat(client.call(get.toString())).isEqualTo(expected.toString());
      servers.get(1).kill();
      // Down and not yet ejected (the reads find it so), then ejected (routed around it).
      int afterEjection = 0;
      long deadlineNanos = System.nanoTime() + 60_000_000_000L; // how soon it ejects is not tested
      for (int round = 0; System.nanoTime() < deadlineNanos && afterEjection < 5; round++) {
        boolean ejected = mw.stat("server_1_ejected") == 1;
        assertThat(client.call(get.toString()))
            .as("%s, round %d (server 1 ejected: %s)", mode, round, ejected)
            .isEqualTo(expected.toString());
        afterEjection += ejected ? 1 : 0;
        Thread.sleep(10);
      }
      assertThat(afterEjection).as("rounds after the ejection").isEqualTo(5);
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  @Test
  void aRedisMgetUnderReplicationIsServedFromALiveReplicaOfEachKey() throws Exception {
    try (RedisServers redis = RedisServers.start(3)) {
      List<String> addresses = new ArrayList<>();
      redis.behind().forEach(server -> addresses.add(server.address()));
      try (RunningMiddleware mw =
              RunningMiddleware.startWithAddresses(
                  addresses,
                  "--protocol",
                  "redis",
                  "-t",
                  "2",
                  "--routing",
                  "hash",
                  "--replication",
                  "2");
          RespClient client = new RespClient(mw.port())) {
        List<String> mget = new ArrayList<>(List.of("MGET"));
        StringBuilder expected = new StringBuilder("*12\r\n");
        for (int k = 0; k < 12; k++) {
          assertThat(client.call("SET", "mk" + k, "v" + k)).isEqualTo("+OK\r\n");
          mget.add("mk" + k);
          String value = "v" + k;
          expected.append('$').append(value.length()).append("\r\n").append(value).append("\r\n");
        }
        redis.behind().get(1).close();
        for (int round = 0; round < 6; round++) {
          assertThat(client.call(mget.toArray(new String[0])))
              .as("round %d", round)
              .isEqualTo(expected.toString());
        }
      }
    }
  }

  /**
   * flush_all and verbosity act on every server for every client: refused unless {@code
   * --admin-commands true}; allowed, they are answered as memcached answers them ({@code flush_all
   * 0 junk noreply} is {@code ERROR} and flushes nothing; {@code delete k junk noreply} says
   * nothing and deletes nothing).
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void adminCommandsAreRefusedUnlessAllowed(String mode) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    String value = "VALUE k 0 1\r\nv\r\nEND\r\n";
    try {
      try (RunningMiddleware mw = start(servers, mode);
          TextClient client = mw.client()) {
        assertThat(client.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
        assertThat(client.call("flush_all\r\n"))
            .as(mode)
            .startsWith("CLIENT_ERROR flush_all not allowed: ")
            .endsWith(" (--admin-commands true allows it)\r\n");
        assertThat(client.call("verbosity 1\r\n")).startsWith("CLIENT_ERROR verbosity not allowed");
        client.send("flush_all noreply\r\n");
        assertThat(client.call("get k\r\n")).as(mode + ": not flushed").isEqualTo(value);
      }
      for (MemcachedProcess server : servers) {
        try (TextClient direct = new TextClient(server.port())) {
          assertThat(direct.call("get k\r\n")).as(mode + ": on each server").isEqualTo(value);
        }
      }
      try (RunningMiddleware mw = start(servers, mode, "--admin-commands", "true");
          TextClient client = mw.client()) {
        client.send("flush_all 0 junk noreply\r\n");
        assertThat(client.readLine()).isEqualTo("ERROR\r\n");
        client.send("delete k junk noreply\r\n");
        assertThat(client.call("get k\r\n"))
            .as(mode + ": neither flushed nor deleted")
            .isEqualTo(value);
        assertThat(client.call("flush_all\r\n")).isEqualTo("OK\r\n");
        assertThat(client.call("get k\r\n")).isEqualTo("END\r\n");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * A slow legal command ({@code SRANDMEMBER s1 -5000000}, about a second of redis' time) times
   * out: it is not hedged or retried on the other replica (it would be as slow there), and one
   * client's timeouts count once towards ejection: no server is ejected.
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 4", "-t 4 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void aSlowCommandIsNotHedgedAndEjectsNoServer(String mode) throws Exception {
    try (RedisServers redis = RedisServers.start(2)) {
      List<String> addresses = new ArrayList<>();
      redis.behind().forEach(server -> addresses.add(server.address()));
      List<String> flags = new ArrayList<>(List.of(mode.split(" ")));
      flags.addAll(List.of("--protocol", "redis", "-s", "false", "--backend-timeout-ms", "300"));
      try (RunningMiddleware mw =
              RunningMiddleware.startWithAddresses(addresses, flags.toArray(new String[0]));
          RespClient client = new RespClient(mw.port())) {
        client.setTimeoutMillis(10_000);
        assertThat(client.call("SADD", "s1", "a", "b", "c")).isEqualTo(":3\r\n");
        assertThat(client.call("SET", "k", "v")).isEqualTo("+OK\r\n");
        for (int i = 0; i < 4; i++) {
          assertThat(client.call("SRANDMEMBER", "s1", "-5000000"))
              .as("%s, slow command %d", mode, i)
              .startsWith("-ERR backend ")
              .endsWith(" timed out\r\n");
        }
        long deadline = System.nanoTime() + 20_000_000_000L;
        int served = 0;
        while (served < 4 && System.nanoTime() < deadline) {
          served = client.call("GET", "k").equals("$1\r\nv\r\n") ? served + 1 : 0;
        }
        assertThat(served).as("%s: both servers serve again", mode).isEqualTo(4);
        long sent = 0;
        for (int i = 0; i < addresses.size(); i++) {
          assertThat(mw.stat("server_" + i + "_ejections")).as(mode + ": ejections").isZero();
          try (RespClient direct = new RespClient(redis.behind().get(i).port())) {
            String stats = direct.call("INFO", "commandstats");
            java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("cmdstat_srandmember:calls=(\\d+)").matcher(stats);
            sent += m.find() ? Long.parseLong(m.group(1)) : 0;
          }
        }
        assertThat(sent).as(mode + ": SRANDMEMBER run by the servers (none hedged)").isEqualTo(4);
      }
    }
  }

  /**
   * memcached closes a connection whose line (but a get's) has no newline in its first 2048 bytes:
   * forwarded, a 30 KB {@code touch} line closed the shared server connection, a failure counted
   * against a healthy server; three ejected it. Now it is refused and its client closed, as
   * memcached does.
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void aLineMemcachedWouldCloseOnIsRefusedAndEjectsNoServer(String mode) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(1);
    try (RunningMiddleware mw = start(servers, mode)) {
      refusedAsTooLongAndClosed(mw, mode, "touch k 1 " + "x".repeat(30_000) + "\r\n");
      try (TextClient good = mw.client()) {
        assertThat(good.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
      }
      noServerFailed(mw, mode, servers.size());
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * memcached takes a get line of any length only if at most 100 spaces come before its {@code
   * get}; after more it closes the connection once 2048 bytes came without a newline. Forwarded, a
   * 21 KB get line after 101 spaces closed the shared server connections, and four of them ejected
   * both healthy servers. Now it is refused and its client closed, as memcached does; after 100
   * spaces it is served.
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void aLongGetLineAfterManySpacesIsRefusedAndEjectsNoServer(String mode) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    StringBuilder keys = new StringBuilder();
    for (int k = 0; k < 3_000; k++) {
      keys.append(String.format(" k%05d", k));
    }
    String get = "get" + keys + "\r\n";
    try (RunningMiddleware mw = start(servers, mode)) {
      refusedAsTooLongAndClosed(mw, mode, " ".repeat(101) + get);
      try (TextClient good = mw.client()) {
        assertThat(good.call("set k00007 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
        good.send(" ".repeat(100) + get);
        assertThat(good.readUntilEnd()).as(mode).isEqualTo("VALUE k00007 0 1\r\nv\r\nEND\r\n");
      }
      noServerFailed(mw, mode, servers.size());
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * Four clients each send {@code line}, which memcached would close its connection on: each is
   * answered that the line is too long and closed (four such lines forwarded ejected a server).
   */
  private static void refusedAsTooLongAndClosed(RunningMiddleware mw, String mode, String line)
      throws Exception {
    for (int i = 0; i < 4; i++) {
      try (TextClient client = mw.client()) {
        assertThat(client.call(line))
            .as(mode)
            .startsWith("CLIENT_ERROR line too long (expected: <= 2048 bytes");
        assertThat(client.closedByPeer()).isTrue();
      }
    }
  }

  /** No server was ejected or counted a failure. */
  private static void noServerFailed(RunningMiddleware mw, String mode, int servers)
      throws Exception {
    for (int i = 0; i < servers; i++) {
      assertThat(mw.stat("server_" + i + "_ejections")).as(mode).isZero();
      assertThat(mw.stat("server_" + i + "_errors")).as(mode).isZero();
    }
  }

  /**
   * Each server numbers its cas uniques itself: a meta write with {@code C<cas>} sent to every
   * replica was applied on the server whose unique it was and refused on the others ({@code EX} to
   * the client, the replicas left different). It is refused while writes go to several servers and
   * left to the server when they go to one.
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void aMetaCompareAndSwapIsRefusedWhileWritesGoToSeveralServers(String mode) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try {
      try (RunningMiddleware mw = start(servers, mode);
          TextClient client = mw.client()) {
        client.call("mg other N30 v\r\n"); // a cas unique taken on one server only
        client.readLine();
        assertThat(client.call("set k 0 0 1\r\na\r\n")).isEqualTo("STORED\r\n");
        for (int i = 0; i < 3; i++) {
          String meta = client.call("mg k c v\r\n");
          assertThat(client.readLine()).isEqualTo("a\r\n");
          String cas = meta.trim().split(" c")[1];
          for (String write :
              List.of(
                  "ms k 1 C" + cas + "\r\nb\r\n",
                  "md k C" + cas + " q\r\n",
                  "ma k C" + cas + "\r\n")) {
            assertThat(client.call(write))
                .as("%s: %s", mode, write)
                .startsWith("CLIENT_ERROR compare-and-swap by a meta command (C flag) is not");
          }
        }
      }
      for (MemcachedProcess server : servers) {
        try (TextClient direct = new TextClient(server.port())) {
          assertThat(direct.call("get k\r\n")).as(mode).isEqualTo("VALUE k 0 1\r\na\r\nEND\r\n");
        }
      }
      try (RunningMiddleware mw = start(servers.subList(0, 1), mode);
          TextClient client = mw.client()) {
        String meta = client.call("mg k c v\r\n");
        assertThat(client.readLine()).isEqualTo("a\r\n");
        String cas = meta.trim().split(" c")[1];
        assertThat(client.call("ms k 1 C" + cas + "\r\nb\r\n")).as(mode).isEqualTo("HD\r\n");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * A fake memcached: answers {@code get ok} with {@code END} and {@code version}, and hangs up
   * after reading any request naming the key {@code drop}, counting it.
   */
  private static final class HangUpServer implements AutoCloseable {
    private final java.net.ServerSocket socket;
    private final List<String> received = new CopyOnWriteArrayList<>();
    private final List<java.net.Socket> accepted = new CopyOnWriteArrayList<>();

    private HangUpServer(java.net.ServerSocket socket) {
      this.socket = socket;
    }

    static HangUpServer start() throws IOException {
      HangUpServer server =
          new HangUpServer(
              new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress()));
      Thread acceptor = new Thread(server::acceptForever, "hang-up-server");
      acceptor.setDaemon(true);
      acceptor.start();
      return server;
    }

    String address() {
      return "127.0.0.1:" + socket.getLocalPort();
    }

    long received(String line) {
      return received.stream().filter(line::equals).count();
    }

    private void acceptForever() {
      while (!socket.isClosed()) {
        try {
          java.net.Socket connection = socket.accept();
          accepted.add(connection);
          Thread serve = new Thread(() -> serve(connection), "hang-up-connection");
          serve.setDaemon(true);
          serve.start();
        } catch (IOException closed) {
          return;
        }
      }
    }

    private void serve(java.net.Socket connection) {
      try (connection) {
        java.io.BufferedReader in =
            new java.io.BufferedReader(
                new java.io.InputStreamReader(
                    connection.getInputStream(), java.nio.charset.StandardCharsets.ISO_8859_1));
        java.io.OutputStream out = connection.getOutputStream();
        String line;
        while ((line = in.readLine()) != null) {
          if (line.startsWith("set ")) {
            in.readLine(); // the data block
          }
          if (line.contains(" drop")) {
            received.add(line);
            return; // hang up without a reply
          }
          String reply = line.startsWith("version") ? "VERSION fake\r\n" : "END\r\n";
          out.write(reply.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
          out.flush();
        }
      } catch (IOException e) {
        // the middleware closed it
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
      for (java.net.Socket connection : accepted) {
        connection.close();
      }
    }
  }

  static RunningMiddleware start(List<MemcachedProcess> servers, String mode, String... more)
      throws IOException {
    List<String> flags = new ArrayList<>(List.of(mode.split(" ")));
    flags.addAll(List.of("-s", "false"));
    flags.addAll(List.of(more));
    return RunningMiddleware.start(servers, flags.toArray(new String[0]));
  }

  /**
   * Sends the quiet variants and a no-op, and reads up to its {@code MN}, again and again. A
   * pipeline left unanswered is a problem; the client then starts again on a new connection, so
   * that the quiet requests keep coming.
   */
  private static void sendQuietVariants(
      RunningMiddleware mw, int id, AtomicBoolean stop, AtomicLong rounds, List<String> problems) {
    while (!stop.get()) {
      try (TextClient client = mw.client()) {
        // Generous for a busy machine; a quiet request forwarded as if it had a reply holds its
        // pipeline for the backend timeout each, and ejects servers, which the test checks.
        client.setTimeoutMillis(10_000);
        while (!stop.get()) {
          client.send(QUIET_VARIANTS + "mn\r\n");
          while (!client.readLine().equals("MN\r\n")) {
            // the errors and hits before the no-op
          }
          rounds.incrementAndGet();
        }
      } catch (IOException e) {
        problems.add("quiet client " + id + ": " + e);
      }
    }
  }

  private static String ownKey(int client, int i) {
    return "own-" + client + "-" + i;
  }

  private static String ownValue(int client, int i) {
    return "value-of-" + client + "-" + i;
  }

  private static void storeOwnKeys(RunningMiddleware mw) throws IOException {
    try (TextClient client = mw.client()) {
      for (int c = 0; c < GOOD_CLIENTS; c++) {
        for (int i = 0; i < KEYS_PER_CLIENT; i++) {
          String value = ownValue(c, i);
          String set = "set " + ownKey(c, i) + " 0 0 " + value.length() + "\r\n" + value + "\r\n";
          assertThat(client.call(set)).isEqualTo("STORED\r\n");
        }
      }
    }
  }

  /**
   * Pipelines meta and classic reads of the client's own keys; every reply must be that key's
   * value, within a second or two.
   */
  private static void readOwnKeys(
      RunningMiddleware mw, int id, AtomicBoolean stop, AtomicLong replies, List<String> problems) {
    try (TextClient client = mw.client()) {
      client.setTimeoutMillis(2_500);
      while (!stop.get()) {
        StringBuilder pipeline = new StringBuilder();
        for (int i = 0; i < KEYS_PER_CLIENT; i++) {
          pipeline.append("mg ").append(ownKey(id, i)).append(" k v\r\n");
          pipeline.append("get ").append(ownKey(id, i)).append("\r\n");
        }
        client.send(pipeline.toString());
        for (int i = 0; i < KEYS_PER_CLIENT; i++) {
          String key = ownKey(id, i);
          String value = ownValue(id, i);
          String meta = client.readLine();
          String expectedMeta = "VA " + value.length() + " k" + key + "\r\n";
          if (!meta.equals(expectedMeta)) {
            problems.add("client " + id + " mg " + key + ": " + meta.trim());
            return;
          }
          String data = client.readLine();
          if (!data.equals(value + "\r\n")) {
            problems.add("client " + id + " mg " + key + " value: " + data.trim());
            return;
          }
          String get = client.readReply("get " + key);
          String expectedGet =
              "VALUE " + key + " 0 " + value.length() + "\r\n" + value + "\r\nEND\r\n";
          if (!get.equals(expectedGet)) {
            problems.add("client " + id + " get " + key + ": " + get.trim());
            return;
          }
          replies.addAndGet(2);
        }
      }
    } catch (IOException e) {
      problems.add("client " + id + ": " + e);
    }
  }
}
