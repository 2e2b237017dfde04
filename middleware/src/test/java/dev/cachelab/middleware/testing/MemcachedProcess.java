package dev.cachelab.middleware.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
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
    for (int attempt = 0; ; attempt++) {
      MemcachedProcess memcached = new MemcachedProcess(FreePorts.next());
      try {
        memcached.restart();
        return memcached;
      } catch (IOException e) {
        memcached.close();
        if (attempt == 3) {
          throw e;
        }
      }
    }
  }

  /**
   * Starts memcached on {@code port} (a server that was down when the middleware started, or one
   * restarted where a killed one was) and waits until it accepts connections.
   */
  public static MemcachedProcess startOn(int port) throws IOException {
    MemcachedProcess memcached = new MemcachedProcess(port);
    try {
      memcached.restart();
    } catch (IOException e) {
      memcached.close();
      throw e;
    }
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
    process = new ProcessBuilder(command).redirectErrorStream(true).start();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException("memcached exited with " + process.exitValue() + " on port " + port);
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        sleep(20);
      }
    }
    throw new IOException("memcached did not start on port " + port);
  }

  /** Kills memcached (SIGKILL) and waits for it to exit. */
  public void kill() {
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
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

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
