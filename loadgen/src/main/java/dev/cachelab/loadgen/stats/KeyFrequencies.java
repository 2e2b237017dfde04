package dev.cachelab.loadgen.stats;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The key counts of a run (or of several runs), merged from the engine threads' {@link KeyCounts}
 * and cut to the {@code top} most requested keys: each with an upper bound on its count and how
 * much that bound may exceed the truth; every other key was requested at most {@code floor} times.
 * {@code octaves[b]} counts requests to key offsets {@code 2^b-1..2^(b+1)-2} from the key minimum,
 * exactly. Immutable; built on the main thread after the run.
 */
public record KeyFrequencies(long total, List<KeyCount> top, long floor, long[] octaves) {

  /** Keys kept in a run's summary (and its JSON). */
  public static final int TOP_KEYS = 100;

  /** A key number, an upper bound on its requests and how far above the truth it may be. */
  public record KeyCount(long key, long count, long overcount) {}

  public static final KeyFrequencies EMPTY = new KeyFrequencies(0, List.of(), 0, new long[64]);

  public KeyFrequencies {
    top = List.copyOf(top);
    octaves = octaves.clone();
  }

  /** The merged view of the threads' counts, cut to {@code keep} keys. */
  public static KeyFrequencies ofThreads(List<KeyCounts> threads, int keep) {
    if (!threads.isEmpty() && threads.stream().allMatch(KeyCounts::exact)) {
      return ofExact(threads, keep);
    }
    List<KeyFrequencies> parts = new ArrayList<>();
    for (KeyCounts t : threads) {
      List<KeyCount> keys = new ArrayList<>(t.size());
      for (int i = 0; i < t.size(); i++) {
        keys.add(new KeyCount(t.key(i), t.count(i), t.error(i)));
      }
      parts.add(new KeyFrequencies(t.total(), keys, t.floor(), octavesOf(t)));
    }
    return merge(parts, keep);
  }

  private static long[] octavesOf(KeyCounts t) {
    long[] octaves = new long[64];
    for (int b = 0; b < 64; b++) {
      octaves[b] = t.octave(b);
    }
    return octaves;
  }

  /** Exact counts summed over the threads; the top {@code keep} by a bounded min-heap. */
  private static KeyFrequencies ofExact(List<KeyCounts> threads, int keep) {
    int keys = threads.get(0).exactKeys();
    long total = 0;
    long[] octaves = new long[64];
    for (KeyCounts t : threads) {
      total += t.total();
      long[] o = octavesOf(t);
      for (int b = 0; b < 64; b++) {
        octaves[b] += o[b];
      }
    }
    java.util.PriorityQueue<KeyCount> top =
        new java.util.PriorityQueue<>(
            Comparator.comparingLong(KeyCount::count)
                .thenComparing(Comparator.comparingLong(KeyCount::key).reversed()));
    long floor = 0;
    for (int offset = 0; offset < keys; offset++) {
      long count = 0;
      for (KeyCounts t : threads) {
        count += t.exactCount(offset);
      }
      if (count == 0) {
        continue;
      }
      if (top.size() < keep) {
        top.add(new KeyCount(threads.get(0).keyMinimum() + offset, count, 0));
      } else if (count > top.peek().count()) {
        floor = Math.max(floor, top.poll().count());
        top.add(new KeyCount(threads.get(0).keyMinimum() + offset, count, 0));
      } else {
        floor = Math.max(floor, count);
      }
    }
    List<KeyCount> sorted = new ArrayList<>(top);
    sorted.sort(
        Comparator.comparingLong(KeyCount::count).reversed().thenComparingLong(KeyCount::key));
    return new KeyFrequencies(total, sorted, floor, octaves);
  }

  /**
   * Sums {@code parts} (threads, or runs): a key missing from a part may have had up to that part's
   * floor there, which goes into both its count and its overcount. Keeps the {@code keep} highest
   * counts; the floor becomes at least the highest count dropped.
   */
  public static KeyFrequencies merge(List<KeyFrequencies> parts, int keep) {
    long total = 0;
    long floor = 0;
    long[] octaves = new long[64];
    Map<Long, long[]> sums = new HashMap<>();
    List<Map<Long, KeyCount>> indexes = new ArrayList<>();
    for (KeyFrequencies part : parts) {
      Map<Long, KeyCount> index = new HashMap<>();
      part.top.forEach(k -> index.put(k.key(), k));
      indexes.add(index);
      total += part.total;
      floor += part.floor;
      for (int b = 0; b < 64; b++) {
        octaves[b] += part.octaves[b];
      }
      for (KeyCount k : part.top) {
        sums.computeIfAbsent(k.key(), key -> new long[2]);
      }
    }
    for (Map.Entry<Long, long[]> e : sums.entrySet()) {
      long[] sum = e.getValue();
      for (int p = 0; p < parts.size(); p++) {
        KeyCount k = indexes.get(p).get(e.getKey());
        long partFloor = parts.get(p).floor;
        sum[0] += k == null ? partFloor : k.count();
        sum[1] += k == null ? partFloor : k.overcount();
      }
    }
    List<KeyCount> all = new ArrayList<>();
    sums.forEach((key, sum) -> all.add(new KeyCount(key, sum[0], sum[1])));
    all.sort(Comparator.comparingLong(KeyCount::count).reversed().thenComparingLong(KeyCount::key));
    if (all.size() > keep) {
      floor = Math.max(floor, all.get(keep).count());
    }
    return new KeyFrequencies(total, all.subList(0, Math.min(keep, all.size())), floor, octaves);
  }

  /** Number of octaves up to the last one with a request (0 when nothing was counted). */
  public int usedOctaves() {
    for (int b = 63; b >= 0; b--) {
      if (octaves[b] > 0) {
        return b + 1;
      }
    }
    return 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeyFrequencies f
        && total == f.total
        && floor == f.floor
        && top.equals(f.top)
        && Arrays.equals(octaves, f.octaves);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(total) * 31 + Arrays.hashCode(octaves);
  }

  @Override
  public String toString() {
    return "KeyFrequencies[total=" + total + ", top=" + top.size() + ", floor=" + floor + "]";
  }
}
