package dev.cachelab.middleware.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A real {@code redis-server} on a free loopback port (no persistence, no protected mode), started
 * and killed by a test.
 */
public final class RedisProcess implements AutoCloseable {
  private static final String BINARY = "/usr/bin/redis-server";
  private final int port;
  private final Process process;

  private RedisProcess(int port, Process process) {
    this.port = port;
    this.process = process;
  }

  /** Starts redis-server on a free port and waits until it accepts connections. */
  public static RedisProcess start() throws IOException {
    for (int attempt = 0; ; attempt++) {
      try {
        return startOn(FreePorts.next());
      } catch (IOException e) {
        if (attempt == 3) {
          throw e;
        }
      }
    }
  }

  /**
   * Starts redis-server on {@code port} (a server restarted where a killed one was) and waits until
   * it accepts connections.
   */
  public static RedisProcess startOn(int port) throws IOException {
    if (!Files.isExecutable(Path.of(BINARY))) {
      throw new IOException(BINARY + " not found: run `make deps`");
    }
    List<String> command =
        List.of(
            BINARY,
            "--port",
            "" + port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            System.getProperty("java.io.tmpdir"),
            "--loglevel",
            "warning");
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    RedisProcess redis = new RedisProcess(port, process);
    if (!redis.awaitListening()) {
      redis.close();
      throw new IOException("redis-server did not start on port " + port);
    }
    return redis;
  }

  private boolean awaitListening() {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (System.nanoTime() < deadline && process.isAlive()) {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return true;
      } catch (IOException notYet) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return false;
  }

  /** Sends a signal ({@code STOP}, {@code CONT}) to redis-server; waits for kill(1). */
  public void signal(String name) throws IOException {
    Signals.send(process, name);
  }

  public int port() {
    return port;
  }

  public String address() {
    return "127.0.0.1:" + port;
  }

  /** Kills redis-server (SIGKILL) and waits for it to exit. */
  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
