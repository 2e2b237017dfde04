package dev.cachelab.loadgen.workload;

import dev.cachelab.loadgen.config.KeyPattern;
import dev.cachelab.loadgen.stats.KeyCounts;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A benchmark, not a test: nanoseconds per key of the R and Z patterns, drawing alone and drawing
 * plus {@link KeyCounts#record} (exact, and Space-Saving as for key ranges over a million), as a
 * client's thread does per key it sends. Best of five rounds after a warm-up. Run with {@code java
 * -cp target/classes:target/test-classes dev.cachelab.loadgen.workload.KeyPatternCost [keyMaximum]}
 * (default 100000, as {@code make bench}).
 */
public final class KeyPatternCost {
  private static final int KEYS_PER_ROUND = 20_000_000;

  private KeyPatternCost() {}

  public static void main(String[] args) {
    long keyMaximum = args.length > 0 ? Long.parseLong(args[0]) : 100_000;
    long sink = 0;
    for (KeyPattern pattern : new KeyPattern[] {KeyPattern.RANDOM, KeyPattern.ZIPF}) {
      for (String counted : new String[] {"", "exact", "space-saving"}) {
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 6; round++) {
          KeySequence keys =
              new KeySequence(pattern, 0, keyMaximum, 0, 1, 1.0, new SplittableRandom(round));
          KeyCounts counts =
              counted.equals("exact") ? KeyCounts.forRange(0, keyMaximum, 1) : new KeyCounts(0);
          long start = System.nanoTime();
          for (int i = 0; i < KEYS_PER_ROUND; i++) {
            long k = keys.next();
            if (!counted.isEmpty()) {
              counts.record(k);
            }
            sink += k;
          }
          double nanos = (System.nanoTime() - start) / (double) KEYS_PER_ROUND;
          if (round > 0) {
            best = Math.min(best, nanos);
          }
          sink += counts.total();
        }
        System.out.printf(
            Locale.ROOT,
            "%s%s: %.1f ns per key%n",
            pattern,
            counted.isEmpty() ? "" : " + KeyCounts.record (" + counted + ")",
            best);
      }
    }
    System.out.println("(checksum " + sink + ")");
  }
}
