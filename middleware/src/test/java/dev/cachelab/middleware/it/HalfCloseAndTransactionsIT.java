package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RedisProcess;
import dev.cachelab.middleware.testing.RespClient;
import dev.cachelab.middleware.testing.RunningMiddleware;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client that half-closes its connection after its requests (as {@code printf ... | nc -N} does)
 * gets every reply before the middleware closes; a redis {@code MULTI}, which the middleware does
 * not support, closes the connection so that the transaction's commands never run outside it.
 */
class HalfCloseAndTransactionsIT {

  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void aHalfClosedMemcachedClientGetsTheRepliesToWhatItSent(int eventLoops) throws Exception {
    List<MemcachedProcess> servers = MemcachedProcess.startMany(2);
    try (RunningMiddleware mw =
        RunningMiddleware.start(servers, "-t", "2", "--event-loops", "" + eventLoops)) {
      assertThat(sendAndHalfClose(mw.port(), "set a 0 0 5\r\nhello\r\n")).isEqualTo("STORED\r\n");
      assertThat(sendAndHalfClose(mw.port(), "get a\r\n"))
          .isEqualTo("VALUE a 0 5\r\nhello\r\nEND\r\n");
      assertThat(sendAndHalfClose(mw.port(), "set z 0 0 1\r\nq\r\nget z\r\n"))
          .isEqualTo("STORED\r\nVALUE z 0 1\r\nq\r\nEND\r\n");
      assertThat(sendAndHalfClose(mw.port(), "version\r\nget a\r\nget a"))
          .as("an incomplete last request is dropped")
          .startsWith("VERSION ")
          .endsWith("\r\nVALUE a 0 5\r\nhello\r\nEND\r\n");
    } finally {
      servers.forEach(MemcachedProcess::close);
    }
  }

  @ParameterizedTest(name = "--event-loops {0}")
  @ValueSource(ints = {0, 2})
  void aHalfClosedRedisClientGetsTheRepliesToWhatItSent(int eventLoops) throws Exception {
    String[] flags = {
      "--protocol", "redis", "-t", "2", "-s", "false", "--event-loops", "" + eventLoops
    };
    try (RedisProcess redis = RedisProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.startWithAddresses(List.of(redis.address()), flags)) {
      assertThat(sendAndHalfClose(mw.port(), "SET a hello\r\nGET a\r\n"))
          .isEqualTo("+OK\r\n$5\r\nhello\r\n");
    }
  }

  @Test
  void multiClosesTheConnectionSoThatNoCommandRunsOutsideTheTransaction() throws Exception {
    try (RedisProcess redis = RedisProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.startWithAddresses(
                List.of(redis.address()), "--protocol", "redis", "-t", "2")) {
      String replies = sendAndHalfClose(mw.port(), "MULTI\r\nSET tx 1\r\nINCR tx\r\nEXEC\r\n");
      assertThat(replies).startsWith("-ERR MULTI is not supported").doesNotContain("+OK");
      try (RespClient client = new RespClient(mw.port())) {
        assertThat(client.call("GET", "tx"))
            .as("nothing of the transaction ran")
            .isEqualTo("$-1\r\n");
        client.send("multi\r\n");
        assertThat(client.readReply()).startsWith("-ERR MULTI is not supported");
        assertThat(client.closedByPeer()).isTrue();
      }
    }
  }

  /** Sends {@code requests}, shuts the socket's output down and reads until the peer closes. */
  private static String sendAndHalfClose(int port, String requests) throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(requests.getBytes(StandardCharsets.ISO_8859_1));
      socket.shutdownOutput();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream replies = new ByteArrayOutputStream();
      byte[] chunk = new byte[4096];
      int n;
      while ((n = in.read(chunk)) > 0) {
        replies.write(chunk, 0, n);
      }
      return replies.toString(StandardCharsets.ISO_8859_1);
    }
  }
}
