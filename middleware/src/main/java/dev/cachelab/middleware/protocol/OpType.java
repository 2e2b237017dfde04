package dev.cachelab.middleware.protocol;

/**
 * The operation types statistics are kept for. {@link #ALL} is the sum of the others and only
 * appears in reports. Immutable; any thread.
 */
public enum OpType {
  GET("get"),
  MULTIGET("multiget"),
  SET("set"),
  OTHER("other"),
  ALL("all");

  /** Number of recorded types (all but {@link #ALL}). */
  public static final int RECORDED = 4;

  private final String label;

  OpType(String label) {
    this.label = label;
  }

  /** The name used in files and metric labels. */
  public String label() {
    return label;
  }

  /** Recorded types, in index order. */
  public static OpType[] recorded() {
    return new OpType[] {GET, MULTIGET, SET, OTHER};
  }
}
