package dev.cachelab.loadgen.workload;

import java.util.SplittableRandom;

/**
 * Key numbers with Zipf popularity, as memtier's {@code --key-pattern=Z} with {@code
 * --key-zipf-exp}: key {@code n} of {@code [first, last]} is drawn with probability proportional to
 * {@code n^-exponent}, so the smallest key number is the hottest. memtier draws from key 1 up when
 * {@code --key-minimum} is 0; {@link #forKeyRange} does the same.
 *
 * <p>Sampling is rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate
 * variates from monotone discrete distributions", ACM TOMACS 6(3), 1996): constant time per key and
 * no table, so a range of 10^8 keys costs nothing to set up. Immutable; {@link
 * #next(SplittableRandom)} is called by the client's thread with that client's generator.
 */
public final class ZipfKeys {
  private final long first;
  private final long last;
  private final double exponent;
  private final double integralFirst;
  private final double integralLast;
  private final double squeeze;

  /**
   * @param first smallest key number, at least 1
   * @param last largest key number, at least {@code first}
   * @param exponent Zipf exponent, greater than 0
   */
  public ZipfKeys(long first, long last, double exponent) {
    if (first < 1 || last < first) {
      throw new IllegalArgumentException(
          "zipf key range: " + first + "-" + last + " (expected 1 <= first <= last)");
    }
    if (!(exponent > 0) || Double.isInfinite(exponent)) {
      throw new IllegalArgumentException("zipf exponent: must be > 0, got " + exponent);
    }
    this.first = first;
    this.last = last;
    this.exponent = exponent;
    // The first key owns the whole area left of first + 0.5 (its hat is its own weight).
    this.integralFirst = integral(first + 0.5) - weight(first);
    this.integralLast = integral(last + 0.5);
    this.squeeze = first + 1 - inverseIntegral(integral(first + 1.5) - weight(first + 1));
  }

  /** memtier's key range for Z: {@code [max(1, keyMinimum), max(keyMaximum, that)]}. */
  public static ZipfKeys forKeyRange(long keyMinimum, long keyMaximum, double exponent) {
    long from = Math.max(1, keyMinimum);
    return new ZipfKeys(from, Math.max(from, keyMaximum), exponent);
  }

  public long first() {
    return first;
  }

  public long last() {
    return last;
  }

  public double exponent() {
    return exponent;
  }

  /** The next key number. */
  public long next(SplittableRandom random) {
    if (first == last) {
      return first;
    }
    while (true) {
      double u = integralLast + random.nextDouble() * (integralFirst - integralLast);
      double x = inverseIntegral(u);
      long k = Math.max(first, Math.min(last, Math.round(x)));
      if (k - x <= squeeze || u >= integral(k + 0.5) - weight(k)) {
        return k;
      }
    }
  }

  /** The hat h(x) = x^-exponent. */
  private double weight(double x) {
    return Math.exp(-exponent * Math.log(x));
  }

  /** H(x) = (x^(1-exponent) - 1) / (1 - exponent), log(x) at exponent 1, without cancellation. */
  private double integral(double x) {
    double logX = Math.log(x);
    return logX * expm1OverX((1 - exponent) * logX);
  }

  /** The inverse of {@link #integral}. */
  private double inverseIntegral(double y) {
    double t = y * (1 - exponent);
    if (t <= -1) {
      t = Math.nextUp(-1.0); // rounding at the far end of the range; next() clamps to the last key
    }
    return Math.exp(y * log1pOverX(t));
  }

  /** (e^t - 1) / t, 1 at t = 0. */
  private static double expm1OverX(double t) {
    return Math.abs(t) > 1e-8 ? Math.expm1(t) / t : 1 + t / 2 + t * t / 6;
  }

  /** log(1 + t) / t, 1 at t = 0. */
  private static double log1pOverX(double t) {
    return Math.abs(t) > 1e-8 ? Math.log1p(t) / t : 1 - t / 2 + t * t / 3;
  }
}
