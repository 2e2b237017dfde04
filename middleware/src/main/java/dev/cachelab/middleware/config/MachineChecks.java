package dev.cachelab.middleware.config;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The checks of a {@link MiddlewareConfig} that depend on this machine, run before anything starts
 * so that a bad value fails with a {@link ConfigException} naming its flag instead of an exception
 * from deep inside the start: {@code -l} and {@code --metrics-address} resolve to an address of
 * this machine, every {@code -m} host resolves (and no two servers are one), and {@code
 * --stats-dir} can be created and written. Main thread only, but {@link #resolveServers}, which the
 * servers file's reloader calls too.
 */
public final class MachineChecks {
  private MachineChecks() {}

  /**
   * Runs every check.
   *
   * @throws ConfigException naming the first flag whose value does not fit this machine
   */
  public static void check(MiddlewareConfig config) {
    requireLocalAddress("-l", config.listenAddress());
    if (config.metricsPort() != 0) {
      requireLocalAddress("--metrics-address", config.metricsAddress());
    }
    resolveServers(
        config.serversFile() == null ? "-m" : "--servers-file: " + config.serversFile(),
        config.servers());
    if (config.statsDir() != null) {
      requireWritableFolder("--stats-dir", config.statsDir());
    }
  }

  /**
   * Resolves every server's host as a connection to it does (its first address) and refuses a host
   * that does not resolve and a server that is another one's address and port under another
   * spelling ({@code 127.0.0.1:11211} and {@code localhost:11211}): every write would run twice on
   * it. Called at start for {@code -m} (or the servers file) and at each reload of the servers
   * file, on the calling thread (a name lookup may block).
   *
   * @param flag what the message names ({@code -m}, or {@code --servers-file: <file>})
   * @throws ConfigException naming the server
   */
  public static void resolveServers(String flag, List<String> servers) {
    Map<String, String> byAddress = new HashMap<>();
    for (String server : servers) {
      InetSocketAddress parsed = MiddlewareConfig.parseServer(server);
      String host = parsed.getHostString();
      InetAddress address;
      try {
        address = InetAddress.getByName(host);
      } catch (UnknownHostException e) {
        throw new ConfigException(flag + ": " + server + " (cannot resolve host " + host + ")");
      }
      String resolved = address.getHostAddress() + " port " + parsed.getPort();
      String earlier = byAddress.putIfAbsent(resolved, server);
      if (earlier != null) {
        throw new ConfigException(
            flag
                + ": "
                + server
                + " is "
                + earlier
                + " again, both "
                + resolved
                + " (expected: each server once)");
      }
    }
  }

  /** Whether every server's host resolves now (on the calling thread). */
  public static boolean allResolve(List<String> servers) {
    for (String server : servers) {
      try {
        InetAddress.getByName(MiddlewareConfig.parseServer(server).getHostString());
      } catch (UnknownHostException e) {
        return false;
      }
    }
    return true;
  }

  /** The address {@code host} names, which must be the wildcard, a loopback or an interface's. */
  static InetAddress requireLocalAddress(String flag, String host) {
    InetAddress address;
    try {
      address = InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new ConfigException(
          flag + ": " + host + " (expected: an address of this machine; cannot resolve it)");
    }
    boolean local;
    try {
      local =
          address.isAnyLocalAddress()
              || address.isLoopbackAddress()
              || NetworkInterface.getByInetAddress(address) != null;
    } catch (SocketException e) {
      local = false;
    }
    if (!local) {
      throw new ConfigException(
          flag
              + ": "
              + host
              + " (expected: an address of this machine; no interface has "
              + address.getHostAddress()
              + ")");
    }
    return address;
  }

  /** Creates {@code folder} if needed and checks that a file can be written in it. */
  static void requireWritableFolder(String flag, Path folder) {
    try {
      Files.createDirectories(folder);
      Path probe = Files.createTempFile(folder, ".write-check", "");
      Files.delete(probe);
    } catch (IOException e) {
      throw new ConfigException(
          flag + ": " + folder + " (expected: a folder this process can write; " + reason(e) + ")");
    }
  }

  private static String reason(IOException e) {
    if (e instanceof FileAlreadyExistsException f) {
      return f.getFile() + " exists and is not a folder";
    }
    if (e instanceof NoSuchFileException f) {
      return "cannot create " + f.getFile();
    }
    if (e instanceof AccessDeniedException f) {
      return "permission denied on " + f.getFile();
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason().toLowerCase(java.util.Locale.ROOT) + " on " + f.getFile();
    }
    return String.valueOf(e.getMessage());
  }
}
