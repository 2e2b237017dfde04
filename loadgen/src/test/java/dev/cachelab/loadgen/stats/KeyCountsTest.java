package dev.cachelab.loadgen.stats;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.loadgen.workload.ZipfKeys;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeyCountsTest {

  @Test
  void fewerKeysThanCountersAreCountedExactly() {
    KeyCounts c = new KeyCounts(10);
    for (int i = 0; i < 5; i++) {
      c.record(10);
    }
    c.record(11);
    c.record(12);
    c.record(13);
    c.record(17);
    assertThat(c.total()).isEqualTo(9);
    assertThat(c.floor()).isZero();
    Map<Long, Long> counts = counts(c);
    assertThat(counts).containsEntry(10L, 5L).containsEntry(11L, 1L).containsEntry(17L, 1L);
    // octaves from the minimum 10: {10}, {11, 12}, {13..16}, {17..24}
    assertThat(c.octave(0)).isEqualTo(5);
    assertThat(c.octave(1)).isEqualTo(2);
    assertThat(c.octave(2)).isEqualTo(1);
    assertThat(c.octave(3)).isEqualTo(1);
  }

  @Test
  void aSmallRangeIsCountedExactlyOverAllThreads() {
    KeyCounts a = KeyCounts.forRange(1, 1000, 2);
    KeyCounts b = KeyCounts.forRange(1, 1000, 2);
    assertThat(a.exact()).isTrue();
    Map<Long, Long> truth = new HashMap<>();
    SplittableRandom random = new SplittableRandom(9);
    for (int i = 0; i < 50_000; i++) {
      long k = 1 + random.nextLong(1000);
      (i % 2 == 0 ? a : b).record(k);
      truth.merge(k, 1L, Long::sum);
    }
    KeyFrequencies f = KeyFrequencies.ofThreads(List.of(a, b), 5);
    assertThat(f.total()).isEqualTo(50_000);
    assertThat(f.top()).hasSize(5);
    long previous = Long.MAX_VALUE;
    for (KeyFrequencies.KeyCount k : f.top()) {
      assertThat(k.count()).isEqualTo(truth.get(k.key())).isLessThanOrEqualTo(previous);
      assertThat(k.overcount()).isZero();
      previous = k.count();
    }
    long sixth =
        truth.values().stream()
            .sorted(java.util.Comparator.reverseOrder())
            .skip(5)
            .findFirst()
            .orElseThrow();
    assertThat(f.floor()).isEqualTo(sixth);
  }

  @Test
  void aLargeRangeOrManyThreadsFallBackToSpaceSaving() {
    assertThat(KeyCounts.forRange(0, KeyCounts.MAX_EXACT_KEYS - 1, 1).exact()).isTrue();
    assertThat(KeyCounts.forRange(0, KeyCounts.MAX_EXACT_KEYS, 1).exact()).isFalse();
    assertThat(KeyCounts.forRange(0, 999_999, 16).exact()).isTrue();
    assertThat(KeyCounts.forRange(0, 999_999, 17).exact()).isFalse();
  }

  @Test
  void spaceSavingBoundsHoldOnAUniformStreamThatEvictsAllTheTime() {
    // 20,000 keys through 1,024 counters: nearly every record replaces the minimum, which
    // exercises the table's deletions; every bound must still hold.
    KeyCounts c = new KeyCounts(0);
    Map<Long, Long> truth = new HashMap<>();
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < 300_000; i++) {
      long k = random.nextLong(20_000);
      c.record(k);
      truth.merge(k, 1L, Long::sum);
    }
    checkBounds(c, truth);
  }

  @Test
  void theHotKeysOfAZipfStreamAreCountedExactly() {
    KeyCounts c = new KeyCounts(1);
    Map<Long, Long> truth = new HashMap<>();
    ZipfKeys zipf = new ZipfKeys(1, 1_000_000, 1.0);
    SplittableRandom random = new SplittableRandom(5);
    for (int i = 0; i < 500_000; i++) {
      long k = zipf.next(random);
      c.record(k);
      truth.merge(k, 1L, Long::sum);
    }
    checkBounds(c, truth);
    KeyFrequencies f = KeyFrequencies.ofThreads(List.of(c), 10);
    for (int rank = 0; rank < 10; rank++) {
      KeyFrequencies.KeyCount k = f.top().get(rank);
      assertThat(k.key()).isEqualTo(rank + 1);
      assertThat(k.overcount()).isZero();
      assertThat(k.count()).isEqualTo(truth.get(k.key()));
    }
  }

  @Test
  void mergingThreadsAddsCountsAndCarriesTheFloorOfThreadsThatMissedAKey() {
    KeyFrequencies a =
        new KeyFrequencies(10, List.of(new KeyFrequencies.KeyCount(1, 6, 0)), 2, octaves(6, 4));
    KeyFrequencies b =
        new KeyFrequencies(
            7,
            List.of(new KeyFrequencies.KeyCount(1, 3, 1), new KeyFrequencies.KeyCount(5, 4, 0)),
            0,
            octaves(3, 4));
    KeyFrequencies m = KeyFrequencies.merge(List.of(a, b), 1);
    assertThat(m.total()).isEqualTo(17);
    assertThat(m.top()).containsExactly(new KeyFrequencies.KeyCount(1, 9, 1));
    // key 5: 4 in b and at most 2 in a; dropped, so the floor is at least 6
    assertThat(m.floor()).isEqualTo(6);
    assertThat(m.octaves()[0]).isEqualTo(9);
    assertThat(m.octaves()[1]).isEqualTo(8);
    assertThat(m.usedOctaves()).isEqualTo(2);
  }

  private static long[] octaves(long first, long second) {
    long[] o = new long[64];
    o[0] = first;
    o[1] = second;
    return o;
  }

  private static Map<Long, Long> counts(KeyCounts c) {
    Map<Long, Long> out = new HashMap<>();
    for (int i = 0; i < c.size(); i++) {
      out.put(c.key(i), c.count(i));
    }
    return out;
  }

  /** Every monitored count is within [truth, truth + error]; every other key is <= floor. */
  private static void checkBounds(KeyCounts c, Map<Long, Long> truth) {
    assertThat(c.size()).isEqualTo(Math.min(KeyCounts.CAPACITY, truth.size()));
    long sum = 0;
    Map<Long, Long> monitored = new HashMap<>();
    for (int i = 0; i < c.size(); i++) {
      long t = truth.getOrDefault(c.key(i), 0L);
      assertThat(c.count(i)).as("key %s", c.key(i)).isBetween(t, t + c.error(i));
      assertThat(monitored.put(c.key(i), c.count(i))).as("monitored twice").isNull();
      sum += c.count(i);
    }
    assertThat(sum).isEqualTo(c.total()); // Space-Saving keeps the stream length in its counts
    truth.forEach(
        (k, t) -> {
          if (!monitored.containsKey(k)) {
            assertThat(t).as("unmonitored key %s", k).isLessThanOrEqualTo(c.floor());
          }
        });
  }
}
