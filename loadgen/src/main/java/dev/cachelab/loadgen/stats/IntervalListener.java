package dev.cachelab.loadgen.stats;

import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Receives each one-second interval as it is sampled (progress line, HDR logs, Prometheus). Called
 * on the sampler (main) thread; must not keep the histograms, which are reused.
 */
public interface IntervalListener {

  /**
   * @param elapsedNanos time since the start of the run at the end of this interval
   * @param intervals latencies (microseconds) of this interval per op type
   * @param total latencies of this interval over all op types
   */
  void onInterval(
      RunResult run,
      int second,
      long elapsedNanos,
      Map<OpType, Histogram> intervals,
      Histogram total);

  /** The run has ended; {@code run} is complete. */
  default void onRunEnd(RunResult run) {}
}
