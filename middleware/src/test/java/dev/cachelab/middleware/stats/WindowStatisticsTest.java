package dev.cachelab.middleware.stats;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.config.ConfigParser;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.protocol.OpType;
import dev.cachelab.middleware.testing.MiddlewareCommand;
import java.util.List;
import java.util.Random;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class WindowStatisticsTest {

  @Test
  void windowsAddUpToTheWholeRun() {
    StatsRegistry registry = new StatsRegistry(List.of("a:1", "b:2"), 2);
    ThreadRecorder worker0 = registry.newRecorder();
    ThreadRecorder worker1 = registry.newRecorder();
    WindowAggregator aggregator = new WindowAggregator(registry);
    Histogram wholeStaging = Window.newHistogram();
    Histogram wholeResponse = Window.newHistogram();
    Histogram wholeQueue = Window.newHistogram();
    long wholeKeys = 0;
    long wholeHits = 0;
    long wholeErrors = 0;
    long[] wholeServer = new long[2];
    Window sum = new Window(-1, 0, 0, 2);
    Random random = new Random(1);
    for (int w = 0; w < 7; w++) {
      int n = random.nextInt(500);
      for (int i = 0; i < n; i++) {
        ThreadRecorder recorder = random.nextBoolean() ? worker0 : worker1;
        OpType op = OpType.recorded()[random.nextInt(OpType.RECORDED)];
        long responseNanos = 1_000L + random.nextInt(5_000_000);
        int keys = op == OpType.MULTIGET ? 1 + random.nextInt(10) : op == OpType.GET ? 1 : 0;
        int hits = keys == 0 ? 0 : random.nextInt(keys + 1);
        recorder.recordRequest(
            op, responseNanos, responseNanos / 3, responseNanos / 5, responseNanos / 2, keys, hits);
        wholeResponse.recordValue((responseNanos + 500) / 1000);
        wholeStaging.recordValue((responseNanos / 5 + 500) / 1000);
        wholeKeys += keys;
        wholeHits += hits;
        if (random.nextInt(10) == 0) {
          recorder.recordError(op, ErrorKind.values()[random.nextInt(ErrorKind.COUNT)]);
          wholeErrors++;
        }
        int server = random.nextInt(2);
        recorder.recordServerRequest(server, false);
        wholeServer[server]++;
        int queueLength = random.nextInt(20);
        worker0.recordQueueLength(queueLength);
        wholeQueue.recordValue(queueLength);
      }
      Window window = aggregator.close(1000L * w, 1000);
      assertThat(window.index()).isEqualTo(w);
      long perOp = 0;
      for (OpType op : OpType.recorded()) {
        perOp += window.count(op);
      }
      assertThat(window.count(OpType.ALL)).isEqualTo(perOp);
      for (Metric metric : Metric.values()) {
        for (OpType op : OpType.values()) {
          sum.histogram(metric, op).add(window.histogram(metric, op));
        }
      }
      sum.queueLength.add(window.queueLength());
      for (OpType op : OpType.values()) {
        sum.keysRequested[op.ordinal()] += window.keysRequested(op);
        sum.hits[op.ordinal()] += window.hits(op);
        sum.errors[op.ordinal()] += window.errors(op);
      }
      sum.serverRequests[0] += window.serverRequests(0);
      sum.serverRequests[1] += window.serverRequests(1);
    }
    assertThat(sum.histogram(Metric.RESPONSE_TIME, OpType.ALL)).isEqualTo(wholeResponse);
    assertThat(sum.histogram(Metric.STAGING_TIME, OpType.ALL)).isEqualTo(wholeStaging);
    assertThat(sum.count(OpType.ALL)).isEqualTo(wholeResponse.getTotalCount());
    long requests = 0;
    for (OpType op : OpType.recorded()) {
      requests += registry.requests(op);
    }
    assertThat(sum.count(OpType.ALL)).isEqualTo(requests);
    assertThat(sum.queueLength()).isEqualTo(wholeQueue);
    assertThat(sum.keysRequested(OpType.ALL)).isEqualTo(wholeKeys);
    assertThat(sum.hits(OpType.ALL)).isEqualTo(wholeHits);
    assertThat(sum.errors(OpType.ALL)).isEqualTo(wholeErrors);
    assertThat(sum.serverRequests).containsExactly(wholeServer);
    // An empty window after everything is drained.
    Window empty = aggregator.close(7000, 1000);
    assertThat(empty.count(OpType.ALL)).isZero();
    assertThat(empty.keysRequested(OpType.ALL)).isZero();
  }

  @Test
  void summaryLeavesOutWarmupAndCooldownWindows() {
    MiddlewareConfig config =
        ConfigParser.parse(
            MiddlewareCommand.flagsOnLoopback(
                    1, "-m", "a:1", "--window-ms", "500", "--warmup-s", "1", "--cooldown-s", "1")
                .toArray(String[]::new));
    StatsRegistry registry = new StatsRegistry(config.servers(), 1);
    ThreadRecorder recorder = registry.newRecorder();
    WindowAggregator aggregator = new WindowAggregator(registry);
    Summary summary = new Summary(config, "127.0.0.1:1");
    // 10 windows of 500 ms; window w holds w+1 gets. Warm-up = cool-down = 2 windows.
    for (int w = 0; w < 10; w++) {
      for (int i = 0; i <= w; i++) {
        recorder.recordRequest(OpType.GET, 100_000, 0, 0, 50_000, 1, 1);
      }
      summary.add(aggregator.close(500L * w, 500));
    }
    long expected = 3 + 4 + 5 + 6 + 7 + 8; // windows 2..7
    assertThat(summary.measured().count(OpType.GET)).isEqualTo(expected);
    String json = summary.toJson();
    assertThat(json)
        .contains("\"windows\": {\"total\": 10, \"measured_first\": 2, \"measured_last\": 7,")
        .contains("\"measured_seconds\": 3.000")
        .contains("\"get\": {\"count\": " + expected + ", \"throughput_ops_per_s\": 11.000")
        .contains(
            "\"keys_requested\": " + expected + ", \"hits\": " + expected + ", \"misses\": 0");
  }
}
