package dev.cachelab.loadgen.output;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.stats.KeyFrequencies;
import dev.cachelab.loadgen.stats.LatencySummary;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.RunResult;
import dev.cachelab.loadgen.stats.SecondSample;
import dev.cachelab.loadgen.stats.SectionResult;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * Writes {@code --json-out-file} in memtier_benchmark's layout ({@code run_stats.cpp}): {@code
 * configuration}, {@code run information}, then {@code ALL STATS} (one run) or {@code BEST RUN
 * RESULTS} / {@code WORST RUN RESULTS} / {@code AGGREGATED AVERAGE RESULTS (N runs)}, each with
 * {@code Runtime}, {@code Sets}, {@code Gets}, {@code Waits}, {@code Totals} and (unless {@code
 * --hide-histogram}) the {@code SET}/{@code GET}/{@code WAIT} latency distributions, and the
 * extension {@code Key Counts}. Latencies are milliseconds. Called on the main thread after the
 * runs.
 */
public final class MemtierJson {
  private static final ObjectMapper MAPPER =
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);

  private final LoadgenConfig config;
  private final List<String> commandLine;

  public MemtierJson(LoadgenConfig config, List<String> commandLine) {
    this.config = config;
    this.commandLine = List.copyOf(commandLine);
  }

  /** Writes the document for {@code runs} to {@code file} (parent folders are created). */
  public void write(Path file, List<RunResult> runs) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    MAPPER.writeValue(file.toFile(), document(runs));
  }

  /** The whole JSON document. */
  public ObjectNode document(List<RunResult> runs) {
    ObjectNode root = MAPPER.createObjectNode();
    root.set("configuration", configuration());
    ObjectNode info = root.putObject("run information");
    info.put("Threads", config.threads());
    info.put("Connections per thread", config.clientsPerThread());
    if (config.timed()) {
      info.put("Seconds", config.testTimeSeconds());
    } else if (config.allKeys()) {
      info.put("Requests per client", "allkeys");
    } else {
      info.put("Requests per client", config.requestsPerClient());
    }
    info.put("Format version", 2);
    if (runs.size() == 1) {
      root.set("ALL STATS", runSection(runs.get(0)));
    } else if (runs.size() > 1) {
      RunResult best = runs.get(0);
      RunResult worst = runs.get(0);
      for (RunResult r : runs) {
        if (r.opsPerSecond(r.totals()) > best.opsPerSecond(best.totals())) {
          best = r;
        }
        if (r.opsPerSecond(r.totals()) < worst.opsPerSecond(worst.totals())) {
          worst = r;
        }
      }
      root.set("BEST RUN RESULTS", runSection(best));
      root.set("WORST RUN RESULTS", runSection(worst));
      root.set(
          "AGGREGATED AVERAGE RESULTS (" + runs.size() + " runs)", runSection(aggregate(runs)));
    }
    return root;
  }

  private ObjectNode configuration() {
    ObjectNode c = MAPPER.createObjectNode();
    c.put("tool", "cachelab-loadgen");
    c.put("server", config.server());
    c.put("port", config.port());
    c.put("unix socket", "");
    c.put("protocol", config.protocol().memtierName());
    c.put("run_count", config.runCount());
    c.put("requests", config.allKeys() ? "allkeys" : String.valueOf(config.requestsPerClient()));
    c.put("rate_limit", config.rateLimitPerConnection());
    c.put("clients", config.clientsPerThread());
    c.put("threads", config.threads());
    c.put("test_time", config.testTimeSeconds());
    c.put("ratio", config.ratio().toString());
    c.put("pipeline", config.pipeline());
    c.put(
        "data_size",
        config.dataSize().min() == config.dataSize().max() ? config.dataSize().min() : 0);
    c.put("random_data", config.randomData() ? "true" : "false");
    c.put(
        "data_size_range",
        config.dataSize().min() == config.dataSize().max() ? "0-0" : config.dataSize().toString());
    c.put("expiry_range", config.expiryRange().toString());
    c.put("key_prefix", config.keyPrefix());
    c.put("key_minimum", config.keyMinimum());
    c.put("key_maximum", config.keyMaximum());
    c.put("key_pattern", config.keyPatterns().toString());
    c.put("key_stddev", config.keyStddev());
    c.put("key_median", config.keyMedian());
    c.put("key_zipf_exp", config.keyZipfExponent());
    c.put("multi_get", config.multiKeyGet());
    c.put("distinct_client_seed", config.distinctClientSeed() ? "true" : "false");
    c.put("randomize", config.randomize() ? "true" : "false");
    c.put("print_percentiles", percentileList());
    c.put("hide_histogram", config.hideHistogram() ? "true" : "false");
    c.put("json-out-file", config.jsonOutFile() == null ? "" : config.jsonOutFile().toString());
    c.put("hdr_file_prefix", config.hdrFilePrefix() == null ? "" : config.hdrFilePrefix());
    c.put("think_time", config.thinkTime().toString());
    c.put("open_loop_rate", config.openLoopRate());
    c.put("open_loop_ramp_s", config.openLoopRampSeconds());
    c.put("pin_threads", config.pinThreads() ? "true" : "false");
    ArrayNode args = c.putArray("command_line");
    commandLine.forEach(args::add);
    return c;
  }

  private String percentileList() {
    StringBuilder sb = new StringBuilder();
    for (double p : config.percentiles()) {
      if (!sb.isEmpty()) {
        sb.append(',');
      }
      sb.append(BigDecimal.valueOf(p).stripTrailingZeros().toPlainString());
    }
    return sb.toString();
  }

  private ObjectNode runSection(RunResult run) {
    ObjectNode s = MAPPER.createObjectNode();
    ObjectNode runtime = s.putObject("Runtime");
    runtime.put("Start time", run.startEpochMillis());
    runtime.put("Finish time", run.finishEpochMillis());
    runtime.put("Total duration", run.durationNanos() / 1_000_000);
    runtime.put("Time unit", "MILLISECONDS");
    runtime.put("Interrupted", run.interrupted() ? "true" : "false");
    if (run.failure() != null) {
      runtime.put("Error", run.failure());
    }
    s.set("Sets", section(run, run.op(OpType.SET), false));
    s.set("Gets", section(run, run.op(OpType.GET), true));
    s.set("Waits", section(run, new SectionResult(), false));
    s.set("Totals", section(run, run.totals(), true));
    if (!config.hideHistogram()) {
      s.set("SET", distribution(run.op(OpType.SET).latencyMicros()));
      s.set("GET", distribution(run.op(OpType.GET).latencyMicros()));
      s.putArray("WAIT");
    }
    s.set("Key Counts", keyCounts(run.keyFrequencies()));
    return s;
  }

  /**
   * An extension memtier lacks: the most requested keys (every key of a SET or a GET counts once)
   * and the requests per key-number octave, so a report can show how the load spreads over keys and
   * servers. Bounded: {@value KeyFrequencies#TOP_KEYS} keys and at most 64 octaves.
   */
  private ObjectNode keyCounts(KeyFrequencies f) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("Keys Requested", f.total());
    ArrayNode top = o.putArray("Top Keys");
    for (KeyFrequencies.KeyCount k : f.top()) {
      ObjectNode entry = top.addObject();
      entry.put("Key", config.keyPrefix() + k.key());
      entry.put("Count", k.count());
      entry.put("Overcount", k.overcount());
    }
    o.put("Other Keys At Most", f.floor());
    ArrayNode octaves = o.putArray("Key Octaves");
    for (int b = 0; b < f.usedOctaves(); b++) {
      ObjectNode entry = octaves.addObject();
      long first = config.keyMinimum() + (1L << b) - 1;
      entry.put("First Key", first);
      entry.put("Last Key", Math.min(config.keyMaximum(), first + (1L << b) - 1));
      entry.put("Count", f.octaves()[b]);
    }
    return o;
  }

  private ObjectNode section(RunResult run, SectionResult section, boolean hitsApply) {
    ObjectNode o = MAPPER.createObjectNode();
    Histogram h = section.latencyMicros();
    LatencySummary summary = LatencySummary.of(h, config.percentiles());
    double seconds = run.durationSeconds();
    o.put("Count", section.count());
    o.put("Ops/sec", fixed(run.opsPerSecond(section), 2));
    o.put("Hits/sec", fixed(hitsApply && seconds > 0 ? section.hits() / seconds : 0, 2));
    o.put("Misses/sec", fixed(hitsApply && seconds > 0 ? section.misses() / seconds : 0, 2));
    o.put("Error Replies", section.errors());
    o.put("Connection Errors/sec", fixed(0, 2));
    o.put("Connection Errors", 0);
    o.put("Latency", millis(summary.meanMicros()));
    o.put("Average Latency", millis(summary.meanMicros()));
    o.put("Accumulated Latency", summary.sumMicros() / 1000);
    o.put("Min Latency", millis(summary.minMicros()));
    o.put("Max Latency", millis(summary.maxMicros()));
    double kbRx = seconds > 0 ? section.rxBytes() / 1024.0 / seconds : 0;
    double kbTx = seconds > 0 ? section.txBytes() / 1024.0 / seconds : 0;
    o.put("KB/sec", fixed(kbRx + kbTx, 2));
    o.put("KB/sec RX/TX", fixed(kbRx + kbTx, 2));
    o.put("KB/sec RX", fixed(kbRx, 2));
    o.put("KB/sec TX", fixed(kbTx, 2));
    ObjectNode series = o.putObject("Time-Serie");
    for (SecondSample sample : section.series()) {
      ObjectNode entry = series.putObject(String.valueOf(sample.second()));
      entry.put("Bytes RX", sample.rxBytes());
      entry.put("Bytes TX", sample.txBytes());
      LatencySummary l = sample.latency();
      entry.put("Count", l.count());
      // An extension memtier lacks: when the sampler cut this second (ms since the start).
      entry.put("Cut At ms", sample.cutMicros() / 1000.0);
      if (l.count() > 0) {
        entry.put("Average Latency", millis(l.meanMicros()));
        entry.put("Accumulated Latency", l.sumMicros() / 1000);
        entry.put("Min Latency", millis(l.minMicros()));
        entry.put("Max Latency", millis(l.maxMicros()));
        putPercentiles(entry, l);
      }
    }
    ObjectNode percentiles = o.putObject("Percentile Latencies");
    putPercentiles(percentiles, summary);
    percentiles.putObject("Histogram log format").put("Compressed Histogram", compressed(h));
    return o;
  }

  private void putPercentiles(ObjectNode into, LatencySummary summary) {
    for (int i = 0; i < config.percentiles().size(); i++) {
      into.put(
          Percentiles.key(config.percentiles().get(i)), millis(summary.percentileMicros().get(i)));
    }
  }

  private static ArrayNode distribution(Histogram h) {
    ArrayNode out = MAPPER.createArrayNode();
    long total = h.getTotalCount();
    long cumulative = 0;
    for (HistogramIterationValue v : h.recordedValues()) {
      cumulative += v.getCountAtValueIteratedTo();
      ObjectNode point = out.addObject();
      point.put("<=msec", millis(h.highestEquivalentValue(v.getValueIteratedTo())));
      point.put("percent", fixed(100.0 * cumulative / total, 3));
    }
    return out;
  }

  private static String compressed(Histogram h) {
    ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    int length = h.encodeIntoCompressedByteBuffer(buffer);
    byte[] bytes = new byte[length];
    buffer.flip();
    buffer.get(bytes);
    return Base64.getEncoder().encodeToString(bytes);
  }

  /** Merges runs into one pseudo-run for the aggregated section: totals over total time. */
  private static RunResult aggregate(List<RunResult> runs) {
    RunResult sum = new RunResult(0);
    long duration = 0;
    String failure = null;
    long[][] counters = new long[3][5];
    for (RunResult r : runs) {
      duration += r.durationNanos();
      failure = failure == null ? r.failure() : failure;
      for (OpType op : OpType.values()) {
        sum.op(op).latencyMicros().add(r.op(op).latencyMicros());
        addCounters(counters[op.ordinal()], r.op(op));
      }
      sum.totals().latencyMicros().add(r.totals().latencyMicros());
      addCounters(counters[2], r.totals());
    }
    for (OpType op : OpType.values()) {
      long[] c = counters[op.ordinal()];
      sum.op(op).setCounters(c[0], c[1], c[2], c[3], c[4]);
    }
    long[] t = counters[2];
    sum.totals().setCounters(t[0], t[1], t[2], t[3], t[4]);
    List<KeyFrequencies> keys = new ArrayList<>();
    runs.forEach(r -> keys.add(r.keyFrequencies()));
    sum.setKeyFrequencies(KeyFrequencies.merge(keys, KeyFrequencies.TOP_KEYS));
    sum.setSpan(runs.get(0).startEpochMillis(), duration);
    sum.setFailure(failure);
    return sum;
  }

  private static void addCounters(long[] into, SectionResult s) {
    into[0] += s.hits();
    into[1] += s.misses();
    into[2] += s.errors();
    into[3] += s.rxBytes();
    into[4] += s.txBytes();
  }

  private static BigDecimal millis(double micros) {
    return fixed(micros / 1000.0, 3);
  }

  private static BigDecimal fixed(double value, int decimals) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      return BigDecimal.ZERO.setScale(decimals);
    }
    return BigDecimal.valueOf(value).setScale(decimals, RoundingMode.HALF_UP);
  }
}
