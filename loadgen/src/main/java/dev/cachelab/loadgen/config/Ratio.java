package dev.cachelab.loadgen.config;

/**
 * memtier's {@code --ratio=SET:GET}: each client repeats a cycle of {@code sets} SETs followed by
 * {@code gets} GET keys (grouped into multi-gets when {@code --multi-key-get} is on).
 */
public record Ratio(int sets, int gets) {

  public Ratio {
    if (sets < 0 || gets < 0) {
      throw new ConfigException("--ratio: counts must be >= 0, got " + sets + ":" + gets);
    }
    if (sets == 0 && gets == 0) {
      throw new ConfigException("--ratio: at least one of SET and GET must be > 0, got 0:0");
    }
  }

  /** Parses {@code "1:10"}. */
  public static Ratio parse(String text) {
    String[] parts = text.trim().split(":", -1);
    if (parts.length != 2) {
      throw new ConfigException("--ratio: expected SET:GET such as 1:10, got '" + text + "'");
    }
    try {
      return new Ratio(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()));
    } catch (NumberFormatException e) {
      throw new ConfigException("--ratio: expected two integers SET:GET, got '" + text + "'");
    }
  }

  @Override
  public String toString() {
    return sets + ":" + gets;
  }
}
