package dev.cachelab.loadgen.config;

/** An inclusive integer range {@code min-max}, as in {@code --data-size-range=32-1024}. */
public record IntRange(int min, int max) {

  /** Parses {@code "min-max"}; {@code option} names the flag in error messages. */
  public static IntRange parse(String option, String text) {
    String[] parts = text.trim().split("-", -1);
    if (parts.length != 2) {
      throw new ConfigException(option + ": expected MIN-MAX such as 32-1024, got '" + text + "'");
    }
    int min;
    int max;
    try {
      min = Integer.parseInt(parts[0].trim());
      max = Integer.parseInt(parts[1].trim());
    } catch (NumberFormatException e) {
      throw new ConfigException(option + ": expected two integers MIN-MAX, got '" + text + "'");
    }
    if (min < 0 || max < min) {
      throw new ConfigException(option + ": expected 0 <= MIN <= MAX, got '" + text + "'");
    }
    return new IntRange(min, max);
  }

  @Override
  public String toString() {
    return min + "-" + max;
  }
}
