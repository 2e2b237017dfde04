package dev.cachelab.loadgen.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.cachelab.loadgen.it.LoadgenRunner.Outcome;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The load generator against a real redis-server on a free loopback port (RESP2). */
class RedisIT extends AgainstRealServer {
  @Override
  ServerProcess startServer() throws Exception {
    return ServerProcess.redis();
  }

  @Override
  String[] protocolArgs() {
    return new String[] {"-P", "redis", "--quiet"};
  }

  private static long delta(Map<String, Long> before, Map<String, Long> after, String name) {
    return after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L);
  }

  @Test
  void preloadAllKeysThenMultiGetRunHasNoMissesAndMatchesCommandStats() throws Exception {
    Outcome preload =
        LoadgenRunner.run(
            dir,
            args(
                "-t",
                "2",
                "-c",
                "2",
                "--ratio=1:0",
                "-n",
                "allkeys",
                "--key-pattern=P:P",
                "--key-maximum=999",
                "-d",
                "64",
                "--pipeline=16"));
    assertThat(preload.exitCode()).as(preload.err()).isZero();
    assertThat(preload.count("Sets")).isEqualTo(1000);
    assertThat(server.redisInfo().get("db0")).isNull(); // db0 is "keys=1000,..." (not numeric)

    Map<String, Long> before = server.redisInfo();
    Outcome read =
        LoadgenRunner.run(
            dir,
            args(
                "-t",
                "1",
                "-c",
                "4",
                "--ratio=0:3",
                "--multi-key-get=3",
                "-n",
                "100",
                "--key-maximum=999",
                "--distinct-client-seed"));
    Map<String, Long> after = server.redisInfo();
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(read.count("Gets")).isEqualTo(400);
    assertThat(read.perSecond("Gets", "Misses/sec")).isZero();
    assertThat(delta(before, after, "cmdstat_mget.calls")).isEqualTo(400);
    assertThat(delta(before, after, "keyspace_hits")).isEqualTo(1200);
    assertThat(delta(before, after, "keyspace_misses")).isZero();
  }

  @Test
  void countsEqualCommandStatsInATimedMixedRun() throws Exception {
    Map<String, Long> before = server.redisInfo();
    Outcome run =
        LoadgenRunner.run(
            dir,
            args(
                "-t",
                "2",
                "-c",
                "2",
                "--ratio=1:3",
                "--test-time=2",
                "--key-maximum=299",
                "--pipeline=2",
                "--expiry-range=100-100",
                "--distinct-client-seed"));
    Map<String, Long> after = server.redisInfo();
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(delta(before, after, "cmdstat_set.calls")).isEqualTo(run.count("Sets"));
    assertThat(delta(before, after, "cmdstat_get.calls")).isEqualTo(run.count("Gets"));
    long hits = delta(before, after, "keyspace_hits");
    assertThat((double) run.total("Gets", "Hits/sec")).isCloseTo(hits, within(2 + hits * 0.002));
    assertThat(run.count("Sets")).isPositive();
  }
}
