package dev.cachelab.middleware.testing;

import java.io.IOException;

/** Signals to server processes started by tests. */
final class Signals {
  private Signals() {}

  /**
   * Sends a signal ({@code STOP}, {@code CONT}) with kill(1) if the process lives; waits for kill.
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
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
