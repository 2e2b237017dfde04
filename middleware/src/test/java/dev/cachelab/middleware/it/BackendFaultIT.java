package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.routing.KetamaRing;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Backends that die, hang or hang up: the middleware answers SERVER_ERROR and recovers. */
class BackendFaultIT {

  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void killedBackendGivesServerErrorForItsShareAndRecoversAfterRestart(int eventLoops)
      throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try {
      try (RunningMiddleware mw =
              RunningMiddleware.start(
                  servers, "-t", "2", "--eject-retry-ms", "200", "--event-loops", "" + eventLoops);
          TextClient client = mw.client()) {
        assertThat(client.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
        assertThat(countServerErrors(client, 30)).isZero();

        servers.get(1).kill();
        // Round-robin: a third of single-key reads go to the dead server; each is retried on the
        // next server (every server holds every key), so the client sees no error.
        assertThat(countServerErrors(client, 30)).isZero();
        assertThat(mw.middleware().stats().serverErrors(1)).isGreaterThanOrEqualTo(1);
        assertThat(client.call("set k 0 0 1\r\nw\r\n"))
            .isEqualTo("SERVER_ERROR backend " + servers.get(1).address() + " unavailable\r\n");

        servers.get(1).restart();
        // Back in rotation once a probe succeeds (after --eject-retry-ms, if it was ejected).
        long deadline = System.nanoTime() + 10_000_000_000L;
        String stored;
        do {
          Thread.sleep(100);
          stored = client.call("set k 0 0 1\r\nx\r\n");
        } while (!stored.equals("STORED\r\n") && System.nanoTime() < deadline);
        assertThat(stored).as("set after restart").isEqualTo("STORED\r\n");
        assertThat(countServerErrors(client, 30)).as("errors after restart").isZero();
        assertThat(client.call("get k\r\n")).isEqualTo("VALUE k 0 1\r\nx\r\nEND\r\n");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void hashRoutingFailsOnlyTheKeysWhoseReplicasIncludeTheDeadServer(int eventLoops)
      throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try {
      List<String> addresses = servers.stream().map(MemcachedProcess::address).toList();
      KetamaRing ring = new KetamaRing(addresses);
      try (RunningMiddleware mw =
              RunningMiddleware.start(
                  servers,
                  "-t",
                  "2",
                  "--routing",
                  "hash",
                  "--replication",
                  "2",
                  "--event-loops",
                  "" + eventLoops);
          TextClient client = mw.client()) {
        servers.get(2).kill();
        int[] replicas = new int[2];
        int failedWrites = 0;
        for (int i = 0; i < 60; i++) {
          byte[] key = ("hk" + i).getBytes(StandardCharsets.US_ASCII);
          ring.replicas(key, 0, key.length, 2, replicas);
          boolean touchesDead = replicas[0] == 2 || replicas[1] == 2;
          String set = client.call("set hk" + i + " 0 0 1\r\nv\r\n");
          String get = client.call("get hk" + i + "\r\n");
          if (touchesDead) {
            failedWrites++;
            assertThat(set).startsWith("SERVER_ERROR backend " + addresses.get(2));
          } else {
            assertThat(set).isEqualTo("STORED\r\n");
          }
          // A read whose primary is dead is retried on its second replica, which holds the value
          // (a failed replicated set still stores on the live replicas; see README).
          assertThat(get).isEqualTo("VALUE hk" + i + " 0 1\r\nv\r\nEND\r\n");
        }
        assertThat(failedWrites).isBetween(10, 55);
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  private static int countServerErrors(TextClient client, int requests) throws IOException {
    int errors = 0;
    for (int i = 0; i < requests; i++) {
      String reply = client.call("get k\r\n");
      if (reply.startsWith("SERVER_ERROR")) {
        errors++;
      } else {
        // After a failed replicated set the live servers hold the new value (see README).
        assertThat(reply).matches("(VALUE k 0 1\r\n[vwx]\r\n)?END\r\n");
      }
    }
    return errors;
  }

  @Test
  void silentBackendTimesOutWithServerError() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      List<Socket> accepted = new CopyOnWriteArrayList<>();
      Thread acceptor = acceptForever(silent, accepted, false);
      String address = "127.0.0.1:" + silent.getLocalPort();
      try (RunningMiddleware mw =
              RunningMiddleware.startWithAddresses(
                  List.of(address), "-t", "1", "--backend-timeout-ms", "300");
          TextClient client = mw.client()) {
        long start = System.nanoTime();
        assertThat(client.call("get k\r\n"))
            .isEqualTo("SERVER_ERROR backend " + address + " timed out\r\n");
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        // Not before the 300 ms timeout; the point is that it does not hang, which the client's
        // own 10 s read timeout would show: a loaded machine may take seconds more.
        assertThat(elapsedMs).isBetween(200L, 10_000L);
        // The worker closed the connection; until it has reconnected (after a backoff) the
        // server counts as unavailable, then the next request times out again.
        assertThat(client.call("get k\r\n"))
            .isIn(
                "SERVER_ERROR backend " + address + " timed out\r\n",
                "SERVER_ERROR backend " + address + " unavailable\r\n");
        assertThat(mw.middleware().stats().serverErrors(0)).isEqualTo(2);
      } finally {
        acceptor.interrupt();
        for (Socket s : accepted) {
          s.close();
        }
      }
    }
  }

  @Test
  void backendThatHangsUpGivesServerError() throws Exception {
    try (ServerSocket rude = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      List<Socket> accepted = new CopyOnWriteArrayList<>();
      Thread acceptor = acceptForever(rude, accepted, true);
      String address = "127.0.0.1:" + rude.getLocalPort();
      try (RunningMiddleware mw =
              RunningMiddleware.startWithAddresses(List.of(address), "-t", "1");
          TextClient client = mw.client()) {
        for (int i = 0; i < 3; i++) {
          // It hangs up after reading the set: for all the middleware knows, it applied it.
          assertThat(client.call("set k 0 0 1\r\nv\r\n"))
              .isEqualTo(
                  "SERVER_ERROR backend "
                      + address
                      + " connection broke before its reply; the write may have been applied\r\n");
        }
      } finally {
        acceptor.interrupt();
      }
    }
  }

  private static Thread acceptForever(ServerSocket server, List<Socket> accepted, boolean hangUp) {
    Thread thread =
        new Thread(
            () -> {
              while (!server.isClosed()) {
                try {
                  Socket socket = server.accept();
                  if (hangUp) {
                    InputStream in = socket.getInputStream();
                    socket.setSoTimeout(2000);
                    in.read(); // wait for the request, then hang up without a reply
                    socket.close();
                  } else {
                    accepted.add(socket);
                  }
                } catch (IOException e) {
                  return;
                }
              }
            },
            "fake-backend");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  @Test
  void goodClientsSeeNoErrorWhileAnotherSendsGarbage() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try {
      try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "4", "-s", "true")) {
        List<String> problems = new CopyOnWriteArrayList<>();
        Thread garbage = new Thread(() -> sendGarbage(mw, problems), "garbage-client");
        garbage.start();
        List<Thread> good = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
          int id = c;
          Thread t = new Thread(() -> goodClient(mw, id, problems), "good-client-" + c);
          good.add(t);
          t.start();
        }
        for (Thread t : good) {
          t.join(60_000);
        }
        garbage.interrupt();
        garbage.join(10_000);
        assertThat(problems).isEmpty();
        try (TextClient client = mw.client()) {
          assertThat(client.call("version\r\n")).startsWith("VERSION ");
        }
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  private static void goodClient(RunningMiddleware mw, int id, List<String> problems) {
    try (TextClient client = mw.client()) {
      for (int i = 0; i < 150; i++) {
        String key = "g" + id + "_" + i;
        String value = "value-" + i;
        String stored =
            client.call("set " + key + " 0 0 " + value.length() + "\r\n" + value + "\r\n");
        String got = client.call("get " + key + " g" + id + "_0\r\n");
        String expected =
            "VALUE "
                + key
                + " 0 "
                + value.length()
                + "\r\n"
                + value
                + "\r\n"
                + "VALUE g"
                + id
                + "_0 0 7\r\nvalue-0\r\n"
                + "END\r\n";
        if (!stored.equals("STORED\r\n") || !got.equals(expected)) {
          problems.add(key + ": " + stored + " / " + got);
          return;
        }
      }
    } catch (IOException e) {
      problems.add("client " + id + ": " + e);
    }
  }

  private static final String[] GARBAGE = {
    "hello world\r\n",
    "get\r\n",
    "set k 0 0 -5\r\n",
    "set k x 0 1\r\nv\r\n",
    "\u0000\u00ff\u0010\r\n",
    "get " + "k".repeat(300) + "\r\n",
    "incr k nope\r\n",
    "set k 0 0 3\r\nabcdef\r\n",
    "\r\n\r\n\r\n",
  };

  private static void sendGarbage(RunningMiddleware mw, List<String> problems) {
    java.util.Random random = new java.util.Random(7);
    int rounds = 0;
    while (!Thread.currentThread().isInterrupted() && rounds < 500) {
      rounds++;
      try (TextClient client = mw.client()) {
        for (int i = 0; i < 20; i++) {
          if (random.nextInt(4) == 0) {
            byte[] noise = new byte[1 + random.nextInt(200)];
            random.nextBytes(noise);
            client.send(new String(noise, java.nio.charset.StandardCharsets.ISO_8859_1));
          } else {
            client.send(GARBAGE[random.nextInt(GARBAGE.length)]);
          }
        }
      } catch (IOException e) {
        // The middleware closes connections whose framing is lost: expected.
      }
    }
  }

  @Test
  void boundedQueueStopsReadingAndStillAnswersEverything() throws Exception {
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(List.of(server), "-t", "1", "--queue-capacity", "1");
        TextClient client = mw.client()) {
      StringBuilder batch = new StringBuilder();
      for (int i = 0; i < 300; i++) {
        batch.append("set q").append(i).append(" 0 0 1\r\nv\r\nget q").append(i).append("\r\n");
      }
      client.send(batch.toString());
      for (int i = 0; i < 300; i++) {
        assertThat(client.readLine()).isEqualTo("STORED\r\n");
        assertThat(client.readUntilEnd()).isEqualTo("VALUE q" + i + " 0 1\r\nv\r\nEND\r\n");
      }
    }
  }
}
