package dev.cachelab.loadgen.workload;

/**
 * The Zipf law of memtier's Z pattern (P(n) proportional to n^-exp over key numbers) and Pearson's
 * chi-square goodness of fit against it, for the tests.
 */
public final class ZipfLaw {
  /** Standard normal quantile of 0.999: a fit is rejected at the 0.1 % level. */
  private static final double Z_999 = 3.0902;

  private ZipfLaw() {}

  /** Zipf-law probabilities of keys first..last with the given exponent. */
  public static double[] probabilities(long first, long last, double exponent) {
    double[] p = new double[(int) (last - first + 1)];
    double sum = 0;
    for (int i = 0; i < p.length; i++) {
      p[i] = Math.pow(first + i, -exponent);
      sum += p[i];
    }
    for (int i = 0; i < p.length; i++) {
      p[i] /= sum;
    }
    return p;
  }

  /**
   * Pearson's statistic, keys pooled from the tail until every bin expects at least 5 draws.
   *
   * @return {statistic, degrees of freedom}
   */
  public static double[] chiSquare(long[] counts, double[] p) {
    long n = 0;
    for (long c : counts) {
      n += c;
    }
    double statistic = 0;
    int bins = 0;
    double expected = 0;
    long observed = 0;
    for (int i = 0; i < counts.length; i++) {
      expected += n * p[i];
      observed += counts[i];
      if (expected >= 5 || i == counts.length - 1) {
        statistic += (observed - expected) * (observed - expected) / expected;
        bins++;
        expected = 0;
        observed = 0;
      }
    }
    return new double[] {statistic, bins - 1};
  }

  /** Upper 0.1 % point of chi-square (Wilson-Hilferty; close for the hundreds of df here). */
  public static double critical999(double df) {
    double a = 2 / (9 * df);
    return df * Math.pow(1 - a + Z_999 * Math.sqrt(a), 3);
  }
}
