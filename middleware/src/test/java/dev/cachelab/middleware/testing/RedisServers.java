package dev.cachelab.middleware.testing;

import dev.cachelab.middleware.protocol.RespReplies;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real redis-servers for a test: some behind the middleware and one used directly, to compare the
 * middleware's answers with redis' own. Started and stopped by the test's thread: with {@link
 * #start} in a try-with-resources, or for a whole test class as a registered extension ({@link
 * #perClass}: started before the class, emptied before each test, stopped after the class).
 */
public final class RedisServers
    implements AutoCloseable, BeforeAllCallback, BeforeEachCallback, AfterAllCallback {
  private final int count;
  private final List<RedisProcess> behind = new ArrayList<>();
  private RedisProcess direct;

  private RedisServers(int count) {
    this.count = count;
  }

  /** Starts {@code count} servers for the middleware and one more used directly. */
  public static RedisServers start(int count) throws IOException {
    RedisServers servers = new RedisServers(count);
    servers.startAll();
    return servers;
  }

  /**
   * {@code count} servers behind the middleware and one used directly for each test of a class, as
   * a {@code @RegisterExtension} static field: nothing runs until the class starts.
   */
  public static RedisServers perClass(int count) {
    return new RedisServers(count);
  }

  private void startAll() throws IOException {
    try {
      for (int i = 0; i < count; i++) {
        behind.add(RedisProcess.start());
      }
      direct = RedisProcess.start();
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    startAll();
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    flushAll();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
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
    behind.clear();
    if (direct != null) {
      direct.close();
      direct = null;
    }
  }
}
