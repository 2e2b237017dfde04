package dev.cachelab.loadgen.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Extension {@code --pin-threads}: pins engine thread {@code i} to the {@code i}-th CPU this
 * process may use (round robin), as memcaslap does with {@code sched_setaffinity}. Java has no
 * affinity API, so the thread finds its Linux thread id in {@code /proc/thread-self} and runs
 * {@code taskset -p -c <cpu> <tid>} once at start. Called by each engine thread for itself; best
 * effort.
 */
final class CpuAffinity {
  private CpuAffinity() {}

  /** CPUs in this process's affinity mask ({@code Cpus_allowed_list} of /proc/self/status). */
  static List<Integer> allowedCpus() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
      if (line.startsWith("Cpus_allowed_list:")) {
        return parseCpuList(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    throw new IOException("/proc/self/status has no Cpus_allowed_list");
  }

  /** Parses a Linux CPU list such as {@code 0-3,6,8-9}. */
  static List<Integer> parseCpuList(String text) {
    List<Integer> cpus = new ArrayList<>();
    for (String part : text.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) {
        continue;
      }
      int dash = p.indexOf('-');
      int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
      int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
      for (int cpu = from; cpu <= to; cpu++) {
        cpus.add(cpu);
      }
    }
    return cpus;
  }

  /**
   * Pins the calling thread to the {@code index}-th allowed CPU (modulo their number).
   *
   * @return the CPU it was pinned to
   * @throws IOException with the reason when pinning is not possible here
   */
  static int pinCurrentThread(int index) throws IOException {
    List<Integer> cpus = allowedCpus();
    if (cpus.isEmpty()) {
      throw new IOException("no CPU in this process's affinity mask");
    }
    int cpu = cpus.get(index % cpus.size());
    String tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
    Process p =
        new ProcessBuilder("taskset", "-p", "-c", String.valueOf(cpu), tid)
            .redirectErrorStream(true)
            .start();
    try {
      byte[] output = p.getInputStream().readAllBytes();
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IOException(
            "taskset -p -c "
                + cpu
                + " "
                + tid
                + " failed: "
                + new String(output, StandardCharsets.UTF_8).trim());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while pinning to CPU " + cpu, e);
    } finally {
      p.destroy();
    }
    return cpu;
  }
}
