package dev.cachelab.middleware.config;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The checks of a {@link MiddlewareConfig} that depend on this machine, run before anything starts
 * so that a bad value fails with a {@link ConfigException} naming its flag instead of an exception
 * from deep inside the start: {@code -l} and {@code --metrics-address} resolve to an address of
 * this machine, every {@code -m} host resolves, and {@code --stats-dir} can be created and written.
 * Main thread only.
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
    for (String server : config.servers()) {
      String host = MiddlewareConfig.parseServer(server).getHostString();
      try {
        InetAddress.getByName(host);
      } catch (UnknownHostException e) {
        throw new ConfigException("-m: " + server + " (cannot resolve host " + host + ")");
      }
    }
    if (config.statsDir() != null) {
      requireWritableFolder("--stats-dir", config.statsDir());
    }
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
