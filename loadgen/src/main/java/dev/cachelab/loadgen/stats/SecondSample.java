package dev.cachelab.loadgen.stats;

/**
 * One second of one section (Sets, Gets or Totals): what memtier's {@code Time-Serie} holds.
 *
 * @param second seconds since the start of the run
 */
public record SecondSample(int second, LatencySummary latency, long rxBytes, long txBytes) {}
