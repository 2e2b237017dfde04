package dev.cachelab.loadgen.config;

/**
 * One side of memtier's {@code --key-pattern=SET:GET}.
 *
 * <ul>
 *   <li>{@code S}: sequential per client, from the client's first key, wrapping at the end.
 *   <li>{@code R}: uniform random over the key range.
 *   <li>{@code G}: Gaussian around {@code --key-median} with {@code --key-stddev}, redrawn until
 *       inside the key range.
 *   <li>{@code P}: parallel; every client owns a disjoint contiguous sub-range of the keys and
 *       walks it sequentially.
 *   <li>{@code Z}: Zipf; key {@code n} drawn with probability proportional to {@code n^-exp}
 *       ({@code --key-zipf-exp}, default 1), from key 1 up when {@code --key-minimum} is 0, so the
 *       smallest key numbers are the hot keys.
 * </ul>
 */
public enum KeyPattern {
  SEQUENTIAL('S'),
  RANDOM('R'),
  GAUSSIAN('G'),
  PARALLEL('P'),
  ZIPF('Z');

  private final char letter;

  KeyPattern(char letter) {
    this.letter = letter;
  }

  public char letter() {
    return letter;
  }

  /** Parses one pattern letter. */
  public static KeyPattern of(char letter) {
    return switch (letter) {
      case 'S' -> SEQUENTIAL;
      case 'R' -> RANDOM;
      case 'G' -> GAUSSIAN;
      case 'P' -> PARALLEL;
      case 'Z' -> ZIPF;
      default ->
          throw new ConfigException(
              "--key-pattern: unknown pattern '" + letter + "' (expected: S, R, G, P or Z)");
    };
  }
}
