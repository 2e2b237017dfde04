package dev.cachelab.loadgen.stats;

/**
 * One second of one section (Sets, Gets or Totals): what memtier's {@code Time-Serie} holds, and
 * when the second was actually cut. The sampler thread cuts second {@code n} at {@code n + 1} s
 * after the start or later when it is scheduled late (a busy machine: tens to hundreds of ms), so a
 * second's requests completed in {@code (previous cut, cutMicros]}; a throughput over some seconds
 * is their count over the time between those cuts, not over the number of seconds. Created on the
 * sampler thread, read after the run.
 *
 * @param second seconds since the start of the run
 * @param cutMicros when this second's requests were taken, microseconds since the start of the run
 */
public record SecondSample(
    int second, LatencySummary latency, long rxBytes, long txBytes, long cutMicros) {}
