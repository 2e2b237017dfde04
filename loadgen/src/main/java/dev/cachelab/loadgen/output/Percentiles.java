package dev.cachelab.loadgen.output;

import java.util.Locale;

/** memtier's names for percentiles. Stateless; any thread. */
public final class Percentiles {
  private Percentiles() {}

  /**
   * JSON key of a percentile: {@code "p%.2f"} as memtier writes it ({@code p50.00}, {@code
   * p99.90}), with more decimals only when two would lose digits ({@code p99.999}).
   */
  public static String key(double percentile) {
    String two = String.format(Locale.ROOT, "%.2f", percentile);
    if (Double.parseDouble(two) == percentile) {
      return "p" + two;
    }
    String text = java.math.BigDecimal.valueOf(percentile).stripTrailingZeros().toPlainString();
    return "p" + text;
  }

  /** Column label in the text table: {@code p50}, {@code p99.9}. */
  public static String label(double percentile) {
    return "p" + java.math.BigDecimal.valueOf(percentile).stripTrailingZeros().toPlainString();
  }
}
