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

/**
 * The documented rules for commands whose meaning is ill-defined under replication (README,
 * "Replication rules"), with the replicas made to diverge on purpose by writing to them directly.
 */
class ReplicationRulesIT {
  private static final List<MemcachedProcess> servers = new ArrayList<>();

  @BeforeAll
  static void startServers() throws IOException {
    servers.addAll(MemcachedProcess.startMany(3));
  }

  @AfterAll
  static void stopServers() {
    servers.forEach(MemcachedProcess::close);
  }

  @BeforeEach
  void flush() throws IOException {
    for (int s = 0; s < servers.size(); s++) {
      direct(s, "flush_all\r\n");
    }
  }

  private static String direct(int server, String command) throws IOException {
    try (TextClient client = new TextClient(servers.get(server).port())) {
      return client.call(command);
    }
  }

  @Test
  void casIsCheckedOnThePrimaryAndPropagatedWithSet() throws Exception {
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "2", "-s", "true");
        TextClient client = mw.client()) {
      client.call("set c 5 0 3\r\nold\r\n");
      // Make the replicas' cas uniques differ from the primary's.
      direct(1, "set c 5 0 3\r\nold\r\n");
      direct(2, "set c 5 0 3\r\nold\r\n");
      direct(2, "set c 5 0 3\r\nold\r\n");
      String gets = client.call("gets c\r\n");
      assertThat(gets).isEqualTo(direct(0, "gets c\r\n"));
      Matcher m = Pattern.compile("VALUE c 5 3 (\\d+)").matcher(gets);
      assertThat(m.find()).isTrue();
      long unique = Long.parseLong(m.group(1));
      assertThat(client.call("cas c 5 0 3 " + (unique + 100) + "\r\nbad\r\n"))
          .isEqualTo("EXISTS\r\n");
      assertThat(client.call("cas c 7 0 3 " + unique + "\r\nnew\r\n")).isEqualTo("STORED\r\n");
      for (int s = 0; s < 3; s++) {
        assertThat(direct(s, "get c\r\n"))
            .as("server %d", s)
            .isEqualTo("VALUE c 7 3\r\nnew\r\nEND\r\n");
      }
    }
  }

  @Test
  void casRefusedByThePrimaryIsNotPropagated() throws Exception {
    try (RunningMiddleware mw =
            RunningMiddleware.start(servers, "-t", "1", "--max-value-bytes", "4000000");
        TextClient client = mw.client()) {
      client.call("set c 0 0 1\r\nx\r\n");
      Matcher m = Pattern.compile("VALUE c 0 1 (\\d+)").matcher(client.call("gets c\r\n"));
      assertThat(m.find()).isTrue();
      // memcached stores at most 1 MiB by default: the primary refuses this cas, so nothing is
      // propagated and every replica keeps the old value.
      String big = "v".repeat(2 << 20);
      assertThat(
              client.call("cas c 0 0 " + big.length() + " " + m.group(1) + "\r\n" + big + "\r\n"))
          .startsWith("SERVER_ERROR");
      for (int s = 0; s < 3; s++) {
        assertThat(direct(s, "get c\r\n")).isEqualTo("VALUE c 0 1\r\nx\r\nEND\r\n");
      }
    }
  }

  @Test
  void incrOnDivergedReplicasAnswersThePrimarysValue() throws Exception {
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "2");
        TextClient client = mw.client()) {
      direct(0, "set n 0 0 2\r\n10\r\n");
      direct(1, "set n 0 0 2\r\n20\r\n");
      direct(2, "set n 0 0 2\r\n30\r\n");
      assertThat(client.call("incr n 1\r\n")).isEqualTo("11\r\n");
      assertThat(direct(1, "get n\r\n")).isEqualTo("VALUE n 0 2\r\n21\r\nEND\r\n");
      assertThat(direct(2, "get n\r\n")).isEqualTo("VALUE n 0 2\r\n31\r\nEND\r\n");
      // A replica without the key makes the whole incr fail with its reply.
      direct(2, "delete n\r\n");
      assertThat(client.call("decr n 1\r\n")).isEqualTo("NOT_FOUND\r\n");
      assertThat(direct(0, "get n\r\n")).isEqualTo("VALUE n 0 2\r\n10\r\nEND\r\n");
    }
  }

  @Test
  void flushAllReachesEveryServerInBothRoutingModes() throws Exception {
    for (String routing : List.of("round-robin", "hash")) {
      for (int s = 0; s < 3; s++) {
        direct(s, "set f 0 0 1\r\nv\r\n");
      }
      try (RunningMiddleware mw =
              RunningMiddleware.start(
                  servers, "-t", "2", "--routing", routing, "--admin-commands");
          TextClient client = mw.client()) {
        assertThat(client.call("flush_all\r\n")).isEqualTo("OK\r\n");
      }
      for (int s = 0; s < 3; s++) {
        assertThat(direct(s, "get f\r\n")).as("%s server %d", routing, s).isEqualTo("END\r\n");
      }
    }
  }

  @Test
  void writeSucceedsOnlyIfEveryReplicaSucceeds() throws Exception {
    try (RunningMiddleware mw = RunningMiddleware.start(servers, "-t", "2");
        TextClient client = mw.client()) {
      direct(1, "set a 0 0 1\r\nx\r\n");
      // add: stored on servers 0 and 2, refused by server 1.
      assertThat(client.call("add a 0 0 1\r\ny\r\n")).isEqualTo("NOT_STORED\r\n");
      assertThat(direct(0, "get a\r\n")).isEqualTo("VALUE a 0 1\r\ny\r\nEND\r\n");
      // delete: deleted on 0 and 2 ... and 1: DELETED everywhere.
      assertThat(client.call("delete a\r\n")).isEqualTo("DELETED\r\n");
      assertThat(client.call("delete a\r\n")).isEqualTo("NOT_FOUND\r\n");
      direct(2, "set t 0 0 1\r\nx\r\n");
      assertThat(client.call("touch t 100\r\n")).isEqualTo("NOT_FOUND\r\n");
    }
  }
}
