package dev.cachelab.middleware.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A real {@code memcached} on a free loopback port, started and killed by a test. */
public final class MemcachedProcess implements AutoCloseable {
  private static final String BINARY = "/usr/bin/memcached";
  private final int port;
  private Process process;

  private MemcachedProcess(int port) {
    this.port = port;
  }

  /** Starts memcached on a free port and waits until it accepts connections. */
  public static MemcachedProcess start() throws IOException {
    return LoopbackServer.onFreePort(MemcachedProcess::startOn);
  }

  /** Starts {@code count} memcached servers; when one fails, those started are stopped. */
  public static List<MemcachedProcess> startMany(int count) throws IOException {
    List<MemcachedProcess> servers = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        servers.add(start());
      }
    } catch (IOException | RuntimeException e) {
      servers.forEach(MemcachedProcess::close);
      throw e;
    }
    return servers;
  }

  /**
   * Starts memcached on {@code port} (a server that was down when the middleware started, or one
   * restarted where a killed one was) and waits until it accepts connections.
   */
  public static MemcachedProcess startOn(int port) throws IOException {
    MemcachedProcess memcached = new MemcachedProcess(port);
    memcached.restart();
    return memcached;
  }

  /** (Re)starts memcached on the same port. */
  public void restart() throws IOException {
    if (!Files.isExecutable(Path.of(BINARY))) {
      throw new IOException(BINARY + " not found: run `make deps`");
    }
    List<String> command = new ArrayList<>(List.of(BINARY, "-l", "127.0.0.1", "-p", "" + port));
    command.addAll(List.of("-U", "0", "-m", "64", "-t", "1"));
    if ("root".equals(System.getProperty("user.name"))) {
      command.addAll(List.of("-u", "root"));
    }
    process = LoopbackServer.launch(command);
    LoopbackServer.awaitListening(process, port, "memcached");
  }

  /** Kills memcached (SIGKILL) and waits for it to exit. */
  public void kill() {
    LoopbackServer.kill(process);
  }

  /** Sends a signal ({@code STOP}, {@code CONT}) to memcached with kill(1); waits for kill. */
  public void signal(String name) throws IOException {
    Signals.send(process, name);
  }

  public int port() {
    return port;
  }

  public String address() {
    return "127.0.0.1:" + port;
  }

  @Override
  public void close() {
    kill();
  }
}
