package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Bounded memory: clients that hold partial requests or half lines, or never read their replies,
 * cost at most the buffer budget and their own connection; a good client keeps being served and the
 * process stays up; buffers are given back; idle connections are closed after the timeout.
 */
class MemoryBoundsIT {
  private static final long BUDGET_BYTES = 4L << 20;

  @Test
  void slowAndHalfLineClientsAgainstASmallBudget() throws Exception {
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(
                List.of(server), "-t", "2", "--buffer-budget-bytes", "" + BUDGET_BYTES);
        TextClient good = mw.client()) {
      List<Socket> bad = new ArrayList<>();
      try {
        byte[] partialValue = new byte[300_000];
        Arrays.fill(partialValue, (byte) 'x');
        byte[] halfLine = new byte[60_000];
        Arrays.fill(halfLine, (byte) 'k');
        for (int i = 0; i < 48; i++) {
          // A partial 1 MB set held open, then a 60,000-byte line without its newline.
          bad.add(sendAndHold(mw.port(), ascii("set big" + i + " 0 0 1000000\r\n"), partialValue));
          bad.add(sendAndHold(mw.port(), ascii("get "), halfLine));
          if (i % 8 == 0) {
            assertGoodClientServed(good, i);
            assertThat(stat(good, "buffered_bytes")).isLessThanOrEqualTo(BUDGET_BYTES);
          }
        }
        Thread.sleep(500);
        assertGoodClientServed(good, 1000);
        assertThat(stat(good, "buffered_bytes")).isLessThanOrEqualTo(BUDGET_BYTES);
        assertThat(stat(good, "budget_closed_connections"))
            .as("closed past the budget")
            .isPositive();
      } finally {
        for (Socket s : bad) {
          s.close();
        }
      }
      // Closed clients give their buffers back.
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (stat(good, "buffered_bytes") > 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(stat(good, "buffered_bytes")).isZero();
      assertGoodClientServed(good, 2000);
    }
  }

  @Test
  void clientThatNeverReadsIsStoppedAtItsHighWaterMark() throws Exception {
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw = RunningMiddleware.start(List.of(server), "-t", "4");
        TextClient good = mw.client()) {
      byte[] value = new byte[500 * 1024];
      Arrays.fill(value, (byte) 'v');
      good.send(
          "set large 0 0 "
              + value.length
              + "\r\n"
              + new String(value, StandardCharsets.ISO_8859_1)
              + "\r\n");
      assertThat(good.readLine()).isEqualTo("STORED\r\n");
      try (Socket reader = new Socket()) {
        reader.setReceiveBufferSize(4096);
        reader.connect(new InetSocketAddress("127.0.0.1", mw.port()), 5_000);
        OutputStream out = reader.getOutputStream();
        byte[] gets = ascii("get large\r\n".repeat(4_000));
        Thread writer =
            new Thread(
                () -> {
                  try {
                    out.write(gets);
                    out.flush();
                  } catch (IOException e) {
                    // the middleware may stop reading; the socket closes at the end
                  }
                },
                "never-reading-client");
        writer.setDaemon(true);
        writer.start();
        long maxBuffered = 0;
        for (int i = 0; i < 20; i++) {
          Thread.sleep(100);
          assertGoodClientServed(good, i);
          maxBuffered = Math.max(maxBuffered, stat(good, "buffered_bytes"));
        }
        // High-water mark (2 MiB) plus one reply, rounded up by buffer doubling: far below the
        // 4,000 x 500 KiB = 2 GB the client asked for.
        assertThat(maxBuffered).isLessThanOrEqualTo(8L << 20);
      }
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (stat(good, "buffered_bytes") > 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(stat(good, "buffered_bytes")).as("given back after the client left").isZero();
    }
  }

  @Test
  void idleConnectionsAreClosedAfterTheTimeout() throws Exception {
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(List.of(server), "-t", "1", "--idle-timeout-s", "1");
        TextClient idle = mw.client();
        TextClient busy = mw.client()) {
      assertThat(idle.call("version\r\n")).startsWith("VERSION ");
      idle.setTimeoutMillis(10_000);
      long start = System.nanoTime();
      for (int i = 0; i < 30; i++) {
        assertThat(busy.call("version\r\n")).startsWith("VERSION ");
        Thread.sleep(100);
      }
      assertThat(idle.closedByPeer()).isTrue();
      assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(900);
      assertThat(busy.call("version\r\n")).startsWith("VERSION ");
      assertThat(stat(busy, "idle_closed_connections")).isEqualTo(1);
    }
  }

  private static void assertGoodClientServed(TextClient good, int round) throws IOException {
    String key = "good" + round;
    assertThat(good.call("set " + key + " 0 0 2\r\nok\r\n")).isEqualTo("STORED\r\n");
    assertThat(good.call("get " + key + "\r\n"))
        .isEqualTo("VALUE " + key + " 0 2\r\nok\r\nEND\r\n");
  }

  private static final Pattern STAT = Pattern.compile("STAT (\\S+) (\\d+)\r\n");

  static long stat(TextClient client, String name) throws IOException {
    Matcher m = STAT.matcher(client.call("stats\r\n"));
    while (m.find()) {
      if (m.group(1).equals(name)) {
        return Long.parseLong(m.group(2));
      }
    }
    throw new AssertionError("no stat " + name);
  }

  private static Socket sendAndHold(int port, byte[] head, byte[] body) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    s.setSoTimeout(5_000);
    try {
      OutputStream out = s.getOutputStream();
      out.write(head);
      out.write(body);
      out.flush();
    } catch (IOException e) {
      // closed by the middleware past the budget: expected for some
    }
    return s;
  }

  private static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }
}
