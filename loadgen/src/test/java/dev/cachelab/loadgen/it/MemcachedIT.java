package dev.cachelab.loadgen.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cachelab.loadgen.it.LoadgenRunner.Outcome;
import dev.cachelab.loadgen.workload.ZipfLaw;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The load generator against a real memcached on a free loopback port. */
class MemcachedIT extends AgainstRealServer {
  @Override
  ServerProcess startServer() throws Exception {
    return ServerProcess.memcached();
  }

  @Override
  String[] protocolArgs() {
    return new String[] {"-P", "memcache_text", "--quiet", "--hide-histogram"};
  }

  @Test
  void preloadAllKeysThenReadOnlyRunHasNoMisses() throws Exception {
    Outcome preload =
        LoadgenRunner.run(
            dir,
            args(
                "-t",
                "2",
                "-c",
                "3",
                "--ratio=1:0",
                "-n",
                "allkeys",
                "--key-pattern=P:P",
                "--key-maximum=1999",
                "-d",
                "100",
                "--pipeline=8"));
    assertThat(preload.exitCode()).as(preload.err()).isZero();
    assertThat(preload.count("Sets")).isEqualTo(2000);
    assertThat(server.memcachedStats().get("curr_items")).isEqualTo(2000);

    Map<String, Long> before = server.memcachedStats();
    Outcome read =
        LoadgenRunner.run(
            dir,
            args(
                "-t",
                "2",
                "-c",
                "2",
                "--ratio=0:1",
                "-n",
                "300",
                "--key-maximum=1999",
                "--distinct-client-seed"));
    Map<String, Long> after = server.memcachedStats();
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(read.count("Gets")).isEqualTo(1200);
    assertThat(read.perSecond("Gets", "Misses/sec")).isZero();
    assertThat(read.perSecond("Gets", "Hits/sec")).isPositive();
    assertThat(after.get("get_misses") - before.get("get_misses")).isZero();
    assertThat(after.get("get_hits") - before.get("get_hits")).isEqualTo(1200);
  }

  @Test
  void countsEqualTheServersCountersWithMultiGetsAndPipelining() throws Exception {
    Map<String, Long> before = server.memcachedStats();
    Outcome run =
        LoadgenRunner.run(
            dir,
            args(
                "-t",
                "2",
                "-c",
                "4",
                "--ratio=1:4",
                "--multi-key-get=4",
                "--pipeline=4",
                "--test-time=2",
                "--key-maximum=499",
                "--data-size-range=10-2000",
                "--random-data",
                "--distinct-client-seed",
                "--expiry-range=100-200"));
    Map<String, Long> after = server.memcachedStats();
    assertThat(run.exitCode()).as(run.err()).isZero();
    long sets = run.count("Sets");
    long gets = run.count("Gets");
    assertThat(sets).isPositive();
    // one 4-key GET per SET
    assertThat(gets).isBetween(sets - 32, sets + 32);
    assertThat(after.get("cmd_set") - before.get("cmd_set")).isEqualTo(sets);
    long keys = after.get("cmd_get") - before.get("cmd_get");
    assertThat(keys).isEqualTo(4 * gets);
    long hits = after.get("get_hits") - before.get("get_hits");
    long misses = after.get("get_misses") - before.get("get_misses");
    assertThat((double) run.total("Gets", "Hits/sec")).isCloseTo(hits, within(2 + hits * 0.002));
    assertThat((double) run.total("Gets", "Misses/sec"))
        .isCloseTo(misses, within(2 + misses * 0.002));
    assertThat(run.count("Totals")).isEqualTo(sets + gets);
    assertThat(run.all().at("/Totals/Time-Serie").size()).isGreaterThanOrEqualTo(2);
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.7, 1.3})
  void zipfKeysSentToTheServerFollowTheLaw(double exponent) throws Exception {
    long keyMaximum = 999;
    Map<String, Long> before = server.memcachedStats();
    Outcome run =
        LoadgenRunner.run(
            dir,
            args(
                "-t",
                "2",
                "-c",
                "2",
                "--ratio=0:1",
                "-n",
                "10000",
                "--multi-key-get=2",
                "--key-pattern=R:Z",
                "--key-zipf-exp=" + exponent,
                "--key-maximum=" + keyMaximum,
                "--distinct-client-seed"));
    Map<String, Long> after = server.memcachedStats();
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode keys = run.all().get("Key Counts");
    // every key the server was asked for is counted once
    assertThat(keys.get("Keys Requested").asLong())
        .isEqualTo(after.get("cmd_get") - before.get("cmd_get"));
    assertThat(keys.at("/Top Keys/0/Key").asText()).isEqualTo("memtier-1");
    assertThat(keys.at("/Top Keys/1/Key").asText()).isEqualTo("memtier-2");
    assertThat(keys.at("/Top Keys/0/Overcount").asLong()).isZero();
    // key-minimum 0: memtier's Z starts at key 1, so octave 0 (key 0) is empty
    JsonNode octaves = keys.get("Key Octaves");
    assertThat(octaves.at("/0/Count").asLong()).isZero();
    double[] p = ZipfLaw.probabilities(1, keyMaximum, exponent);
    long[] observed = new long[octaves.size() - 1];
    double[] expected = new double[observed.length];
    for (int b = 1; b < octaves.size(); b++) {
      JsonNode octave = octaves.get(b);
      observed[b - 1] = octave.get("Count").asLong();
      for (long k = octave.get("First Key").asLong(); k <= octave.get("Last Key").asLong(); k++) {
        expected[b - 1] += p[(int) (k - 1)];
      }
    }
    double[] fit = ZipfLaw.chiSquare(observed, expected);
    assertThat(fit[0]).as("chi-square, df %s", fit[1]).isLessThan(ZipfLaw.critical999(fit[1]));
  }

  @Test
  void openLoopHoldsTheTargetRate() throws Exception {
    int seconds = 4;
    double rate = 2000;
    Outcome run = openLoop(rate, seconds);
    assertThat(run.exitCode()).as(run.err()).isZero();
    double measured = run.count("Totals") / (double) seconds;
    assertThat(measured).isCloseTo(rate, within(rate * 0.02));
    assertThat(run.json().at("/configuration/open_loop_rate").asDouble()).isEqualTo(rate);
  }

  @Test
  void anOpenLoopRampSendsHalfTheRateOverTheRamp() throws Exception {
    int seconds = 4;
    double rate = 2000;
    double rampSeconds = 2;
    Outcome run = openLoop(rate, seconds, "--open-loop-ramp-s=" + rampSeconds);
    assertThat(run.exitCode()).as(run.err()).isZero();
    // a linear rise over the ramp sends half the full rate's requests there
    double expected = rate * (seconds - rampSeconds / 2);
    assertThat((double) run.count("Totals")).isCloseTo(expected, within(expected * 0.03));
    assertThat(run.json().at("/configuration/open_loop_ramp_s").asDouble()).isEqualTo(rampSeconds);
  }

  /** One thread of 4 connections, open loop at {@code rate} for {@code seconds}, 1:9. */
  private Outcome openLoop(double rate, int seconds, String... extra) throws Exception {
    List<String> flags =
        new ArrayList<>(
            List.of(
                "-t",
                "1",
                "-c",
                "4",
                "--ratio=1:9",
                "--open-loop-rate=" + rate,
                "--test-time=" + seconds,
                "--key-maximum=999",
                "--distinct-client-seed"));
    flags.addAll(List.of(extra));
    return LoadgenRunner.run(dir, args(flags.toArray(String[]::new)));
  }

  @Test
  void thinkTimeBoundsEachClientsRate() throws Exception {
    Outcome run =
        LoadgenRunner.run(
            dir,
            args("-t", "1", "-c", "2", "--think-time=20", "--test-time=2", "--key-maximum=99"));
    assertThat(run.exitCode()).as(run.err()).isZero();
    // every request waits 20 ms after the previous reply: at most 2 s / 20 ms + 1 per client
    assertThat(run.count("Totals")).isBetween(2L, 2 * 101L);
  }

  @Test
  void rateLimitingCapsEachConnection() throws Exception {
    Outcome run =
        LoadgenRunner.run(
            dir,
            args("-t", "2", "-c", "2", "--rate-limiting=50", "--test-time=2", "--key-maximum=99"));
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.count("Totals")).isBetween(4L, 4 * 101L);
  }

  @Test
  void metricsEndpointServesCountersAndHistograms() throws Exception {
    int metricsPort = ServerProcess.freePort();
    java.util.concurrent.CompletableFuture<Outcome> run =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                return LoadgenRunner.run(
                    dir,
                    args(
                        "-t",
                        "1",
                        "-c",
                        "2",
                        "--test-time=3",
                        "--key-maximum=99",
                        "--metrics-port=" + metricsPort));
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpRequest request =
        java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
            .build();
    String body = "";
    for (int i = 0; i < 50 && !body.contains("cachelab_loadgen_requests_total{op=\"get\"}"); i++) {
      Thread.sleep(100);
      try {
        body = http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).body();
      } catch (java.io.IOException notYetListening) {
        body = "";
      }
    }
    assertThat(body)
        .contains(
            "cachelab_loadgen_requests_total{op=\"get\"}",
            "cachelab_loadgen_response_time_seconds_bucket{op=\"get\",le=\"+Inf\"}",
            "cachelab_loadgen_response_time_seconds_count{op=\"set\"}",
            "cachelab_loadgen_errors_total");
    Outcome done = run.get();
    assertThat(done.exitCode()).as(done.err()).isZero();
  }

  @Test
  void hdrFilesHoldEveryReplyAndProgressIsPrinted() throws Exception {
    String prefix = dir.resolve("hdr/lg").toString();
    Outcome run =
        LoadgenRunner.run(
            dir,
            "-s",
            "127.0.0.1",
            "-p",
            "" + server.port,
            "-P",
            "memcache_text",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "500",
            "--key-maximum=99",
            "--hdr-file-prefix=" + prefix);
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.err()).contains("[RUN #1");
    assertThat(run.out())
        .contains("ALL STATS", "Sets", "Gets", "Totals", "Request Latency Distribution");
    assertThat(run.all().get("GET")).isNotEmpty();
    for (String kind : new String[] {"FULL_RUN_1", "SET_command_run_1", "GET_command_run_1"}) {
      assertThat(Path.of(prefix + "_" + kind + ".hgrm")).exists();
    }
    long logged = 0;
    HistogramLogReader reader = new HistogramLogReader(prefix + "_FULL_RUN_1.txt");
    for (EncodableHistogram h = reader.nextIntervalHistogram();
        h != null;
        h = reader.nextIntervalHistogram()) {
      logged += ((org.HdrHistogram.Histogram) h).getTotalCount();
    }
    reader.close();
    assertThat(logged).isEqualTo(1000).isEqualTo(run.count("Totals"));
    assertThat(Files.readString(Path.of(prefix + "_GET_command_run_1.hgrm")))
        .contains("Percentile");
  }
}
