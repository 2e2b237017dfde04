package dev.cachelab.loadgen.stats;

import java.util.EnumMap;
import java.util.Map;

/**
 * The outcome of one run ({@code --run-count} makes several): sections Sets, Gets and Totals, the
 * run's wall-clock span, its key frequencies and, if it did not complete, why. Built by the sampler
 * on the main thread.
 */
public final class RunResult {
  private final int runNumber;
  private final Map<OpType, SectionResult> ops = new EnumMap<>(OpType.class);
  private final SectionResult totals = new SectionResult();
  private long startEpochMillis;
  private long durationNanos;
  private String failure;
  private KeyFrequencies keyFrequencies = KeyFrequencies.EMPTY;

  public RunResult(int runNumber) {
    this.runNumber = runNumber;
    for (OpType op : OpType.values()) {
      ops.put(op, new SectionResult());
    }
  }

  public int runNumber() {
    return runNumber;
  }

  public SectionResult op(OpType op) {
    return ops.get(op);
  }

  public SectionResult totals() {
    return totals;
  }

  public long startEpochMillis() {
    return startEpochMillis;
  }

  public long finishEpochMillis() {
    return startEpochMillis + durationNanos / 1_000_000;
  }

  public long durationNanos() {
    return durationNanos;
  }

  public double durationSeconds() {
    return durationNanos / 1e9;
  }

  /** Why the run stopped early, or null if it completed. */
  public String failure() {
    return failure;
  }

  public boolean interrupted() {
    return failure != null;
  }

  public void setSpan(long startEpochMillis, long durationNanos) {
    this.startEpochMillis = startEpochMillis;
    this.durationNanos = durationNanos;
  }

  public void setFailure(String failure) {
    this.failure = failure;
  }

  /** How often the run requested each key (empty until the run has ended). */
  public KeyFrequencies keyFrequencies() {
    return keyFrequencies;
  }

  public void setKeyFrequencies(KeyFrequencies keyFrequencies) {
    this.keyFrequencies = keyFrequencies;
  }

  /** Requests per second of a section over the run (0 for an empty run). */
  public double opsPerSecond(SectionResult section) {
    return durationNanos <= 0 ? 0 : section.count() / durationSeconds();
  }
}
