package dev.cachelab.middleware.testing;

import dev.cachelab.middleware.protocol.RespReplies;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Real redis-servers for a test class: some behind the middleware and one used directly, to compare
 * the middleware's answers with redis' own. Started and stopped by the test's thread.
 */
public final class RedisServers implements AutoCloseable {
  private final List<RedisProcess> behind = new ArrayList<>();
  private RedisProcess direct;

  /** Starts {@code count} servers for the middleware and one more used directly. */
  public static RedisServers start(int count) throws IOException {
    RedisServers servers = new RedisServers();
    try {
      for (int i = 0; i < count; i++) {
        servers.behind.add(RedisProcess.start());
      }
      servers.direct = RedisProcess.start();
    } catch (IOException | RuntimeException e) {
      servers.close();
      throw e;
    }
    return servers;
  }

  /** The servers behind the middleware, in {@code -m} order. */
  public List<RedisProcess> behind() {
    return behind;
  }

  /** The server used directly. */
  public RedisProcess direct() {
    return direct;
  }

  /** Empties every server ({@code FLUSHALL}). */
  public void flushAll() throws IOException {
    List<RedisProcess> all = new ArrayList<>(behind);
    all.add(direct);
    for (RedisProcess server : all) {
      try (RespClient client = new RespClient(server.port())) {
        String reply = client.call("FLUSHALL");
        if (!reply.equals(new String(RespReplies.OK, StandardCharsets.ISO_8859_1))) {
          throw new IOException("FLUSHALL on " + server.address() + ": " + reply);
        }
      }
    }
  }

  /** The middleware in redis mode in front of the servers, with {@code flags}. */
  public RunningMiddleware middleware(String... flags) throws IOException {
    List<String> args = new ArrayList<>(List.of("--protocol", "redis"));
    args.addAll(List.of(flags));
    return RunningMiddleware.startWithAddresses(
        behind.stream().map(RedisProcess::address).toList(), args.toArray(new String[0]));
  }

  @Override
  public void close() {
    behind.forEach(RedisProcess::close);
    if (direct != null) {
      direct.close();
    }
  }
}
