package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The cases where the middleware's validation must be memcached 1.6's, compared byte for byte with
 * a real memcached (its own server, fresh for each case) rather than with a remembered reply; and
 * multi-get lines as long as memcached takes them.
 */
class MemcachedParityIT {
  private static final List<String> CASES =
      List.of(
          "flush_all -1\r\n",
          "flush_all 0 noreply\r\nversion\r\n",
          "set a 4294967296 0 1\r\nx\r\nget a\r\n",
          "set a 4294967295 0 1\r\nx\r\nget a\r\n",
          "set a 0 -1 1\r\nx\r\nget a\r\n",
          "set a 0 0 1 norepl\r\nx\r\nget a\r\n",
          "incr a 1 norepl\r\n",
          "gat 0\r\n",
          "gats 10\r\n",
          "gat\r\n",
          "version foo bar\r\n",
          "quit extra\r\n",
          "verbosity noreply\r\nversion\r\n",
          "verbosity 1 2\r\n",
          "stats nonsense\r\n",
          "stats noreply\r\n",
          "touch a -1\r\n",
          "delete a 0\r\n",
          // noreply is read before the arguments are checked: their error is not sent either
          "delete a junk noreply\r\nversion\r\n",
          "delete a 0 0 noreply\r\nversion\r\n",
          "flush_all 0 junk noreply\r\nversion\r\n",
          "flush_all junk noreply\r\nversion\r\n",
          "incr a x noreply\r\ntouch a x noreply\r\nverbosity x noreply\r\nversion\r\n",
          // memcached ends a command line at a NUL: the middleware must neither forward the rest
          // (the server would answer it too, a reply the next request would get) nor route on it
          "set a\0b 0 0 1\r\nx\r\nget a\r\n",
          "set a 0 0 1\0junk\r\nx\r\nget a\r\n",
          "get a\0 b\r\nget a\r\n",
          "ms a\0 1\r\nx\r\nmn\r\n");

  @Test
  void namedValidationCasesMatchMemcached() throws Exception {
    for (String input : CASES) {
      try (MemcachedProcess reference = MemcachedProcess.start();
          MemcachedProcess backend = MemcachedProcess.start();
          RunningMiddleware mw =
              RunningMiddleware.start(List.of(backend), "-t", "1", "--admin-commands", "true")) {
        String expected = exchange(reference.port(), input);
        String actual = exchange(mw.port(), input);
        assertThat(actual).as("%s (memcached: %s)", input, expected).isEqualTo(expected);
      }
    }
  }

  private static final String KEY_250 = "k".repeat(250);

  /** A long pipeline of quiet commands, some answered (misses, failures) and some not. */
  private static final String QUIET_PIPELINE =
      ("ms a 1 q\r\nx\r\nmg a v q\r\nmg missing v q\r\nmd missing q\r\nma missing q\r\n"
              + "ma a q\r\nmn\r\nmd a q\r\nmg a q k\r\nmn\r\n")
          .repeat(60);

  private static final List<String> META_CASES =
      List.of(
          "mn\r\n",
          "ms k 2\r\nhi\r\nmg k v\r\n",
          "ms k 2 T60 F5\r\nhi\r\nmg k v f t\r\n",
          "ms k 2 q\r\nhi\r\nmg k v q\r\nmg missing v q\r\nmn\r\n",
          "mg missing v\r\nmg missing\r\n",
          "ms k 2\r\nhi\r\nmg k\r\nmg k s v\r\n",
          "ms k 2\r\nhi\r\nmd k q\r\nmn\r\nmg k v\r\n",
          "md k\r\n",
          "ms n 1\r\n5\r\nma n\r\nma n v\r\nma n q\r\nmg n v\r\nmn\r\n",
          "ma missing\r\n",
          "me k\r\n",
          "mg\r\n",
          "ms k\r\n",
          "ms k 2 Z\r\nhi\r\nmn\r\n",
          "mg k O123 k v\r\n",
          // Found by probing with malformed and unusual requests.
          "ms n 2\r\n10\r\nma n q v\r\nmn\r\nmg n v\r\n",
          "ma n q v\r\nmn\r\n",
          "ms n 2\r\nab\r\nma n q v\r\nmn\r\n",
          "me k q\r\nmn\r\n",
          "me\r\n",
          "ms k 2 T60 F5\r\nhi\r\nmg k v f t s k O9 c\r\n",
          "ms k 2 I\r\nhi\r\nms k 2 MA q\r\nzz\r\nms k 2 ME q\r\nyy\r\nmg k v\r\nmn\r\n",
          "ms " + KEY_250 + " 1\r\nx\r\nmg " + KEY_250 + " v k\r\nmd " + KEY_250 + " q\r\nmn\r\n",
          "ms YmluAGtleQ== 3 b\r\nabc\r\nmg YmluAGtleQ== b v k\r\nmg bin v\r\n",
          "ms k 2 C99 q\r\nhi\r\nmn\r\n",
          // a flag is a token's first byte: qx, q1, qq are the quiet flag; twice is an error
          "ms k 2 q1\r\nhi\r\nmg k v qx\r\nmg missing v qq\r\nmd missing qz\r\nmn\r\n",
          "ms k 1 q q\r\nx\r\nmg k v q k q\r\nmg k Z q q\r\nmn\r\n",
          "md k q q\r\nma k Z\r\nmg k \u00ff\r\nmg k O1 O2 v\r\nmn\r\n",
          "mg k" + " v".repeat(18) + "\r\nmd k" + " q".repeat(18) + "\r\nmn\r\n",
          QUIET_PIPELINE);

  @Test
  void metaCommandsAreForwardedAsMemcachedAnswersThem() throws Exception {
    for (int servers : new int[] {1, 3}) {
      for (String input : META_CASES) {
        if (servers > 1 && input.contains(" C99")) {
          continue; // refused while writes go to several servers (ClientIsolationIT)
        }
        List<MemcachedProcess> backends = MemcachedProcess.startMany(servers);
        try (MemcachedProcess reference = MemcachedProcess.start();
            RunningMiddleware mw = RunningMiddleware.start(backends, "-t", "2")) {
          String expected = exchange(reference.port(), input);
          String actual = exchange(mw.port(), input);
          assertThat(actual)
              .as("%s with %d servers (memcached: %s)", input, servers, expected)
              .isEqualTo(expected);
        } finally {
          backends.forEach(MemcachedProcess::close);
        }
      }
    }
  }

  /**
   * A base64 key (the {@code b} flag) names the item of the decoded key: under hash routing the
   * request goes to that key's servers. Placed by its base64 text, an {@code mg} missed what a
   * {@code set} stored, and an {@code md} deleted nothing (a later {@code mg} read the old value).
   */
  @ParameterizedTest
  @ValueSource(strings = {"-t 2", "-t 2 --event-loops 2", "-t 1 --worker-batch 16 --event-loops 2"})
  void base64KeysArePlacedByTheKeyTheyName(String mode) throws Exception {
    StringBuilder input = new StringBuilder();
    for (int k = 0; k < 12; k++) {
      String key = "key" + k;
      String base64 =
          java.util.Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.US_ASCII));
      input
          .append("set ")
          .append(key)
          .append(" 0 0 2\r\nv")
          .append(k % 10)
          .append("\r\nmg ")
          .append(base64)
          .append(" b v\r\nme ")
          .append(base64)
          .append(" b\r\nms ")
          .append(base64)
          .append(" 2 b\r\nw")
          .append(k % 10)
          .append("\r\nget ")
          .append(key)
          .append("\r\nmd ")
          .append(base64)
          .append(" b q\r\nmg ")
          .append(key)
          .append(" v\r\nmn\r\n");
    }
    List<MemcachedProcess> backends = MemcachedProcess.startMany(3);
    List<String> flags = new java.util.ArrayList<>(List.of(mode.split(" ")));
    flags.addAll(List.of("--routing", "hash"));
    try (MemcachedProcess reference = MemcachedProcess.start();
        RunningMiddleware mw = RunningMiddleware.start(backends, flags.toArray(new String[0]))) {
      String expected = exchange(reference.port(), input.toString());
      String actual = exchange(mw.port(), input.toString());
      assertThat(actual.replaceAll("ME (\\S+) .*", "ME $1"))
          .as(mode)
          .isEqualTo(expected.replaceAll("ME (\\S+) .*", "ME $1"));
      assertThat(expected)
          .as("memcached finds the key by its base64 form")
          .contains("VA 2\r\nv3\r\n");
    } finally {
      backends.forEach(MemcachedProcess::close);
    }
  }

  @Test
  void statsGroupsComeFromServerZero() throws Exception {
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw = RunningMiddleware.start(List.of(server), "-t", "1");
        TextClient client = mw.client()) {
      for (String group : List.of("items", "slabs", "settings", "sizes", "conns")) {
        String reply = client.call("stats " + group + "\r\n");
        assertThat(reply).as(group).endsWith("END\r\n");
      }
      assertThat(client.call("stats settings\r\n")).contains("STAT maxconns ");
      assertThat(client.call("stats\r\n")).contains("STAT buffered_bytes ");
    }
  }

  @Test
  void longMultiGetLinesAreServedAsMemcachedServesThem() throws Exception {
    for (int servers : new int[] {1, 3}) {
      List<MemcachedProcess> backends = MemcachedProcess.startMany(servers);
      try (RunningMiddleware mw = RunningMiddleware.start(backends, "-t", "2", "-s", "true");
          TextClient client = mw.client()) {
        for (int keys : new int[] {300, 4_000}) {
          StringBuilder line = new StringBuilder("get");
          StringBuilder expected = new StringBuilder();
          for (int k = 0; k < keys; k++) {
            String key = String.format("k%05d", k) + "x".repeat(238); // 244 bytes
            line.append(' ').append(key);
            if (k % 100 == 0) {
              assertThat(client.call("set " + key + " 0 0 1\r\nv\r\n")).isEqualTo("STORED\r\n");
              expected.append("VALUE ").append(key).append(" 0 1\r\nv\r\n");
            }
          }
          expected.append("END\r\n");
          assertThat(client.call(line.append("\r\n").toString()))
              .as("%d keys over %d servers", keys, servers)
              .isEqualTo(expected.toString());
        }
        assertThat(client.call("version\r\n")).startsWith("VERSION ");
      } finally {
        backends.forEach(MemcachedProcess::close);
      }
    }
  }

  /** Sends the input, reads until the server is quiet for 300 ms or closes. */
  private static String exchange(int port, String input) throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      socket.setSoTimeout(300);
      socket.getOutputStream().write(input.getBytes(StandardCharsets.ISO_8859_1));
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[4096];
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (System.nanoTime() < deadline) {
        int n;
        try {
          n = in.read(buf);
        } catch (SocketTimeoutException quiet) {
          break;
        }
        if (n < 0) {
          out.write("<closed>".getBytes(StandardCharsets.US_ASCII));
          break;
        }
        out.write(buf, 0, n);
      }
      return out.toString(StandardCharsets.ISO_8859_1).replaceAll("VERSION [^\r]*", "VERSION x");
    }
  }
}
