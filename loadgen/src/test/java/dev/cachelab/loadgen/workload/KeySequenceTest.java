package dev.cachelab.loadgen.workload;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.loadgen.config.KeyPattern;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeySequenceTest {

  static List<Long> take(KeySequence s, int n) {
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(s.next());
    }
    return out;
  }

  static KeySequence seq(KeyPattern p, long min, long max) {
    return new KeySequence(
        p, min, max, (min + max) / 2.0, (max - min) / 6.0, 1.0, new SplittableRandom(1));
  }

  @Test
  void sequentialStartsAtMinimumAndWraps() {
    assertThat(take(seq(KeyPattern.SEQUENTIAL, 3, 6), 7))
        .containsExactly(3L, 4L, 5L, 6L, 3L, 4L, 5L);
  }

  @Test
  void parallelRangesAreDisjointAndCoverEveryKey() {
    long min = 10;
    long count = 103;
    int clients = 8;
    Set<Long> seen = new HashSet<>();
    long expectedStart = min;
    for (int c = 0; c < clients; c++) {
      long start = KeySequence.parallelRangeStart(min, count, clients, c);
      long end = KeySequence.parallelRangeEnd(min, count, clients, c);
      assertThat(start).isEqualTo(expectedStart);
      assertThat(end - start + 1).isBetween(count / clients, count / clients + 1);
      KeySequence s = seq(KeyPattern.PARALLEL, start, end);
      for (long k : take(s, (int) s.rangeSize())) {
        assertThat(seen.add(k)).as("key %d seen twice", k).isTrue();
      }
      expectedStart = end + 1;
    }
    assertThat(seen).hasSize((int) count);
    assertThat(expectedStart).isEqualTo(min + count);
  }

  @Test
  void parallelWalksItsRangeInOrder() {
    long start = KeySequence.parallelRangeStart(0, 100, 4, 2);
    long end = KeySequence.parallelRangeEnd(0, 100, 4, 2);
    assertThat(start).isEqualTo(50);
    assertThat(end).isEqualTo(74);
    assertThat(take(seq(KeyPattern.PARALLEL, start, end), 3)).containsExactly(50L, 51L, 52L);
  }

  @Test
  void randomStaysInRangeAndReachesBothEnds() {
    KeySequence s = seq(KeyPattern.RANDOM, 5, 14);
    Set<Long> seen = new HashSet<>(take(s, 2000));
    assertThat(seen).hasSize(10).allMatch(k -> k >= 5 && k <= 14);
  }

  @Test
  void sameSeedSameSequence() {
    assertThat(take(seq(KeyPattern.RANDOM, 0, 1_000_000), 50))
        .isEqualTo(take(seq(KeyPattern.RANDOM, 0, 1_000_000), 50));
  }

  @Test
  void gaussianCentresOnTheMedianWithinRange() {
    KeySequence s =
        new KeySequence(KeyPattern.GAUSSIAN, 0, 1000, 300, 50, 1.0, new SplittableRandom(7));
    List<Long> keys = take(s, 20_000);
    double mean = keys.stream().mapToLong(Long::longValue).average().orElseThrow();
    long within = keys.stream().filter(k -> Math.abs(k - 300) <= 50).count();
    assertThat(keys).allMatch(k -> k >= 0 && k <= 1000);
    assertThat(mean).isBetween(295.0, 305.0);
    assertThat(within / 20_000.0).isBetween(0.64, 0.72); // one sigma ~ 68 %
  }
}
