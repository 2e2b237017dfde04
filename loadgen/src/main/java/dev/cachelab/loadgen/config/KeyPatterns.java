package dev.cachelab.loadgen.config;

/** The SET and GET key patterns of {@code --key-pattern=SET:GET}. */
public record KeyPatterns(KeyPattern set, KeyPattern get) {

  /** Parses {@code "R:R"}, {@code "P:P"}, {@code "S:R"}, ... */
  public static KeyPatterns parse(String text) {
    String t = text.trim();
    if (t.length() != 3 || t.charAt(1) != ':') {
      throw new ConfigException("--key-pattern: expected SET:GET such as R:R, got '" + text + "'");
    }
    return new KeyPatterns(KeyPattern.of(t.charAt(0)), KeyPattern.of(t.charAt(2)));
  }

  public boolean bothParallel() {
    return set == KeyPattern.PARALLEL && get == KeyPattern.PARALLEL;
  }

  public boolean anyZipf() {
    return set == KeyPattern.ZIPF || get == KeyPattern.ZIPF;
  }

  public boolean anyParallel() {
    return set == KeyPattern.PARALLEL || get == KeyPattern.PARALLEL;
  }

  @Override
  public String toString() {
    return set.letter() + ":" + get.letter();
  }
}
