package dev.cachelab.loadgen.workload;

import dev.cachelab.loadgen.config.KeyPattern;
import java.util.SplittableRandom;

/**
 * Key numbers for one side (SET or GET) of one client, following a {@link KeyPattern}. Sequential
 * patterns (S, and P inside the client's sub-range) start at the first key of their range and wrap
 * after the last. Used by one client's thread only.
 */
public final class KeySequence {
  private final KeyPattern pattern;
  private final long min;
  private final long max;
  private final double median;
  private final double stddev;
  private final ZipfKeys zipf;
  private final SplittableRandom random;
  private long next;

  /**
   * @param min first key of the range this sequence draws from (the client's sub-range for P)
   * @param max last key, inclusive
   * @param zipfExponent exponent of the Z pattern (unused by the others)
   */
  public KeySequence(
      KeyPattern pattern,
      long min,
      long max,
      double median,
      double stddev,
      double zipfExponent,
      SplittableRandom random) {
    if (max < min) {
      throw new IllegalArgumentException(
          "key range: " + min + "-" + max + " (expected min <= max)");
    }
    this.pattern = pattern;
    this.min = min;
    this.max = max;
    this.median = median;
    this.stddev = stddev;
    this.zipf = pattern == KeyPattern.ZIPF ? ZipfKeys.forKeyRange(min, max, zipfExponent) : null;
    this.random = random;
    this.next = min;
  }

  /** Number of keys in this sequence's range. */
  public long rangeSize() {
    return max - min + 1;
  }

  /** The next key number. */
  public long next() {
    return switch (pattern) {
      case SEQUENTIAL, PARALLEL -> {
        long k = next;
        next = k == max ? min : k + 1;
        yield k;
      }
      case RANDOM -> min + random.nextLong(max - min + 1);
      case GAUSSIAN -> gaussian();
      case ZIPF -> zipf.next(random);
    };
  }

  private long gaussian() {
    if (stddev == 0) {
      return Math.max(min, Math.min(max, Math.round(median)));
    }
    for (int attempt = 0; attempt < 1000; attempt++) {
      long k = Math.round(median + stddev * nextGaussian());
      if (k >= min && k <= max) {
        return k;
      }
    }
    return Math.max(min, Math.min(max, Math.round(median)));
  }

  // Marsaglia polar method (keeps the sequence independent of the JDK's nextGaussian).
  private double nextGaussian() {
    double u;
    double v;
    double s;
    do {
      u = random.nextDouble() * 2 - 1;
      v = random.nextDouble() * 2 - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    return u * Math.sqrt(-2 * Math.log(s) / s);
  }

  /**
   * First key of client {@code clientIndex}'s sub-range under the P pattern: the key range split
   * into {@code clients} contiguous parts whose sizes differ by at most one.
   */
  public static long parallelRangeStart(long keyMin, long keyCount, int clients, int clientIndex) {
    // floor(keyCount * clientIndex / clients) without overflow
    long whole = keyCount / clients;
    long rest = keyCount % clients;
    return keyMin + whole * clientIndex + rest * clientIndex / clients;
  }

  /** Last key (inclusive) of client {@code clientIndex}'s sub-range under the P pattern. */
  public static long parallelRangeEnd(long keyMin, long keyCount, int clients, int clientIndex) {
    return parallelRangeStart(keyMin, keyCount, clients, clientIndex + 1) - 1;
  }
}
