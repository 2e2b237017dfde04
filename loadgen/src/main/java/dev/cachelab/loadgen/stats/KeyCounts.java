package dev.cachelab.loadgen.stats;

/**
 * How often one engine thread requested each key, in bounded memory. A key range of at most {@value
 * #MAX_EXACT_KEYS} keys per thread (and {@value #MAX_EXACT_COUNTERS} counters over all threads) is
 * counted exactly, one counter per key; a larger one with the Space-Saving algorithm (Metwally,
 * Agrawal and El Abbadi, "Efficient computation of frequent and top-k elements in data streams",
 * ICDT 2005) over {@value #CAPACITY} counters: a monitored key's count exceeds its true count by at
 * most its error, and a key that is not monitored was requested at most {@link #floor()} times.
 * Either way the requests per key-number octave (keys {@code min}, {@code min+1..min+2}, {@code
 * min+3..min+6}, ...) are exact.
 *
 * <p>Written by the engine thread only; read by the main thread after that thread has ended.
 */
public final class KeyCounts {
  /** Keys monitored at once by Space-Saving. */
  public static final int CAPACITY = 1024;

  /** The largest key range a thread counts exactly. */
  public static final long MAX_EXACT_KEYS = 1L << 20;

  /** The most exact counters over all threads (4 bytes each). */
  public static final long MAX_EXACT_COUNTERS = 1L << 24;

  private static final int TABLE_BITS = 12; // 4096 slots: at most a quarter full
  private static final int TABLE_MASK = (1 << TABLE_BITS) - 1;

  private final long keyMinimum;
  private final int[] exact;
  private final long[] octaves = new long[64];
  private long total;

  // Min-heap on count: the root is the key a new one replaces.
  private final long[] heapKeys = new long[CAPACITY];
  private final long[] heapCounts = new long[CAPACITY];
  private final long[] heapErrors = new long[CAPACITY];
  private final int[] heapSlots = new int[CAPACITY];
  private int size;

  // Linear-probing table from key to heap index + 1 (0 = empty slot).
  private final long[] tableKeys = new long[1 << TABLE_BITS];
  private final int[] tableEntries = new int[1 << TABLE_BITS];

  /**
   * Space-Saving counts (for tests of the approximate mode).
   *
   * @param keyMinimum the smallest key number of the run (the first octave starts there)
   */
  public KeyCounts(long keyMinimum) {
    this.keyMinimum = keyMinimum;
    this.exact = null;
  }

  private KeyCounts(long keyMinimum, long keyCount) {
    this.keyMinimum = keyMinimum;
    this.exact = new int[(int) keyCount];
  }

  /**
   * The counts for one of {@code threads} threads over keys {@code keyMinimum..keyMaximum}: exact
   * when the range is small enough, else Space-Saving.
   */
  public static KeyCounts forRange(long keyMinimum, long keyMaximum, int threads) {
    long keyCount = keyMaximum - keyMinimum + 1;
    boolean small = keyCount <= MAX_EXACT_KEYS && keyCount * threads <= MAX_EXACT_COUNTERS;
    return small ? new KeyCounts(keyMinimum, keyCount) : new KeyCounts(keyMinimum);
  }

  /** Engine thread: {@code key} was requested once more. */
  public void record(long key) {
    total++;
    long offset = key - keyMinimum;
    octaves[63 - Long.numberOfLeadingZeros(offset + 1)]++;
    if (exact != null) {
      exact[(int) offset]++;
      return;
    }
    int slot = find(key);
    int entry = tableEntries[slot];
    if (entry != 0) {
      heapCounts[entry - 1]++;
      siftDown(entry - 1);
      return;
    }
    if (size < CAPACITY) {
      int i = size++;
      place(i, key, 1, 0, slot);
      siftUp(i);
      return;
    }
    long min = heapCounts[0];
    delete(heapSlots[0]);
    place(0, key, min + 1, min, find(key));
    siftDown(0);
  }

  /** Requests counted. */
  public long total() {
    return total;
  }

  /**
   * Requests to keys in octave {@code b}: key offsets (from the minimum) {@code 2^b-1..2^(b+1)-2}.
   */
  public long octave(int b) {
    return octaves[b];
  }

  /** Whether every key has its own counter ({@link #exactCount}); else Space-Saving. */
  public boolean exact() {
    return exact != null;
  }

  public long keyMinimum() {
    return keyMinimum;
  }

  /** Exact mode: number of keys counted. */
  public int exactKeys() {
    return exact.length;
  }

  /** Exact mode: requests of key {@code keyMinimum + offset}. */
  public long exactCount(int offset) {
    return exact[offset] & 0xFFFFFFFFL;
  }

  /** Space-Saving mode: keys monitored now. */
  public int size() {
    return size;
  }

  public long key(int i) {
    return heapKeys[i];
  }

  /** The count of monitored key {@code i}: at least its true count, at most error(i) more. */
  public long count(int i) {
    return heapCounts[i];
  }

  public long error(int i) {
    return heapErrors[i];
  }

  /** How often at most a key that is not monitored was requested. */
  public long floor() {
    return size < CAPACITY ? 0 : heapCounts[0];
  }

  private void place(int i, long key, long count, long error, int slot) {
    heapKeys[i] = key;
    heapCounts[i] = count;
    heapErrors[i] = error;
    heapSlots[i] = slot;
    tableKeys[slot] = key;
    tableEntries[slot] = i + 1;
  }

  private static int home(long key) {
    return (int) ((key * 0x9E3779B97F4A7C15L) >>> (64 - TABLE_BITS));
  }

  /** The slot holding {@code key}, or the empty slot where it would go. */
  private int find(long key) {
    int slot = home(key);
    while (tableEntries[slot] != 0 && tableKeys[slot] != key) {
      slot = (slot + 1) & TABLE_MASK;
    }
    return slot;
  }

  /** Empties {@code slot}, shifting later entries of the probe run back (no tombstones). */
  private void delete(int slot) {
    int hole = slot;
    int j = slot;
    while (true) {
      j = (j + 1) & TABLE_MASK;
      int entry = tableEntries[j];
      if (entry == 0) {
        break;
      }
      int home = home(tableKeys[j]);
      if (((j - home) & TABLE_MASK) >= ((j - hole) & TABLE_MASK)) {
        tableKeys[hole] = tableKeys[j];
        tableEntries[hole] = entry;
        heapSlots[entry - 1] = hole;
        hole = j;
      }
    }
    tableEntries[hole] = 0;
  }

  private void siftUp(int i) {
    while (i > 0) {
      int parent = (i - 1) / 2;
      if (heapCounts[parent] <= heapCounts[i]) {
        return;
      }
      swap(i, parent);
      i = parent;
    }
  }

  private void siftDown(int i) {
    while (true) {
      int left = 2 * i + 1;
      if (left >= size) {
        return;
      }
      int child = left + 1 < size && heapCounts[left + 1] < heapCounts[left] ? left + 1 : left;
      if (heapCounts[i] <= heapCounts[child]) {
        return;
      }
      swap(i, child);
      i = child;
    }
  }

  private void swap(int a, int b) {
    long key = heapKeys[a];
    long count = heapCounts[a];
    long error = heapErrors[a];
    int slot = heapSlots[a];
    heapKeys[a] = heapKeys[b];
    heapCounts[a] = heapCounts[b];
    heapErrors[a] = heapErrors[b];
    heapSlots[a] = heapSlots[b];
    heapKeys[b] = key;
    heapCounts[b] = count;
    heapErrors[b] = error;
    heapSlots[b] = slot;
    tableEntries[heapSlots[a]] = a + 1;
    tableEntries[heapSlots[b]] = b + 1;
  }
}
