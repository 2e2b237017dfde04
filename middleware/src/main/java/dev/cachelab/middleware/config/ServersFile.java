package dev.cachelab.middleware.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A servers file ({@code --servers-file}): the same {@code host:port} entries as {@code -m}, one a
 * line, and optionally timeouts as {@code name=value} lines ({@code backend-timeout-ms=250}, {@code
 * eject-retry-ms=1000}: the flags of the same names, with their ranges), which override the flags
 * while they are in the file; blank lines and lines starting with {@code #} are skipped. Read at
 * start and at each reload; any thread (no state).
 */
public final class ServersFile {
  private ServersFile() {}

  /** The settings a servers file may hold, by name, with their ranges (as the flags'). */
  private static final Map<String, long[]> SETTINGS =
      Map.of(
          "backend-timeout-ms", new long[] {1, 600_000},
          "eject-retry-ms", new long[] {1, 3_600_000});

  /**
   * What a servers file holds: its servers and the timeouts it sets (-1: not set, the flag's value
   * holds).
   */
  public record Contents(List<String> servers, int backendTimeoutMs, int ejectRetryMs) {
    public Contents {
      servers = List.copyOf(servers);
    }

    /** The file's timeouts, or the flags' where it sets none. */
    public ServerTimeouts timeouts(MiddlewareConfig config) {
      return new ServerTimeouts(
          backendTimeoutMs >= 0 ? backendTimeoutMs : config.backendTimeoutMs(),
          ejectRetryMs >= 0 ? ejectRetryMs : config.ejectRetryMs());
    }
  }

  /**
   * Reads and checks the file.
   *
   * @throws ConfigException naming the file (and the line) and what is wrong with it
   */
  public static Contents read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      throw new ConfigException(
          "--servers-file: "
              + file
              + ": cannot read it ("
              + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : ": " + e.getMessage())
              + ")");
    }
    return parse(file, text);
  }

  /** The servers and settings in {@code text}, the contents of {@code file}. */
  static Contents parse(Path file, String text) {
    List<String> servers = new ArrayList<>();
    Map<String, Integer> settings = new HashMap<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String where = "--servers-file: " + file + " line " + (i + 1) + ": ";
      if (line.indexOf('=') >= 0) {
        setting(where, line, settings);
        continue;
      }
      if (line.chars().anyMatch(Character::isWhitespace)) {
        throw new ConfigException(where + line + " (expected: one host:port a line)");
      }
      try {
        MiddlewareConfig.parseServer(line);
      } catch (ConfigException e) {
        throw new ConfigException(where + line + " (expected: host:port with port 1..65535)");
      }
      String key = MiddlewareConfig.serverKey(line);
      for (String earlier : servers) {
        if (MiddlewareConfig.serverKey(earlier).equals(key)) {
          throw new ConfigException(
              where + MiddlewareConfig.twice(earlier, line) + " (expected: each server once)");
        }
      }
      servers.add(line);
    }
    if (servers.isEmpty() || servers.size() > MiddlewareConfig.MAX_SERVERS) {
      throw new ConfigException(
          "--servers-file: "
              + file
              + ": "
              + servers.size()
              + " servers (expected: 1.."
              + MiddlewareConfig.MAX_SERVERS
              + ", one host:port a line)");
    }
    return new Contents(
        servers,
        settings.getOrDefault("backend-timeout-ms", -1),
        settings.getOrDefault("eject-retry-ms", -1));
  }

  /** Parses a {@code name=value} line into {@code settings}. */
  private static void setting(String where, String line, Map<String, Integer> settings) {
    int eq = line.indexOf('=');
    String name = line.substring(0, eq).strip();
    String value = line.substring(eq + 1).strip();
    long[] range = SETTINGS.get(name);
    if (range == null) {
      throw new ConfigException(
          where + line + " (expected: host:port, backend-timeout-ms=<ms> or eject-retry-ms=<ms>)");
    }
    if (settings.containsKey(name)) {
      throw new ConfigException(where + name + " given twice (expected: each setting once)");
    }
    long parsed;
    try {
      parsed = Long.parseLong(value);
    } catch (NumberFormatException e) {
      parsed = Long.MIN_VALUE;
    }
    if (parsed < range[0] || parsed > range[1]) {
      throw new ConfigException(
          where + line + " (expected: " + name + "=" + range[0] + ".." + range[1] + ")");
    }
    settings.put(name, (int) parsed);
  }
}
