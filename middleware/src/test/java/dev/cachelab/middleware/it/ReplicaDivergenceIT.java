package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.RedisProcess;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A replicated write refused by one server (redis out of memory) and applied on the other leaves
 * the replicas different: it is counted ({@code replica_divergences} in {@code stats}), and with
 * {@code --divergence-delete} the key is deleted where the write failed, so that round-robin reads
 * return the new value or nothing, never the old one.
 */
class ReplicaDivergenceIT {

  @Test
  void aWriteRefusedByOneReplicaIsCountedAndReadsFlip() throws Exception {
    List<String> reads = refusedWriteThenReads(false, 0);
    assertThat(reads).contains("$3\r\nnew\r\n").contains("$3\r\nold\r\n");
  }

  @Test
  void withDivergenceDeleteReadsNeverReturnTheOldValue() throws Exception {
    List<String> reads = refusedWriteThenReads(true, 1);
    assertThat(reads).contains("$3\r\nnew\r\n").doesNotContain("$3\r\nold\r\n");
  }

  private static List<String> refusedWriteThenReads(boolean delete, int deletes) throws Exception {
    try (RedisProcess first = RedisProcess.start();
        RedisProcess second = RedisProcess.start()) {
      List<String> flags =
          new ArrayList<>(List.of("--protocol", "redis", "-t", "2", "-s", "false"));
      if (delete) {
        flags.add("--divergence-delete");
      }
      try (RunningMiddleware mw =
              RunningMiddleware.startWithAddresses(
                  List.of(first.address(), second.address()), flags.toArray(new String[0]));
          RespClient client = new RespClient(mw.port());
          RespClient direct = new RespClient(second.port())) {
        assertThat(client.call("SET", "k", "old")).isEqualTo("+OK\r\n");
        assertThat(direct.call("CONFIG", "SET", "maxmemory-policy", "noeviction"))
            .isEqualTo("+OK\r\n");
        assertThat(direct.call("CONFIG", "SET", "maxmemory", "1")).isEqualTo("+OK\r\n");
        assertThat(client.call("SET", "k", "new")).startsWith("-OOM");
        String stats = new String(mw.middleware().stats().statsReply(), StandardCharsets.UTF_8);
        assertThat(stats)
            .contains("STAT replica_divergences 1\r\n")
            .contains("STAT divergence_deletes " + deletes + "\r\n");
        List<String> reads = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          reads.add(client.call("GET", "k"));
        }
        return reads;
      }
    }
  }
}
