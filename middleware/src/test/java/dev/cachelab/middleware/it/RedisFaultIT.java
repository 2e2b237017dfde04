package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.servers.BackendHealth;
import dev.cachelab.middleware.testing.ClientThreads;
import dev.cachelab.middleware.testing.RedisProcess;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Backend faults in redis mode with three redis servers: one stopped ({@code SIGSTOP}), meanwhile
 * another killed and restarted. Every request is answered (value or {@code -ERR}) within the
 * backend timeout plus a margin, errors name only the failed servers, the third server is never
 * ejected and keeps serving, and ejections and returns are counted; with the workers and with two
 * event loops.
 */
class RedisFaultIT {
  private static final int TIMEOUT_MS = 400;

  /** Backend timeout plus a generous margin for a loaded machine. */
  private static final int ANSWER_WITHIN_MS = TIMEOUT_MS + 4_000;

  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void oneStoppedAnotherKilledAndRestartedTheThirdKeepsServing(int eventLoops) throws Exception {
    List<RedisProcess> servers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      servers.add(RedisProcess.start());
    }
    RedisProcess restarted = null;
    try (RunningMiddleware mw =
        RunningMiddleware.startWithAddresses(
            servers.stream().map(RedisProcess::address).toList(),
            "--protocol",
            "redis",
            "-t",
            "4",
            "-s",
            "true",
            "--backend-timeout-ms",
            "" + TIMEOUT_MS,
            "--eject-retry-ms",
            "300",
            "--event-loops",
            "" + eventLoops)) {
      List<String> failing = List.of(servers.get(0).address(), servers.get(1).address());
      AtomicLong answered = new AtomicLong();
      List<String> problems = new CopyOnWriteArrayList<>();
      BackendHealth killedHealth = mw.middleware().stats().health(0);
      BackendHealth stoppedHealth = mw.middleware().stats().health(1);
      try (ClientThreads clients =
          ClientThreads.start(
              4,
              "redis-client",
              (id, stop) -> commandLoop(mw, id, failing, stop, answered, problems))) {
        Thread.sleep(500);
        servers.get(1).signal("STOP");
        try {
          Thread.sleep(1_500);
          servers.get(0).close();
          Thread.sleep(1_000);
          restarted = RedisProcess.startOn(servers.get(0).port());
          awaitReturn(killedHealth, answered);
        } finally {
          servers.get(1).signal("CONT");
        }
        awaitReturn(stoppedHealth, answered);
        long before = answered.get();
        Thread.sleep(500);
        assertThat(answered.get()).as("answered after both returned").isGreaterThan(before);
      }
      assertThat(problems).isEmpty();
      assertThat(killedHealth.ejections()).as("killed: ejections").isPositive();
      assertThat(killedHealth.returns()).as("killed: returns").isPositive();
      assertThat(stoppedHealth.ejections()).as("stopped: ejections").isPositive();
      assertThat(stoppedHealth.returns()).as("stopped: returns").isPositive();
      assertThat(mw.middleware().stats().health(2).ejections()).as("healthy server").isZero();
      try (RespClient client = new RespClient(mw.port())) {
        assertThat(client.call("INFO"))
            .contains("server_0_ejections:", "server_0_returns:", "server_2_errors:0\r\n");
        assertThat(client.call("SET", "after", "1")).isEqualTo("+OK\r\n");
        assertThat(client.call("MGET", "after", "x", "after")).startsWith("*3\r\n$1\r\n1\r\n");
      }
    } finally {
      for (RedisProcess server : servers) {
        server.signal("CONT");
        server.close();
      }
      if (restarted != null) {
        restarted.close();
      }
    }
  }

  private static void awaitReturn(BackendHealth health, AtomicLong answered)
      throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while ((health.ejected() || health.returns() == 0) && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(health.ejected()).as("back in rotation (answered: %d)", answered.get()).isFalse();
  }

  // SET (every server), GET (one, retried on another), MGET split over the three.
  private static void commandLoop(
      RunningMiddleware mw,
      int id,
      List<String> failing,
      AtomicBoolean stop,
      AtomicLong answered,
      List<String> problems) {
    try (RespClient client = new RespClient(mw.port())) {
      client.setTimeoutMillis(ANSWER_WITHIN_MS);
      for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
        String key = "r" + id + "-" + (i % 20);
        String[][] commands = {{"SET", key, "v"}, {"GET", key}, {"MGET", key, "a", "b", key}};
        for (String[] command : commands) {
          String reply = client.call(command);
          if (reply.startsWith("-") && !namesOneOf(reply, failing)) {
            problems.add(String.join(" ", command) + ": " + reply.trim());
            return;
          }
          answered.incrementAndGet();
        }
      }
    } catch (IOException e) {
      problems.add("client " + id + ": " + e);
    }
  }

  private static boolean namesOneOf(String reply, List<String> servers) {
    return reply.equals("-ERR no backend available\r\n")
        || servers.stream().anyMatch(s -> reply.startsWith("-ERR backend " + s + " "));
  }
}
