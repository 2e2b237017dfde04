package dev.cachelab.middleware.testing;

import java.io.IOException;
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
    return LoopbackServer.onFreePort(RedisProcess::startOn);
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
    Process process = LoopbackServer.launch(command);
    LoopbackServer.awaitListening(process, port, "redis-server");
    return new RedisProcess(port, process);
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
    LoopbackServer.kill(process);
  }
}
