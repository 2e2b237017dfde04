package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.servers.BackendHealth;
import dev.cachelab.middleware.testing.ClientThreads;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Failover at the default flags ({@code -t 8}, round-robin reads, 1,000 ms timeout, 3 failures to
 * eject, 500 ms between probes): a stopped server costs reads a hedge delay, not the timeout, and
 * is ejected within a few of them; a server restarted is back without failed requests.
 *
 * <p>The rate of a window swings with the machine's other load, so the throughput during the stop
 * and in the second after it is printed (the targets are 60 % and 80 % of the rate before) and
 * bounded only far below: clients held up by the stopped server would make a few reads a second
 * each. What tells a stopped server's cost apart on a loaded machine is the latency of single
 * reads: none may wait out the timeout.
 */
class FailoverIT {
  private static final String HOT = "VALUE hot 0 3\r\nhot\r\nEND\r\n";

  /**
   * A read this slow may have waited out the default timeout (1,000 ms; a hedged read takes its
   * hedge delay, 100 ms or more): at most half the clients may see one (a pause of the loaded
   * machine itself); each client saw one or more before.
   */
  private static final long SLOW_MILLIS = 1_000;

  @Test
  void threeClientsKeepTheirRateWhileOneOfThreeServersIsStopped() throws Exception {
    stoppedServerRun(3);
  }

  @Test
  void thirtyTwoClientsKeepTheirRateWhileOneOfThreeServersIsStopped() throws Exception {
    stoppedServerRun(32);
  }

  /** The batched worker at its other defaults: a stopped server's pipelined reads are hedged. */
  @Test
  void thirtyTwoClientsOfTheBatchedWorkerKeepTheirRateWhileOneOfThreeServersIsStopped()
      throws Exception {
    stoppedServerRun(32, "-t", "2", "-s", "false", "--worker-batch", "16");
  }

  private static void stoppedServerRun(int clientCount) throws Exception {
    stoppedServerRun(clientCount, "-t", "8", "-s", "false");
  }

  private static void stoppedServerRun(int clientCount, String... flags) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = RunningMiddleware.start(servers, flags)) {
      try (TextClient client = mw.client()) {
        assertThat(client.call("set hot 0 0 3\r\nhot\r\n")).isEqualTo("STORED\r\n");
      }
      AtomicLong answered = new AtomicLong();
      AtomicLong failed = new AtomicLong();
      AtomicLong slow = new AtomicLong();
      List<String> problems = new CopyOnWriteArrayList<>();
      long before;
      long during;
      long after;
      try (ClientThreads clients =
          ClientThreads.start(
              clientCount,
              "reader",
              (id, stop) -> readLoop(mw, answered, failed, slow, stop, problems))) {
        Thread.sleep(1_000); // warm-up
        before = perSecond(answered, 3_000);
        servers.get(1).signal("STOP");
        try {
          during = perSecond(answered, 5_000);
        } finally {
          servers.get(1).signal("CONT");
        }
        after = perSecond(answered, 1_000);
      }
      BackendHealth health = mw.middleware().stats().health(1);
      System.out.printf(
          "FailoverIT %d clients, %s: %d ops/s before, %d during the 5 s stop (%.0f %%), %d"
              + " in the second after SIGCONT (%.0f %%); %d failed replies, %d replies slower"
              + " than %d ms, %d ejections, %d hedges, back in rotation: %s%n",
          clientCount,
          String.join(" ", flags),
          before,
          during,
          100.0 * during / before,
          after,
          100.0 * after / before,
          failed.get(),
          slow.get(),
          SLOW_MILLIS,
          health.ejections(),
          health.hedges(),
          health.inRotation());
      assertThat(problems).isEmpty();
      assertThat(slow)
          .as("replies slower than %d ms", SLOW_MILLIS)
          .hasValueLessThanOrEqualTo(clientCount / 2);
      assertThat(during)
          .as("ops/s during the stop vs %d before", before)
          .isGreaterThan(before / 10);
      assertThat(after).as("ops/s after SIGCONT vs %d before", before).isGreaterThan(before / 10);
    } finally {
      for (MemcachedProcess server : servers) {
        server.signal("CONT");
        server.close();
      }
    }
  }

  /**
   * Killed and restarted while the middleware is idle: every worker's socket to it is stale. The
   * first request on each is retried on a new connection instead of failing (and three failures
   * ejecting a healthy server): no request fails and the server is not ejected.
   */
  @Test
  void aServerRestartedWhileIdleServesTheNextRequests() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "8");
        TextClient client = mw.client()) {
      assertThat(client.call("set k 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
      servers.get(1).kill();
      servers.get(1).restart();
      List<String> replies = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        replies.add(client.call("set k" + i + " 0 0 1\r\nv\r\n"));
        replies.add(client.call("get k" + i + "\r\n"));
      }
      List<String> failures =
          replies.stream().filter(r -> !r.equals("STORED\r\n") && !r.startsWith("VALUE ")).toList();
      assertThat(failures).isEmpty();
      assertThat(mw.middleware().stats().health(1).ejections()).isZero();
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * Killed under traffic, the server is ejected; restarted, it is back in rotation once a probe
   * succeeds (the probe runs on a new connection, every 500 ms: within a second on a quiet machine;
   * the time is printed) and the writes that follow succeed on it.
   */
  @Test
  void anEjectedServerIsBackOnceItAcceptsConnections() throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "8");
        TextClient client = mw.client()) {
      BackendHealth health = mw.middleware().stats().health(1);
      servers.get(1).kill();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (health.inRotation() && System.nanoTime() < deadline) {
        client.call("set x 0 0 1\r\nv\r\n");
      }
      assertThat(health.ejected()).as("ejected after the kill").isTrue();
      Thread.sleep(1_200); // a failed probe or two
      servers.get(1).restart(); // returns once it accepts connections
      long acceptingNanos = System.nanoTime();
      while (health.ejected() && System.nanoTime() - acceptingNanos < 30_000_000_000L) {
        Thread.sleep(5);
      }
      long backMillis = (System.nanoTime() - acceptingNanos) / 1_000_000;
      System.out.printf("FailoverIT restarted server back in rotation after %d ms%n", backMillis);
      assertThat(health.ejected()).as("back in rotation after %d ms", backMillis).isFalse();
      for (int i = 0; i < 20; i++) {
        assertThat(client.call("set y" + i + " 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  private static long perSecond(AtomicLong counter, long millis) throws InterruptedException {
    long start = counter.get();
    Thread.sleep(millis);
    return (counter.get() - start) * 1000 / millis;
  }

  private static void readLoop(
      RunningMiddleware mw,
      AtomicLong answered,
      AtomicLong failed,
      AtomicLong slow,
      AtomicBoolean stop,
      List<String> problems) {
    try (TextClient client = mw.client()) {
      client.setTimeoutMillis(10_000);
      while (!stop.get()) {
        long start = System.nanoTime();
        String reply = client.call("get hot\r\n");
        if (System.nanoTime() - start >= SLOW_MILLIS * 1_000_000L) {
          slow.incrementAndGet();
        }
        if (reply.equals(HOT)) {
          answered.incrementAndGet();
        } else if (reply.startsWith("SERVER_ERROR backend ")) {
          failed.incrementAndGet();
        } else {
          problems.add("get hot: " + reply);
          return;
        }
      }
    } catch (IOException e) {
      problems.add(e.toString());
    }
  }
}
