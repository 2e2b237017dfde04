package dev.cachelab.loadgen.stats;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * Everything measured for one section of a run (Sets, Gets or Totals): the full-run latency
 * histogram (microseconds), counters and the per-second series. Filled by the sampler thread, read
 * after the run.
 */
public final class SectionResult {
  private final Histogram latencyMicros = new Histogram(3);
  private final List<SecondSample> series = new ArrayList<>();
  private long hits;
  private long misses;
  private long errors;
  private long rxBytes;
  private long txBytes;

  public Histogram latencyMicros() {
    return latencyMicros;
  }

  public List<SecondSample> series() {
    return series;
  }

  public long count() {
    return latencyMicros.getTotalCount();
  }

  public long hits() {
    return hits;
  }

  public long misses() {
    return misses;
  }

  public long errors() {
    return errors;
  }

  public long rxBytes() {
    return rxBytes;
  }

  public long txBytes() {
    return txBytes;
  }

  /** Sets the final counters (after the engine threads have ended). */
  public void setCounters(long hits, long misses, long errors, long rxBytes, long txBytes) {
    this.hits = hits;
    this.misses = misses;
    this.errors = errors;
    this.rxBytes = rxBytes;
    this.txBytes = txBytes;
  }
}
