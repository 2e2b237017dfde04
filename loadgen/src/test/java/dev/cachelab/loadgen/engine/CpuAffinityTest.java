package dev.cachelab.loadgen.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class CpuAffinityTest {

  @Test
  void parsesLinuxCpuLists() {
    assertThat(CpuAffinity.parseCpuList("0")).containsExactly(0);
    assertThat(CpuAffinity.parseCpuList("0-3")).containsExactly(0, 1, 2, 3);
    assertThat(CpuAffinity.parseCpuList("0,2-3,7")).containsExactly(0, 2, 3, 7);
  }

  @Test
  void pinsTheCallingThreadToAnAllowedCpu() throws Exception {
    int[] pinned = new int[1];
    String[] allowed = new String[1];
    Thread t =
        new Thread(
            () -> {
              try {
                pinned[0] = CpuAffinity.pinCurrentThread(1);
                allowed[0] =
                    Files.readAllLines(Path.of("/proc/thread-self/status"), StandardCharsets.UTF_8)
                        .stream()
                        .filter(l -> l.startsWith("Cpus_allowed_list:"))
                        .findFirst()
                        .orElseThrow();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    t.start();
    t.join();
    assertThat(CpuAffinity.allowedCpus()).contains(pinned[0]);
    assertThat(allowed[0].replaceAll("\\s+", "")).isEqualTo("Cpus_allowed_list:" + pinned[0]);
  }
}
