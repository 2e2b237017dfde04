package dev.cachelab.middleware.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A servers file ({@code --servers-file}): the same {@code host:port} entries as {@code -m}, one a
 * line; blank lines and lines starting with {@code #} are skipped. Read at start and at each
 * reload; any thread (no state).
 */
public final class ServersFile {
  private ServersFile() {}

  /**
   * Reads and checks the file.
   *
   * @throws ConfigException naming the file (and the line) and what is wrong with it
   */
  public static List<String> read(Path file) {
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

  /** The servers listed in {@code text}, the contents of {@code file}. */
  static List<String> parse(Path file, String text) {
    List<String> servers = new ArrayList<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String where = "--servers-file: " + file + " line " + (i + 1) + ": ";
      if (line.chars().anyMatch(Character::isWhitespace)) {
        throw new ConfigException(where + line + " (expected: one host:port a line)");
      }
      try {
        MiddlewareConfig.parseServer(line);
      } catch (ConfigException e) {
        throw new ConfigException(where + line + " (expected: host:port with port 1..65535)");
      }
      if (servers.contains(line)) {
        throw new ConfigException(where + line + " given twice (expected: each server once)");
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
    return List.copyOf(servers);
  }
}
