package dev.cachelab.middleware.testing;

import dev.cachelab.middleware.Middleware;
import dev.cachelab.middleware.config.ConfigParser;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** The middleware started in-process on a free port, for integration tests. */
public final class RunningMiddleware implements AutoCloseable {
  private final Middleware middleware;

  private RunningMiddleware(Middleware middleware) {
    this.middleware = middleware;
  }

  /**
   * Starts the middleware in front of {@code servers} with {@code -l 127.0.0.1 -p 0} and the extra
   * flags given (which must include {@code -t}; {@code -s false} unless they set {@code -s}).
   */
  public static RunningMiddleware start(List<MemcachedProcess> servers, String... flags)
      throws IOException {
    List<String> addresses = new ArrayList<>();
    for (MemcachedProcess server : servers) {
      addresses.add(server.address());
    }
    return startWithAddresses(addresses, flags);
  }

  public static RunningMiddleware startWithAddresses(List<String> servers, String... flags)
      throws IOException {
    List<String> args = new ArrayList<>(List.of("-l", "127.0.0.1", "-p", "0"));
    args.addAll(List.of(flags));
    args.add("-m");
    args.addAll(servers);
    return startWithFlags(args.subList(4, args.size()).toArray(new String[0]));
  }

  /**
   * Starts the middleware with {@code -l 127.0.0.1 -p 0} and {@code flags} (servers included), and
   * {@code -s false} (multi-key gets not sharded) unless {@code flags} set {@code -s}.
   */
  public static RunningMiddleware startWithFlags(String... flags) throws IOException {
    List<String> args = new ArrayList<>(List.of("-l", "127.0.0.1", "-p", "0"));
    args.addAll(List.of(flags));
    if (!args.contains("-s")) {
      args.addAll(4, List.of("-s", "false"));
    }
    Middleware middleware = new Middleware(ConfigParser.parse(args.toArray(new String[0])));
    middleware.start();
    return new RunningMiddleware(middleware);
  }

  public int port() throws IOException {
    return middleware.localAddress().getPort();
  }

  public Middleware middleware() {
    return middleware;
  }

  /** The value of {@code STAT <name>} in the middleware's {@code stats}, or -1 if it has none. */
  public long stat(String name) {
    String stats =
        new String(middleware.stats().statsReply(), java.nio.charset.StandardCharsets.US_ASCII);
    for (String line : stats.split("\r\n")) {
      if (line.startsWith("STAT " + name + " ")) {
        return Long.parseLong(line.substring(name.length() + 6));
      }
    }
    return -1;
  }

  public TextClient client() throws IOException {
    return new TextClient(port());
  }

  @Override
  public void close() {
    middleware.shutdown();
  }
}
