package dev.cachelab.middleware.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Signals to server processes started by tests; called from the test thread. */
final class Signals {
  /** How long a stop may take to reach every thread of a process on a loaded machine. */
  private static final long STOP_DEADLINE_NANOS = 10_000_000_000L;

  private Signals() {}

  /**
   * Sends a signal ({@code STOP}, {@code CONT}) with kill(1) if the process lives; waits for kill
   * and, for {@code STOP}, until every thread of the process shows as stopped. kill(2) returns once
   * the signal is queued; a thread running on another core still answers a request or two before it
   * stops, and a test that reads "no answer" right after the signal would see one.
   */
  static void send(Process process, String name) throws IOException {
    if (process == null || !process.isAlive()) {
      return;
    }
    try {
      new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
          .inheritIO()
          .start()
          .waitFor();
      if (name.equals("STOP")) {
        awaitStopped(process);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void awaitStopped(Process process) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + STOP_DEADLINE_NANOS;
    Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
    while (process.isAlive() && !allStopped(tasks)) {
      if (System.nanoTime() > deadline) {
        throw new IOException("process " + process.pid() + " did not stop within 10 s of SIGSTOP");
      }
      Thread.sleep(1);
    }
  }

  /** True when every thread's state in /proc is T (stopped) or t (traced). */
  private static boolean allStopped(Path tasks) throws IOException {
    List<Path> threads;
    try (Stream<Path> list = Files.list(tasks)) {
      threads = list.toList();
    } catch (IOException e) {
      return true; // the process is gone
    }
    for (Path thread : threads) {
      String stat;
      try {
        stat = Files.readString(thread.resolve("stat"));
      } catch (IOException e) {
        continue; // the thread exited
      }
      // The state follows the command name in parentheses, which may itself hold ')'.
      int afterName = stat.lastIndexOf(')');
      char state =
          afterName >= 0 && afterName + 2 < stat.length() ? stat.charAt(afterName + 2) : '?';
      if (state != 'T' && state != 't') {
        return false;
      }
    }
    return true;
  }
}
