package dev.cachelab.middleware;

import dev.cachelab.middleware.config.ConfigException;
import dev.cachelab.middleware.config.MachineChecks;
import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.config.ServerTimeouts;
import dev.cachelab.middleware.config.ServersFile;
import dev.cachelab.middleware.routing.ServerSet;
import dev.cachelab.middleware.stats.StatsRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Re-reads the servers file on SIGHUP and when its contents change (checked every {@code
 * --servers-file-check-ms}; a mounted ConfigMap is changed in place by swapping a symbolic link, so
 * the contents are compared, not the modification time), and applies a changed server list. An
 * invalid file is refused with one log line and a counter; the servers in use keep serving. Runs on
 * its own daemon thread; the signal handler only wakes it, so a storm of signals costs one reload
 * per wake-up.
 */
final class ServersFileReloader implements Runnable {
  private static final List<ServersFileReloader> LISTENING = new CopyOnWriteArrayList<>();
  private static boolean signalHandled;
  private static boolean sighupIgnored;

  private final Path file;
  private final MiddlewareConfig config;
  private final ServerSet servers;
  private final StatsRegistry stats;
  private final Semaphore wake = new Semaphore(0);
  private final AtomicLong reloads = new AtomicLong();
  private final AtomicLong failedReloads = new AtomicLong();
  private volatile boolean running = true;
  private byte[] lastContents;
  // The file in use names a host that did not resolve: it is read again every period.
  private boolean unresolved;

  ServersFileReloader(MiddlewareConfig config, ServerSet servers, StatsRegistry stats) {
    this.file = config.serversFile();
    this.config = config;
    this.servers = servers;
    this.stats = stats;
    this.lastContents = contents();
  }

  /**
   * Reloads on SIGHUP from now on (the JVM's handler is installed once). A process started with
   * SIGHUP ignored (under nohup) cannot handle it: the JVM keeps it ignored, and this says so. Main
   * thread.
   */
  void listenForSighup() {
    LISTENING.add(this);
    boolean ignored;
    synchronized (ServersFileReloader.class) {
      if (!signalHandled) {
        SignalHandler previous =
            Signal.handle(new Signal("HUP"), signal -> LISTENING.forEach(r -> r.wake.release()));
        sighupIgnored = previous == SignalHandler.SIG_IGN;
        signalHandled = true;
      }
      ignored = sighupIgnored;
    }
    if (ignored) {
      System.err.println(
          "cachelab middleware: SIGHUP is ignored in this process (started under nohup?), so it"
              + " cannot ask for a reload of "
              + file
              + "; the file is still re-read within "
              + config.serversFileCheckMs()
              + " ms of a change (--servers-file-check-ms)");
    }
  }

  void stop() {
    running = false;
    LISTENING.remove(this);
    wake.release();
  }

  /** Reloads done (the file read and valid, whether or not it changed the server list). */
  long reloads() {
    return reloads.get();
  }

  /** Reloads refused (the file unreadable or invalid; the servers in use kept). */
  long failedReloads() {
    return failedReloads.get();
  }

  @Override
  public void run() {
    while (running) {
      boolean signalled;
      try {
        signalled = wake.tryAcquire(config.serversFileCheckMs(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (!running) {
        return;
      }
      wake.drainPermits(); // a storm of signals: one reload
      byte[] now = contents();
      boolean changed = !Arrays.equals(now, lastContents);
      if (signalled || changed || unresolved) {
        lastContents = now;
        reload(signalled || changed);
      }
    }
  }

  /**
   * Reads, checks and applies the file. A file naming a host that does not resolve (yet: a new
   * server's DNS record may come after the file) is refused, and tried again every period until it
   * resolves or the file changes; such a refusal is counted and logged once, not every period.
   *
   * @param fresh the file changed or a reload was asked for (not a retry of an unresolved host)
   */
  private void reload(boolean fresh) {
    ServersFile.Contents contents;
    try {
      contents = ServersFile.read(file);
      unresolved = false;
      // What start-up refuses, a reload refuses: a host that does not resolve, a server twice.
      try {
        MachineChecks.resolveServers("--servers-file: " + file, contents.servers());
      } catch (ConfigException e) {
        unresolved = !MachineChecks.allResolve(contents.servers());
        if (!fresh) {
          return; // a retry: counted and logged when the file was first read
        }
        throw e;
      }
    } catch (ConfigException e) {
      failedReloads.incrementAndGet();
      System.err.println(
          "cachelab middleware: reload refused, "
              + e.getMessage()
              + "; keeping the "
              + servers.current().size()
              + " servers and the timeouts in use");
      return;
    }
    reloads.incrementAndGet();
    List<String> list = contents.servers();
    ServerTimeouts timeouts = contents.timeouts(config);
    if (servers.apply(list, timeouts)) {
      stats.servers(servers.current().servers(), servers.current().health());
      System.err.println(
          "cachelab middleware: servers from "
              + file
              + ": "
              + String.join(" ", list)
              + ", backend timeout "
              + timeouts.backendTimeoutMs()
              + " ms, eject retry "
              + timeouts.ejectRetryMs()
              + " ms (server list "
              + servers.current().id()
              + ")");
    }
  }

  private byte[] contents() {
    try {
      return Files.readAllBytes(file);
    } catch (IOException | RuntimeException e) {
      return new byte[0];
    }
  }
}
