package dev.cachelab.loadgen.workload;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.loadgen.config.Ratio;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OperationMixTest {

  static List<Integer> take(OperationMix mix, int n) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(mix.next());
    }
    return out;
  }

  @Test
  void ratioCycleIsSetsThenGets() {
    assertThat(take(new OperationMix(new Ratio(1, 3), 0), 8))
        .containsExactly(0, 1, 1, 1, 0, 1, 1, 1);
    assertThat(take(new OperationMix(new Ratio(2, 1), 0), 6)).containsExactly(0, 0, 1, 0, 0, 1);
  }

  @Test
  void readOnlyAndWriteOnly() {
    assertThat(take(new OperationMix(new Ratio(0, 1), 0), 3)).containsExactly(1, 1, 1);
    assertThat(take(new OperationMix(new Ratio(1, 0), 0), 3)).containsExactly(0, 0, 0);
  }

  @Test
  void multiGetOfKWithRatioOneToKGivesOneKKeyGetPerSet() {
    for (int k : new int[] {1, 3, 6, 9}) {
      List<Integer> ops = take(new OperationMix(new Ratio(1, k), k), 6);
      assertThat(ops).containsExactly(0, k, 0, k, 0, k);
    }
  }

  @Test
  void multiGetIsCappedByWhatTheRatioLeaves() {
    // memtier: keys = min(ratio.gets - gets_so_far, multi_key_get)
    assertThat(take(new OperationMix(new Ratio(1, 10), 4), 8))
        .containsExactly(0, 4, 4, 2, 0, 4, 4, 2);
    assertThat(take(new OperationMix(new Ratio(1, 2), 5), 4)).containsExactly(0, 2, 0, 2);
  }
}
