package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.config.ServerTimeouts;
import dev.cachelab.middleware.routing.ServerSet;
import dev.cachelab.middleware.testing.ClientThreads;
import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The server list from {@code --servers-file}, changed without a restart: servers added to the file
 * join, removed ones stop getting requests, client connections stay open and every answer stays
 * right while it changes; an invalid file is refused and the servers in use keep serving; a storm
 * of SIGHUPs changes nothing but the reload counter.
 */
class ServersFileReloadIT {
  /**
   * Whether this JVM started with SIGHUP ignored (a build run under nohup): the JVM then keeps it
   * ignored, so no SIGHUP reaches the middleware (it says so on stderr) and the file's changes are
   * what reloads it.
   */
  private static final boolean SIGHUP_IGNORED = sighupIgnored();

  private static boolean sighupIgnored() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("SigIgn:")) {
          return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & 1L) != 0; // SIGHUP = 1
        }
      }
    } catch (IOException | NumberFormatException e) {
      return false;
    }
    return false;
  }

  @Test
  void serversAddedToAndRemovedFromTheFileJoinAndLeave(@TempDir Path dir) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(3);
    Path file = dir.resolve("servers");
    write(file, servers.get(0), servers.get(1));
    try (RunningMiddleware mw = start(file);
        TextClient client = mw.client()) {
      assertThat(client.call("set a 0 0 1\r\na\r\n")).isEqualTo("STORED\r\n");
      write(file, servers.get(0), servers.get(1), servers.get(2));
      awaitStat(mw, "server_list_changes", 1);
      assertThat(client.call("set b 0 0 1\r\nb\r\n")).isEqualTo("STORED\r\n");
      try (TextClient added = new TextClient(servers.get(2).port())) {
        assertThat(added.call("get b\r\n"))
            .as("a write reaches the added server")
            .contains("b\r\n");
        assertThat(added.call("get a\r\n")).as("written before it joined").isEqualTo("END\r\n");
      }
      write(file, servers.get(0), servers.get(2));
      awaitStat(mw, "server_list_changes", 2);
      servers.get(1).kill();
      for (int i = 0; i < 30; i++) {
        assertThat(client.call("set c" + i + " 0 0 1\r\nc\r\n")).isEqualTo("STORED\r\n");
        assertThat(client.call("get c" + i + "\r\n"))
            .isEqualTo("VALUE c" + i + " 0 1\r\nc\r\nEND\r\n");
      }
      assertThat(mw.stat("servers_file_failed_reloads")).isZero();
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  @Test
  void anInvalidFileIsRefusedAndTheServersInUseKeepServing(@TempDir Path dir) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    Path file = dir.resolve("servers");
    write(file, servers.get(0), servers.get(1));
    try (RunningMiddleware mw = start(file);
        TextClient client = mw.client()) {
      replace(file, servers.get(0).address() + "\nnot-a-server\n");
      awaitStat(mw, "servers_file_failed_reloads", 1);
      replace(file, "");
      awaitStat(mw, "servers_file_failed_reloads", 2);
      assertThat(client.call("set k 0 0 1\r\nk\r\n")).isEqualTo("STORED\r\n");
      try (TextClient second = new TextClient(servers.get(1).port())) {
        assertThat(second.call("get k\r\n")).as("still written to both").contains("k\r\n");
      }
      assertThat(mw.stat("server_list_changes")).isZero();
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * A reload refuses what start-up refuses: a server listed again under another spelling (every
   * write would run twice on it) and a host that does not resolve.
   */
  @Test
  void aReloadRefusesAServerTwiceUnderAnotherSpellingAndAHostThatDoesNotResolve(@TempDir Path dir)
      throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    Path file = dir.resolve("servers");
    write(file, servers.get(0), servers.get(1));
    int port = servers.get(0).port();
    try (RunningMiddleware mw = start(file);
        TextClient client = mw.client()) {
      String first = servers.get(0).address() + "\n";
      replace(file, first + "localhost:" + port + "\n");
      awaitStat(mw, "servers_file_failed_reloads", 1);
      replace(file, first + "127.0.0.1:0" + port + "\n");
      awaitStat(mw, "servers_file_failed_reloads", 2);
      replace(file, first + "nohost.invalid:11211\n");
      awaitStat(mw, "servers_file_failed_reloads", 3);
      Thread.sleep(2_500); // tried again every second, counted once
      assertThat(mw.stat("servers_file_failed_reloads")).isEqualTo(3);
      assertThat(mw.stat("server_list_changes")).isZero();
      assertThat(mw.stat("servers_file_reloads")).isZero();
      // The servers in use are the two, each written once.
      assertThat(client.call("set k 0 0 1\r\nk\r\n")).isEqualTo("STORED\r\n");
      try (TextClient direct = new TextClient(port)) {
        String stats = direct.call("stats\r\n");
        assertThat(stats).contains("STAT cmd_set 1\r\n");
      }
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * Clients set and read back their own keys while servers are added (each new, holding no old
   * values) and removed: no wrong value (a miss is allowed: a key written before its server
   * joined), no failed request, no dropped connection.
   */
  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void theFileChangedWhileRequestsAreInFlight(int eventLoops, @TempDir Path dir) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(4);
    Path file = dir.resolve("servers");
    write(file, servers.get(0), servers.get(1));
    try (RunningMiddleware mw = start(file, "--event-loops", "" + eventLoops)) {
      List<List<MemcachedProcess>> steps =
          List.of(
              List.of(servers.get(0), servers.get(1), servers.get(2)),
              List.of(servers.get(1), servers.get(2)),
              List.of(servers.get(1), servers.get(2), servers.get(3)),
              List.of(servers.get(2), servers.get(3)));
      long answered =
          whileClientsCheckTheirKeys(
              mw,
              8,
              () -> {
                for (int i = 0; i < steps.size(); i++) {
                  Thread.sleep(300);
                  write(file, steps.get(i).toArray(new MemcachedProcess[0]));
                  awaitStat(mw, "server_list_changes", i + 1);
                }
                Thread.sleep(300);
              });
      System.out.printf(
          "ServersFileReloadIT: %d set+get pairs over 4 changes of the server list%n", answered);
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  @Test
  void aStormOfSighupsChangesNothingButTheCounter(@TempDir Path dir) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    Path file = dir.resolve("servers");
    write(file, servers.get(0), servers.get(1));
    try (RunningMiddleware mw = start(file)) {
      whileClientsCheckTheirKeys(
          mw,
          2,
          () -> {
            long pid = ProcessHandle.current().pid();
            Process storm =
                new ProcessBuilder(
                        "bash", "-c", "for i in $(seq 100); do kill -HUP " + pid + "; done")
                    .start();
            assertThat(storm.waitFor()).isZero();
            if (!SIGHUP_IGNORED) {
              awaitStat(mw, "servers_file_reloads", 1);
            }
            Thread.sleep(500);
          });
      System.out.printf(
          "ServersFileReloadIT: 100 SIGHUPs, %d reloads%s%n",
          mw.stat("servers_file_reloads"),
          SIGHUP_IGNORED ? " (this JVM started with SIGHUP ignored: none can arrive)" : "");
      assertThat(mw.stat("servers_file_reloads")).isBetween(SIGHUP_IGNORED ? 0L : 1L, 100L);
      assertThat(mw.stat("servers_file_failed_reloads")).isZero();
      assertThat(mw.stat("server_list_changes")).isZero();
      assertThat(mw.middleware().servers().current().id()).isEqualTo(1);
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /**
   * Timeouts in the file ({@code backend-timeout-ms=}, {@code eject-retry-ms=}) override the flags
   * at start and on reload; an invalid value is refused and the timeouts in use stay; a setting
   * taken out of the file falls back to its flag.
   */
  @Test
  void timeoutsInTheFileApplyAtStartAndOnReload(@TempDir Path dir) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(1);
    MemcachedProcess server = servers.get(0);
    Path file = dir.resolve("servers");
    replace(file, server.address() + "\nbackend-timeout-ms=200\n");
    try (RunningMiddleware mw =
            RunningMiddleware.startWithFlags(
                "-t", "2", "--backend-timeout-ms", "5000", "--servers-file", file.toString());
        TextClient client = mw.client()) {
      client.setTimeoutMillis(10_000);
      ServerSet set = mw.middleware().servers();
      assertThat(set.current().timeouts()).isEqualTo(new ServerTimeouts(200, 500));
      assertThat(client.call("set t 0 0 1\r\nt\r\n")).isEqualTo("STORED\r\n");
      server.signal("STOP");
      long started = System.nanoTime();
      String reply;
      try {
        reply = client.call("get t\r\n");
      } finally {
        server.signal("CONT");
      }
      long waitedMillis = (System.nanoTime() - started) / 1_000_000;
      assertThat(reply).isEqualTo("SERVER_ERROR backend " + server.address() + " timed out\r\n");
      // 200 ms from the file: the flag's timeout would have taken 5,000 (the rest is a loaded
      // machine's margin).
      assertThat(waitedMillis).as("ms until the timeout's reply").isLessThan(5_000);

      replace(file, server.address() + "\nbackend-timeout-ms=0\n");
      awaitStat(mw, "servers_file_failed_reloads", 1);
      assertThat(set.current().timeouts()).isEqualTo(new ServerTimeouts(200, 500));
      assertThat(mw.stat("server_list_changes")).isZero();

      replace(
          file,
          "# the timeout falls back to its flag\n" + server.address() + "\neject-retry-ms=1500\n");
      awaitStat(mw, "server_list_changes", 1);
      assertThat(set.current().timeouts()).isEqualTo(new ServerTimeouts(5000, 1500));
      assertThat(set.current().health().get(0).retryIntervalNanos()).isEqualTo(1_500_000_000L);
      assertThat(client.call("get t\r\n")).isEqualTo("VALUE t 0 1\r\nt\r\nEND\r\n");
      assertThat(mw.stat("servers_file_failed_reloads")).isEqualTo(1);
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  /** What a test does while the clients run. */
  @FunctionalInterface
  private interface Action {
    void run() throws Exception;
  }

  /**
   * Runs {@code action} while {@code count} clients set and read back their own keys; asserts that
   * none saw a problem and returns the set+get pairs done.
   */
  private static long whileClientsCheckTheirKeys(RunningMiddleware mw, int count, Action action)
      throws Exception {
    AtomicLong answered = new AtomicLong();
    List<String> problems = new CopyOnWriteArrayList<>();
    try (ClientThreads clients =
        ClientThreads.start(
            count, "rw", (id, stop) -> ownKeysLoop(mw, id, stop, answered, problems))) {
      action.run();
    }
    assertThat(problems).isEmpty();
    assertThat(answered.get()).isPositive();
    return answered.get();
  }

  private static void ownKeysLoop(
      RunningMiddleware mw,
      int id,
      AtomicBoolean stop,
      AtomicLong answered,
      List<String> problems) {
    try (TextClient client = mw.client()) {
      client.setTimeoutMillis(10_000);
      for (int i = 0; !stop.get(); i++) {
        String key = "r" + id + "_" + (i % 50);
        String value = Integer.toString(i);
        String set = client.call("set " + key + " 0 0 " + value.length() + "\r\n" + value + "\r\n");
        if (!set.equals("STORED\r\n")) {
          problems.add(key + " set: " + set.trim());
          return;
        }
        String get = client.call("get " + key + "\r\n");
        String hit = "VALUE " + key + " 0 " + value.length() + "\r\n" + value + "\r\nEND\r\n";
        if (!get.equals(hit) && !get.equals("END\r\n")) {
          problems.add(key + " get: " + get.trim() + " (expected " + value + " or a miss)");
          return;
        }
        answered.incrementAndGet();
      }
    } catch (IOException e) {
      problems.add("client " + id + ": " + e);
    }
  }

  private static RunningMiddleware start(Path file, String... flags) throws IOException {
    List<String> args = new ArrayList<>(List.of("-t", "4", "-s", "false"));
    args.addAll(List.of("--servers-file", file.toString()));
    args.addAll(List.of(flags));
    return RunningMiddleware.startWithFlags(args.toArray(new String[0]));
  }

  /** Writes the servers file as a ConfigMap update does: a new file moved into place. */
  private static void write(Path file, MemcachedProcess... servers) throws IOException {
    StringBuilder text = new StringBuilder("# servers\n");
    for (MemcachedProcess server : servers) {
      text.append(server.address()).append('\n');
    }
    replace(file, text.toString());
  }

  private static void replace(Path file, String text) throws IOException {
    Path next = file.resolveSibling(file.getFileName() + ".next");
    Files.writeString(next, text, StandardCharsets.UTF_8);
    Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static void awaitStat(RunningMiddleware mw, String name, long atLeast)
      throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (mw.stat(name) < atLeast && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(mw.stat(name)).as(name).isGreaterThanOrEqualTo(atLeast);
  }
}
