package dev.cachelab.loadgen.engine;

import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.config.Protocol;
import dev.cachelab.loadgen.protocol.MemcacheText;
import dev.cachelab.loadgen.protocol.Resp2;
import dev.cachelab.loadgen.protocol.WireProtocol;
import dev.cachelab.loadgen.stats.IntervalListener;
import dev.cachelab.loadgen.stats.KeyCounts;
import dev.cachelab.loadgen.stats.KeyFrequencies;
import dev.cachelab.loadgen.stats.LatencySummary;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.RunResult;
import dev.cachelab.loadgen.stats.SecondSample;
import dev.cachelab.loadgen.stats.SectionResult;
import dev.cachelab.loadgen.stats.ThreadStats;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * One run: starts the engine threads, releases them together, samples their recorders once per
 * second into a {@link RunResult}, and waits for them to end. Runs on the calling (main) thread,
 * which is the only sampler.
 */
public final class BenchmarkRun {
  private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final LoadgenConfig config;
  private final int runNumber;
  private final List<IntervalListener> listeners;
  private final RunControl control;

  public BenchmarkRun(LoadgenConfig config, int runNumber, List<IntervalListener> listeners) {
    this.config = config;
    this.runNumber = runNumber;
    this.listeners = List.copyOf(listeners);
    this.control = new RunControl(config.threads());
  }

  /** Control of this run, e.g. to interrupt it from a signal handler. */
  public RunControl control() {
    return control;
  }

  static WireProtocol wireProtocol(Protocol protocol) {
    return protocol == Protocol.REDIS ? new Resp2() : new MemcacheText();
  }

  /** Runs to completion (or failure) and returns what was measured. */
  public RunResult execute() throws InterruptedException {
    WireProtocol protocol = wireProtocol(config.protocol());
    List<ThreadStats> stats = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < config.threads(); t++) {
      ThreadStats s =
          new ThreadStats(
              KeyCounts.forRange(config.keyMinimum(), config.keyMaximum(), config.threads()));
      stats.add(s);
      Thread thread =
          new Thread(
              new EventLoop(t, config, protocol, s, control), "loadgen-" + runNumber + "-" + t);
      thread.setDaemon(true);
      threads.add(thread);
    }
    threads.forEach(Thread::start);
    control.awaitConnected();

    RunResult result = new RunResult(runNumber);
    long startNanos = System.nanoTime();
    long startEpochMillis = System.currentTimeMillis();
    control.start(startNanos, config.testTimeSeconds());
    Map<OpType, Histogram> intervals = new EnumMap<>(OpType.class);
    for (OpType op : OpType.values()) {
      intervals.put(op, new Histogram(3));
    }
    Histogram total = new Histogram(3);
    long[][] lastBytes = new long[OpType.values().length][2];
    boolean finished = false;
    for (int second = 0; !finished; second++) {
      long tick = startNanos + (second + 1) * SECOND_NANOS;
      finished = control.awaitFinished(Math.max(0, tick - System.nanoTime()));
      if (finished && control.failure() != null && second == 0 && allEmpty(stats)) {
        break; // nothing was measured (e.g. connection refused)
      }
      long cutMicros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - startNanos);
      sample(result, second, cutMicros, stats, intervals, total, lastBytes);
      setCounters(result, stats); // errors so far, for the progress line (once a second)
      long elapsed = Math.min(System.nanoTime(), tick) - startNanos;
      for (IntervalListener l : listeners) {
        try {
          l.onInterval(result, second, elapsed, intervals, total);
        } catch (RuntimeException e) {
          control.fail(String.valueOf(e.getMessage()));
        }
      }
    }
    for (Thread t : threads) {
      t.join();
    }
    long lastReply = startNanos;
    for (ThreadStats s : stats) {
      lastReply = Math.max(lastReply, s.lastReplyNanos());
    }
    result.setSpan(startEpochMillis, lastReply - startNanos);
    setCounters(result, stats);
    List<KeyCounts> keyCounts = new ArrayList<>();
    stats.forEach(s -> keyCounts.add(s.keyCounts()));
    result.setKeyFrequencies(KeyFrequencies.ofThreads(keyCounts, KeyFrequencies.TOP_KEYS));
    result.setFailure(control.failure());
    for (IntervalListener l : listeners) {
      try {
        l.onRunEnd(result);
      } catch (RuntimeException e) {
        result.setFailure(result.failure() != null ? result.failure() : e.getMessage());
      }
    }
    return result;
  }

  private static boolean allEmpty(List<ThreadStats> stats) {
    for (ThreadStats s : stats) {
      if (s.lastReplyNanos() != 0) {
        return false;
      }
    }
    return true;
  }

  private void sample(
      RunResult result,
      int second,
      long cutMicros,
      List<ThreadStats> stats,
      Map<OpType, Histogram> intervals,
      Histogram total,
      long[][] lastBytes) {
    total.reset();
    long totalRx = 0;
    long totalTx = 0;
    for (OpType op : OpType.values()) {
      Histogram h = intervals.get(op);
      h.reset();
      long rx = 0;
      long tx = 0;
      for (ThreadStats s : stats) {
        s.drainInterval(op, h);
        rx += s.rxBytes(op);
        tx += s.txBytes(op);
      }
      long rxDelta = rx - lastBytes[op.ordinal()][0];
      long txDelta = tx - lastBytes[op.ordinal()][1];
      lastBytes[op.ordinal()][0] = rx;
      lastBytes[op.ordinal()][1] = tx;
      totalRx += rxDelta;
      totalTx += txDelta;
      SectionResult section = result.op(op);
      section.latencyMicros().add(h);
      section
          .series()
          .add(
              new SecondSample(
                  second, LatencySummary.of(h, config.percentiles()), rxDelta, txDelta, cutMicros));
      total.add(h);
    }
    result.totals().latencyMicros().add(total);
    result
        .totals()
        .series()
        .add(
            new SecondSample(
                second,
                LatencySummary.of(total, config.percentiles()),
                totalRx,
                totalTx,
                cutMicros));
  }

  private static void setCounters(RunResult result, List<ThreadStats> stats) {
    long hits = 0;
    long misses = 0;
    for (ThreadStats s : stats) {
      hits += s.hits();
      misses += s.misses();
    }
    long[] sums = new long[3];
    for (OpType op : OpType.values()) {
      long errors = 0;
      long rx = 0;
      long tx = 0;
      for (ThreadStats s : stats) {
        errors += s.errors(op);
        rx += s.rxBytes(op);
        tx += s.txBytes(op);
      }
      boolean get = op == OpType.GET;
      result.op(op).setCounters(get ? hits : 0, get ? misses : 0, errors, rx, tx);
      sums[0] += errors;
      sums[1] += rx;
      sums[2] += tx;
    }
    result.totals().setCounters(hits, misses, sums[0], sums[1], sums[2]);
  }
}
