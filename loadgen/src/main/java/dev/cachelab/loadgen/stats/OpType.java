package dev.cachelab.loadgen.stats;

/** Request types the load generator measures separately (memtier's Sets and Gets). */
public enum OpType {
  SET("Sets", "SET"),
  GET("Gets", "GET");

  private final String memtierSection;
  private final String memtierCommand;

  OpType(String memtierSection, String memtierCommand) {
    this.memtierSection = memtierSection;
    this.memtierCommand = memtierCommand;
  }

  /** Name of this type's block in memtier's JSON and table ("Sets", "Gets"). */
  public String memtierSection() {
    return memtierSection;
  }

  /** memtier's command name ("SET", "GET"), used in histogram arrays and HDR file names. */
  public String memtierCommand() {
    return memtierCommand;
  }

  /** Lower-case label for Prometheus ({@code op="get"}). */
  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
