package dev.cachelab.middleware.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;

/**
 * A server binary started on a loopback port by a test (memcached, redis-server): its start on a
 * free port with retries, the wait until it listens, its kill. Called from the test's thread.
 */
final class LoopbackServer {
  private static final int START_ATTEMPTS = 4;
  private static final long LISTEN_TIMEOUT_NANOS = 10_000_000_000L;

  /** What starts a server on a given port, or fails with IOException. */
  interface StartOn<T> {
    T start(int port) throws IOException;
  }

  private LoopbackServer() {}

  /** {@code startOn} a free port; another free port when that fails, up to four in all. */
  static <T> T onFreePort(StartOn<T> startOn) throws IOException {
    for (int attempt = 1; ; attempt++) {
      try {
        return startOn.start(FreePorts.next());
      } catch (IOException e) {
        if (attempt == START_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /** Starts {@code command} (its error output merged into its output). */
  static Process launch(List<String> command) throws IOException {
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /**
   * Waits up to 10 s until {@code port} accepts a connection; IOException naming {@code name} when
   * {@code process} exits first or the time runs out (the process is then killed).
   */
  static void awaitListening(Process process, int port, String name) throws IOException {
    long deadline = System.nanoTime() + LISTEN_TIMEOUT_NANOS;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(name + " exited with " + process.exitValue() + " on port " + port);
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    kill(process);
    throw new IOException(name + " did not start on port " + port);
  }

  /** Kills {@code process} (SIGKILL; nothing if null) and waits for it to exit. */
  static void kill(Process process) {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
