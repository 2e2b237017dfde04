package dev.cachelab.loadgen.workload;

import dev.cachelab.loadgen.config.Ratio;

/**
 * memtier's per-client SET/GET cycle. A cycle is {@code ratio.sets()} SETs then {@code
 * ratio.gets()} GET keys; with {@code --multi-key-get=M} the GET keys are grouped into requests of
 * {@code min(ratio.gets - keysSoFar, M)} keys (memtier {@code client.cpp}), so {@code --ratio=1:K
 * --multi-key-get=K} gives one SET and one K-key GET per cycle. Used by one client's thread only.
 */
public final class OperationMix {
  /** Return value of {@link #next()} for a SET. */
  public static final int SET = 0;

  private final int sets;
  private final int gets;
  private final int multiKeyGet;
  private int setCount;
  private int getCount;

  public OperationMix(Ratio ratio, int multiKeyGet) {
    this.sets = ratio.sets();
    this.gets = ratio.gets();
    this.multiKeyGet = multiKeyGet;
  }

  /** The next operation: {@link #SET}, or the number of keys (at least 1) of the next GET. */
  public int next() {
    while (true) {
      if (setCount < sets) {
        setCount++;
        return SET;
      }
      if (getCount < gets) {
        int keys = multiKeyGet > 0 ? Math.min(gets - getCount, multiKeyGet) : 1;
        getCount += keys;
        return keys;
      }
      setCount = 0;
      getCount = 0;
    }
  }
}
