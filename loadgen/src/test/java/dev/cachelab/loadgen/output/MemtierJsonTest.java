package dev.cachelab.loadgen.output;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cachelab.loadgen.config.LoadgenCommand;
import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.stats.KeyCounts;
import dev.cachelab.loadgen.stats.KeyFrequencies;
import dev.cachelab.loadgen.stats.LatencySummary;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.RunResult;
import dev.cachelab.loadgen.stats.SecondSample;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class MemtierJsonTest {
  private static final List<String> SECTION_KEYS =
      List.of(
          "Count",
          "Ops/sec",
          "Hits/sec",
          "Misses/sec",
          "Error Replies",
          "Connection Errors/sec",
          "Connection Errors",
          "Latency",
          "Average Latency",
          "Accumulated Latency",
          "Min Latency",
          "Max Latency",
          "KB/sec",
          "KB/sec RX/TX",
          "KB/sec RX",
          "KB/sec TX",
          "Time-Serie",
          "Percentile Latencies");

  static LoadgenConfig config(String... args) {
    LoadgenCommand command = new LoadgenCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  /** Two seconds: second 0 has 3 GETs (100, 200, 300 µs) and 1 SET (1000 µs); second 1 is empty. */
  static RunResult run(LoadgenConfig c, int number) {
    RunResult r = new RunResult(number);
    Histogram get = new Histogram(3);
    get.recordValue(100);
    get.recordValue(200);
    get.recordValue(300);
    Histogram set = new Histogram(3);
    set.recordValue(1000);
    Histogram total = get.copy();
    total.add(set);
    r.op(OpType.GET).latencyMicros().add(get);
    r.op(OpType.SET).latencyMicros().add(set);
    r.totals().latencyMicros().add(total);
    r.op(OpType.GET)
        .series()
        .add(new SecondSample(0, LatencySummary.of(get, c.percentiles()), 30, 60, 1_000_250));
    r.op(OpType.SET)
        .series()
        .add(new SecondSample(0, LatencySummary.of(set, c.percentiles()), 8, 1100, 1_000_250));
    r.totals()
        .series()
        .add(new SecondSample(0, LatencySummary.of(total, c.percentiles()), 38, 1160, 1_000_250));
    Histogram empty = new Histogram(3);
    for (var section : List.of(r.op(OpType.GET), r.op(OpType.SET), r.totals())) {
      section
          .series()
          .add(new SecondSample(1, LatencySummary.of(empty, c.percentiles()), 0, 0, 2_000_500));
    }
    r.op(OpType.GET).setCounters(2, 1, 0, 30, 60);
    r.op(OpType.SET).setCounters(0, 0, 0, 8, 1100);
    r.totals().setCounters(2, 1, 0, 38, 1160);
    r.setSpan(1_700_000_000_000L, 2_000_000_000L);
    return r;
  }

  @Test
  void singleRunHasMemtiersLayout(@TempDir Path dir) throws Exception {
    LoadgenConfig c = config("-P", "memcache_text", "--test-time=2", "-t", "1", "-c", "2");
    Path file = dir.resolve("sub/out.json");
    new MemtierJson(c, List.of("--test-time=2")).write(file, List.of(run(c, 1)));
    JsonNode root = new ObjectMapper().readTree(Files.readString(file));

    assertThat(fieldNames(root)).containsExactly("configuration", "run information", "ALL STATS");
    assertThat(root.at("/configuration/protocol").asText()).isEqualTo("memcache_text");
    assertThat(root.at("/configuration/ratio").asText()).isEqualTo("1:10");
    JsonNode info = root.get("run information");
    assertThat(info.get("Threads").asInt()).isEqualTo(1);
    assertThat(info.get("Connections per thread").asInt()).isEqualTo(2);
    assertThat(info.get("Seconds").asInt()).isEqualTo(2);
    assertThat(info.get("Format version").asInt()).isEqualTo(2);

    JsonNode all = root.get("ALL STATS");
    assertThat(fieldNames(all))
        .containsExactly(
            "Runtime", "Sets", "Gets", "Waits", "Totals", "SET", "GET", "WAIT", "Key Counts");
    JsonNode runtime = all.get("Runtime");
    assertThat(runtime.get("Start time").asLong()).isEqualTo(1_700_000_000_000L);
    assertThat(runtime.get("Finish time").asLong()).isEqualTo(1_700_000_002_000L);
    assertThat(runtime.get("Total duration").asLong()).isEqualTo(2000);
    assertThat(runtime.get("Time unit").asText()).isEqualTo("MILLISECONDS");
    assertThat(runtime.get("Interrupted").asText()).isEqualTo("false");
    for (String s : List.of("Sets", "Gets", "Waits", "Totals")) {
      assertThat(fieldNames(all.get(s))).as(s).containsExactlyElementsOf(SECTION_KEYS);
    }

    JsonNode gets = all.get("Gets");
    assertThat(gets.get("Count").asLong()).isEqualTo(3);
    assertThat(gets.get("Ops/sec").asDouble()).isEqualTo(1.5);
    assertThat(gets.get("Hits/sec").asDouble()).isEqualTo(1.0);
    assertThat(gets.get("Misses/sec").asDouble()).isEqualTo(0.5);
    assertThat(gets.get("Average Latency").asDouble()).isEqualTo(0.2);
    assertThat(gets.get("Latency").asDouble()).isEqualTo(0.2);
    assertThat(gets.get("Min Latency").asDouble()).isEqualTo(0.1);
    assertThat(gets.get("Max Latency").asDouble()).isEqualTo(0.3);
    JsonNode pct = gets.get("Percentile Latencies");
    assertThat(fieldNames(pct))
        .containsExactly("p50.00", "p99.00", "p99.90", "Histogram log format");
    assertThat(pct.get("p50.00").asDouble()).isEqualTo(0.2);
    assertThat(pct.get("p99.00").asDouble()).isEqualTo(0.3);
    byte[] compressed =
        Base64.getDecoder().decode(pct.at("/Histogram log format/Compressed Histogram").asText());
    Histogram decoded = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(compressed), 0);
    assertThat(decoded.getTotalCount()).isEqualTo(3);

    JsonNode series = gets.get("Time-Serie");
    assertThat(fieldNames(series)).containsExactly("0", "1");
    assertThat(fieldNames(series.get("0")))
        .containsExactly(
            "Bytes RX",
            "Bytes TX",
            "Count",
            "Cut At ms",
            "Average Latency",
            "Accumulated Latency",
            "Min Latency",
            "Max Latency",
            "p50.00",
            "p99.00",
            "p99.90");
    assertThat(series.at("/0/Count").asLong()).isEqualTo(3);
    // when the sampler cut each second (late cuts make a second longer than 1 s)
    assertThat(series.at("/0/Cut At ms").asDouble()).isEqualTo(1000.25);
    assertThat(series.at("/1/Cut At ms").asDouble()).isEqualTo(2000.5);
    assertThat(fieldNames(series.get("1")))
        .containsExactly("Bytes RX", "Bytes TX", "Count", "Cut At ms");

    assertThat(all.get("Sets").get("Hits/sec").asDouble()).isZero();
    assertThat(all.get("Totals").get("Count").asLong()).isEqualTo(4);
    assertThat(all.get("Totals").get("Max Latency").asDouble()).isEqualTo(1.0);
    JsonNode getHistogram = all.get("GET");
    assertThat(getHistogram).hasSize(3);
    assertThat(getHistogram.get(0).get("<=msec").asDouble()).isEqualTo(0.1);
    assertThat(getHistogram.get(2).get("percent").asDouble()).isEqualTo(100.0);
    assertThat(all.get("WAIT")).isEmpty();
  }

  @Test
  void keyCountsNameTheKeysAndTheirOctaves() {
    LoadgenConfig c =
        config(
            "--key-prefix=k-",
            "--key-minimum=1",
            "--key-maximum=5",
            "--key-pattern=Z:Z",
            "--key-zipf-exp=1.5");
    KeyCounts threadA = new KeyCounts(1);
    KeyCounts threadB = new KeyCounts(1);
    for (long key : new long[] {1, 1, 1, 2, 5}) {
      threadA.record(key);
    }
    threadB.record(1);
    threadB.record(3);
    RunResult r = run(c, 1);
    r.setKeyFrequencies(KeyFrequencies.ofThreads(List.of(threadA, threadB), 2));
    JsonNode keys = new MemtierJson(c, List.of()).document(List.of(r)).at("/ALL STATS/Key Counts");

    assertThat(keys.get("Keys Requested").asLong()).isEqualTo(7);
    assertThat(
            new MemtierJson(c, List.of())
                .document(List.of(r))
                .at("/configuration/key_pattern")
                .asText())
        .isEqualTo("Z:Z");
    assertThat(
            new MemtierJson(c, List.of())
                .document(List.of(r))
                .at("/configuration/key_zipf_exp")
                .asDouble())
        .isEqualTo(1.5);
    assertThat(keys.at("/Top Keys/0/Key").asText()).isEqualTo("k-1");
    assertThat(keys.at("/Top Keys/0/Count").asLong()).isEqualTo(4);
    assertThat(keys.at("/Top Keys/0/Overcount").asLong()).isZero();
    assertThat(keys.get("Top Keys")).hasSize(2);
    assertThat(keys.get("Other Keys At Most").asLong()).isEqualTo(1);
    // octaves from key 1: {1}, {2, 3}, {4..5} (cut at the key maximum)
    JsonNode octaves = keys.get("Key Octaves");
    assertThat(octaves).hasSize(3);
    assertThat(octaves.at("/1/First Key").asLong()).isEqualTo(2);
    assertThat(octaves.at("/1/Last Key").asLong()).isEqualTo(3);
    assertThat(octaves.at("/1/Count").asLong()).isEqualTo(2);
    assertThat(octaves.at("/2/Last Key").asLong()).isEqualTo(5);
    assertThat(octaves.at("/2/Count").asLong()).isEqualTo(1);
  }

  @Test
  void percentileKeysFollowPrintPercentiles() {
    LoadgenConfig c = config("--print-percentiles=90,99.99,99.999", "--hide-histogram");
    JsonNode all = new MemtierJson(c, List.of()).document(List.of(run(c, 1))).get("ALL STATS");
    assertThat(fieldNames(all.at("/Totals/Percentile Latencies")))
        .containsExactly("p90.00", "p99.99", "p99.999", "Histogram log format");
    assertThat(fieldNames(all))
        .containsExactly("Runtime", "Sets", "Gets", "Waits", "Totals", "Key Counts");
  }

  @Test
  void severalRunsGiveBestWorstAndAggregate() {
    LoadgenConfig c = config("-x", "2", "-n", "5");
    RunResult slow = run(c, 1);
    RunResult fast = run(c, 2);
    fast.setSpan(1_700_000_010_000L, 1_000_000_000L);
    JsonNode root = new MemtierJson(c, List.of()).document(List.of(slow, fast));
    assertThat(fieldNames(root))
        .containsExactly(
            "configuration",
            "run information",
            "BEST RUN RESULTS",
            "WORST RUN RESULTS",
            "AGGREGATED AVERAGE RESULTS (2 runs)");
    assertThat(root.at("/run information/Requests per client").asLong()).isEqualTo(5);
    assertThat(root.at("/BEST RUN RESULTS/Totals/Ops~1sec").asDouble()).isEqualTo(4.0);
    assertThat(root.at("/WORST RUN RESULTS/Totals/Ops~1sec").asDouble()).isEqualTo(2.0);
    JsonNode agg = root.get("AGGREGATED AVERAGE RESULTS (2 runs)");
    assertThat(agg.at("/Totals/Count").asLong()).isEqualTo(8);
    assertThat(agg.at("/Totals/Ops~1sec").asDouble())
        .isCloseTo(8 / 3.0, org.assertj.core.data.Offset.offset(0.01));
  }

  @Test
  void interruptedRunSaysSo() {
    LoadgenConfig c = config();
    RunResult r = run(c, 1);
    r.setFailure("127.0.0.1:1 (client 0): server closed the connection");
    JsonNode runtime = new MemtierJson(c, List.of()).document(List.of(r)).at("/ALL STATS/Runtime");
    assertThat(runtime.get("Interrupted").asText()).isEqualTo("true");
    assertThat(runtime.get("Error").asText()).contains("server closed the connection");
  }

  static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
