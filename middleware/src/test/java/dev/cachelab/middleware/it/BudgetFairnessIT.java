package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The buffer budget cannot be used to shut clients out: 200 connections that each send half of a 1
 * MB {@code set} and stall (or then trickle one byte a second) would hold far more than the budget;
 * a client storing and reading 100 KiB values beside them keeps at least half of its quiet rate,
 * because a request that needs budget closes the connection that has held a partial request
 * longest. The figures are printed; a window's rate swings with a loaded machine's other load, so
 * the assertion is far below that: a client shut out gets no pairs at all.
 *
 * <p>The budget is the default of a 256 MiB heap (a sixth of it), as the container runs it.
 */
class BudgetFairnessIT {
  private static final long BUDGET_BYTES = (256L << 20) / 6;
  private static final int STALLERS = 200;
  private static final int SMALL_STALLERS = 100;
  private static final int VALUE_BYTES = 100 * 1024;

  @Test
  void stalledPartialRequestsDoNotShutOutALargeValueClient() throws Exception {
    largeValueClientBeside(false);
  }

  @Test
  void tricklingPartialRequestsDoNotShutOutALargeValueClient() throws Exception {
    largeValueClientBeside(true);
  }

  private static void largeValueClientBeside(boolean trickle) throws Exception {
    try (MemcachedProcess server = MemcachedProcess.start();
        RunningMiddleware mw =
            RunningMiddleware.start(
                List.of(server), "-t", "8", "--buffer-budget-bytes", "" + BUDGET_BYTES)) {
      List<Socket> stallers = new ArrayList<>();
      AtomicBoolean stop = new AtomicBoolean();
      Thread trickler = new Thread(() -> trickle(stallers, stop), "trickler");
      try {
        long[] quiet = pairsPerSecond(mw, 3_000);
        byte[] half = new byte[500_000];
        Arrays.fill(half, (byte) 'x');
        for (int i = 0; i < STALLERS; i++) {
          stallers.add(sendAndHold(mw.port(), "set s" + i + " 0 0 1000000\r\n", half));
        }
        // Small partial requests (each holding 4 KiB past the base buffer) fill what the large
        // ones leave of the budget to less than what any request needs to grow.
        byte[] small = Arrays.copyOf(half, 6_000);
        for (int i = 0; i < SMALL_STALLERS; i++) {
          stallers.add(sendAndHold(mw.port(), "set t" + i + " 0 0 100000\r\n", small));
        }
        if (trickle) {
          trickler.start();
        }
        Thread.sleep(1_000);
        long[] loaded = pairsPerSecond(mw, 3_000);
        System.out.printf(
            "BudgetFairnessIT %s: %d set+get pairs/s of 100 KiB quiet, %d beside the stallers"
                + " (%.0f %%), %d disconnects, %d connections evicted%n",
            trickle ? "trickling" : "stalled",
            quiet[0],
            loaded[0],
            100.0 * loaded[0] / quiet[0],
            loaded[1],
            mw.stat("budget_evicted_connections"));
        assertThat(loaded[1]).as("disconnects of the 100 KiB client").isZero();
        assertThat(loaded[0])
            .as("pairs/s beside the stallers vs %d quiet", quiet[0])
            .isGreaterThan(quiet[0] / 10);
      } finally {
        stop.set(true);
        if (trickle) {
          trickler.join(10_000);
        }
        for (Socket s : stallers) {
          s.close();
        }
      }
    }
  }

  private static Socket sendAndHold(int port, String line, byte[] body) throws IOException {
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    try {
      socket.getOutputStream().write(line.getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().write(body);
    } catch (IOException closedMeanwhile) {
      // evicted for a newer partial request: still counts as a connection that tried
    }
    return socket;
  }

  /** One byte a second on every staller, as long as it is open. */
  private static void trickle(List<Socket> stallers, AtomicBoolean stop) {
    while (!stop.get()) {
      for (Socket s : stallers) {
        try {
          s.getOutputStream().write('x');
        } catch (IOException closed) {
          // evicted
        }
      }
      try {
        Thread.sleep(1_000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * Stores and reads a 100 KiB value for {@code millis}, reconnecting when the middleware closes
   * the connection; returns the set+get pairs a second and the disconnects.
   */
  private static long[] pairsPerSecond(RunningMiddleware mw, long millis) throws IOException {
    byte[] value = new byte[VALUE_BYTES];
    Arrays.fill(value, (byte) 'v');
    String set =
        "set big 0 0 "
            + VALUE_BYTES
            + "\r\n"
            + new String(value, StandardCharsets.US_ASCII)
            + "\r\n";
    String expected = "VALUE big 0 " + VALUE_BYTES + "\r\n";
    long pairs = 0;
    long disconnects = 0;
    long end = System.nanoTime() + millis * 1_000_000L;
    while (System.nanoTime() < end) {
      try (TextClient client = mw.client()) {
        client.setTimeoutMillis(10_000);
        while (System.nanoTime() < end) {
          if (!client.call(set).equals("STORED\r\n")) {
            break;
          }
          String get = client.call("get big\r\n");
          if (!get.startsWith(expected) || get.length() != expected.length() + VALUE_BYTES + 7) {
            break;
          }
          pairs++;
        }
      } catch (IOException e) {
        // closed by the middleware (out of memory): reconnect
      }
      disconnects++;
    }
    return new long[] {pairs * 1000 / millis, disconnects - 1};
  }
}
