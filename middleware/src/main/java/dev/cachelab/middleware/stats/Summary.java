package dev.cachelab.middleware.stats;

import static dev.cachelab.middleware.json.JsonStrings.quote;
import static dev.cachelab.middleware.json.JsonStrings.quoteAll;

import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.protocol.OpType;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * The run summary over the measured windows: the first {@code warmup} and the last {@code cooldown}
 * windows are left out. The last windows are held back until it is known that they are not in the
 * cool-down, so memory stays bounded for long runs. Reporter thread only.
 */
public final class Summary {
  private final MiddlewareConfig config;
  private final int warmupWindows;
  private final int cooldownWindows;
  private final ArrayDeque<Window> heldBack = new ArrayDeque<>();
  private final Window measured;
  private int totalWindows;
  private long measuredMs;
  private int measuredCount;

  private final String listen;

  /** A summary for {@code config}; {@code listen} is the bound {@code ip:port}. */
  public Summary(MiddlewareConfig config, String listen) {
    this.config = config;
    this.listen = listen;
    this.warmupWindows = windowsIn(config.warmupSeconds(), config.windowMs());
    this.cooldownWindows = windowsIn(config.cooldownSeconds(), config.windowMs());
    this.measured = new Window(-1, 0, 0, config.servers().size());
  }

  static int windowsIn(int seconds, int windowMs) {
    return (int) ((seconds * 1000L + windowMs - 1) / windowMs);
  }

  public void add(Window window) {
    totalWindows++;
    if (window.index < warmupWindows) {
      return;
    }
    heldBack.addLast(window);
    while (heldBack.size() > cooldownWindows) {
      fold(heldBack.pollFirst());
    }
  }

  private void fold(Window w) {
    for (Metric metric : Metric.values()) {
      for (OpType op : OpType.values()) {
        measured.histogram(metric, op).add(w.histogram(metric, op));
      }
    }
    measured.queueLength.add(w.queueLength);
    for (OpType op : OpType.values()) {
      int o = op.ordinal();
      measured.keysRequested[o] += w.keysRequested[o];
      measured.hits[o] += w.hits[o];
      measured.errors[o] += w.errors[o];
    }
    for (int s = 0; s < measured.serverRequests.length; s++) {
      measured.serverRequests[s] += w.serverRequests[s];
      measured.serverErrors[s] += w.serverErrors[s];
    }
    measuredMs += w.durationMs;
    measuredCount++;
  }

  /** The measured windows folded together (for tests). */
  Window measured() {
    return measured;
  }

  /** summary.json as specified in docs/interfaces.md §1. */
  public String toJson() {
    StringBuilder j = new StringBuilder(4096);
    j.append("{\n  \"config\": {");
    j.append("\"listen\": ").append(quote(listen));
    j.append(", \"workers\": ").append(config.workers());
    j.append(", \"sharded\": ").append(config.sharded());
    j.append(", \"routing\": ").append(quote(config.routing().flagValue()));
    j.append(", \"replication\": ").append(config.replication());
    j.append(", \"queue_capacity\": ").append(config.queueCapacity());
    j.append(", \"worker_batch\": ").append(config.workerBatch());
    j.append(", \"servers\": ").append(quoteAll(config.servers()));
    j.append(", \"window_ms\": ").append(config.windowMs());
    j.append(", \"warmup_s\": ").append(config.warmupSeconds());
    j.append(", \"cooldown_s\": ").append(config.cooldownSeconds()).append("},\n");
    double seconds = measuredMs / 1000.0;
    j.append("  \"windows\": {\"total\": ").append(totalWindows);
    j.append(", \"measured_first\": ").append(warmupWindows);
    j.append(", \"measured_last\": ").append(warmupWindows + measuredCount - 1);
    j.append(", \"measured_seconds\": ").append(num(seconds)).append("},\n");
    j.append("  \"ops\": {\n");
    OpType[] ops = OpType.values();
    for (int i = 0; i < ops.length; i++) {
      appendOp(j, ops[i], seconds);
      j.append(i < ops.length - 1 ? ",\n" : "\n");
    }
    j.append("  },\n");
    Histogram queue = measured.queueLength;
    j.append("  \"queue_length\": {\"mean\": ").append(num(WindowLog.mean(queue)));
    j.append(", \"max\": ").append(queue.getTotalCount() == 0 ? 0 : queue.getMaxValue());
    j.append("},\n  \"servers\": [");
    List<String> servers = config.servers();
    for (int s = 0; s < servers.size(); s++) {
      j.append(s == 0 ? "" : ", ").append("{\"address\": ").append(quote(servers.get(s)));
      j.append(", \"requests\": ").append(measured.serverRequests[s]);
      j.append(", \"errors\": ").append(measured.serverErrors[s]).append('}');
    }
    j.append("]\n}\n");
    return j.toString();
  }

  private void appendOp(StringBuilder j, OpType op, double seconds) {
    long count = measured.count(op);
    j.append("    ").append(quote(op.label())).append(": {\"count\": ").append(count);
    j.append(", \"throughput_ops_per_s\": ").append(num(seconds > 0 ? count / seconds : 0.0));
    for (Metric metric : Metric.values()) {
      Histogram h = measured.histogram(metric, op);
      boolean empty = h.getTotalCount() == 0;
      j.append(", ").append(quote(metric.label() + "_us")).append(": {\"mean\": ");
      j.append(num(WindowLog.mean(h)));
      j.append(", \"p50\": ").append(empty ? 0 : h.getValueAtPercentile(50));
      j.append(", \"p90\": ").append(empty ? 0 : h.getValueAtPercentile(90));
      j.append(", \"p99\": ").append(empty ? 0 : h.getValueAtPercentile(99));
      j.append(", \"max\": ").append(empty ? 0 : h.getMaxValue()).append('}');
    }
    long keys = measured.keysRequested(op);
    long hits = measured.hits(op);
    j.append(", \"keys_requested\": ").append(keys);
    j.append(", \"hits\": ").append(hits);
    j.append(", \"misses\": ").append(keys - hits);
    j.append(", \"errors\": ").append(measured.errors(op)).append('}');
  }

  private static String num(double value) {
    return String.format(Locale.ROOT, "%.3f", value);
  }
}
