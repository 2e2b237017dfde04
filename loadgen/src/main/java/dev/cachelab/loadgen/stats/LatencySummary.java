package dev.cachelab.loadgen.stats;

import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * Count and latency statistics of a set of replies (one second, or a whole run), in microseconds.
 * Immutable; any thread.
 *
 * @param percentileMicros values at the configured percentiles, same order
 */
public record LatencySummary(
    long count,
    double meanMicros,
    long minMicros,
    long maxMicros,
    long sumMicros,
    List<Long> percentileMicros) {

  /** Summarises a histogram of microsecond latencies. */
  public static LatencySummary of(Histogram h, List<Double> percentiles) {
    long count = h.getTotalCount();
    Long[] values = new Long[percentiles.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = count == 0 ? 0L : h.getValueAtPercentile(percentiles.get(i));
    }
    double mean = count == 0 ? 0 : h.getMean();
    return new LatencySummary(
        count,
        mean,
        count == 0 ? 0 : h.getMinValue(),
        count == 0 ? 0 : h.getMaxValue(),
        Math.round(mean * count),
        List.of(values));
  }
}
