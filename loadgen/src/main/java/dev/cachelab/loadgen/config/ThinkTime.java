package dev.cachelab.loadgen.config;

import java.util.Locale;

/**
 * Extension {@code --think-time=<ms>[:exp]}: after each reply a client waits this long before it
 * sends the next request (Z of the interactive response-time law). Fixed by default; {@code :exp}
 * draws each wait from an exponential distribution with this mean.
 */
public record ThinkTime(long meanNanos, boolean exponential) {

  public static final ThinkTime NONE = new ThinkTime(0, false);

  public boolean enabled() {
    return meanNanos > 0;
  }

  /** Parses {@code "5"}, {@code "0.5"}, {@code "5:fixed"} or {@code "5:exp"} (milliseconds). */
  public static ThinkTime parse(String text) {
    String[] parts = text.trim().split(":", -1);
    if (parts.length > 2) {
      throw new ConfigException("--think-time: expected <ms>[:exp], got '" + text + "'");
    }
    double millis;
    try {
      millis = Double.parseDouble(parts[0].trim());
    } catch (NumberFormatException e) {
      throw new ConfigException("--think-time: expected a number of ms, got '" + text + "'");
    }
    if (!(millis >= 0) || Double.isInfinite(millis)) {
      throw new ConfigException("--think-time: must be >= 0 ms, got '" + text + "'");
    }
    boolean exponential = false;
    if (parts.length == 2) {
      exponential =
          switch (parts[1].trim().toLowerCase(Locale.ROOT)) {
            case "exp" -> true;
            case "fixed" -> false;
            default ->
                throw new ConfigException(
                    "--think-time: distribution must be 'exp' or 'fixed', got '" + parts[1] + "'");
          };
    }
    return new ThinkTime(Math.round(millis * 1_000_000.0), exponential);
  }

  @Override
  public String toString() {
    if (!enabled()) {
      return "0";
    }
    return String.format(Locale.ROOT, "%.3f%s", meanNanos / 1e6, exponential ? ":exp" : "");
  }
}
