package dev.cachelab.middleware.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cachelab.middleware.testing.MemcachedProcess;
import dev.cachelab.middleware.testing.RunningMiddleware;
import dev.cachelab.middleware.testing.TextClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A backend that drops about 1 % of its reply chunks (a loopback proxy in front of memcached that
 * then hangs up) costs about the requests on the dropped connections, not every request of a
 * reconnect backoff: the next request reconnects at once.
 */
class FlakyBackendIT {
  private static final int REQUESTS = 2_000;

  @Test
  void onePercentDroppedChunksFailFewRequests() throws Exception {
    try (MemcachedProcess server = MemcachedProcess.start();
        DroppingProxy proxy = new DroppingProxy(server.port(), 0.01, 42)) {
      try (RunningMiddleware mw =
              RunningMiddleware.startWithAddresses(
                  List.of("127.0.0.1:" + proxy.port()), "-t", "2");
          TextClient client = mw.client()) {
        int failed = 0;
        for (int i = 0; i < REQUESTS; i++) {
          String reply =
              i % 2 == 0 ? client.call("set f 0 0 2\r\nok\r\n") : client.call("get f\r\n");
          if (reply.startsWith("SERVER_ERROR")) {
            failed++;
          } else {
            assertThat(reply).isIn("STORED\r\n", "VALUE f 0 2\r\nok\r\nEND\r\n");
          }
        }
        int drops = proxy.drops();
        System.out.printf(
            "FlakyBackendIT: %d of %d requests failed (%.2f %%), %d reply chunks dropped%n",
            failed, REQUESTS, 100.0 * failed / REQUESTS, drops);
        assertThat(drops).as("chunks dropped").isPositive();
        // The case this guards: with a reconnect backoff after every broken connection, the
        // requests of the whole backoff period failed (about half of them). A drop costs only the
        // request on that connection (a get may even be retried), and the next request
        // reconnects at once: failures stay near the drops, not near half the requests. Generous
        // bounds.
        assertThat(failed)
            .as("failed of %d, %d drops", REQUESTS, drops)
            .isLessThanOrEqualTo(2 * drops + 5)
            .isLessThanOrEqualTo(REQUESTS * 6 / 100);
      }
    }
  }

  /** Forwards loopback connections to memcached, hanging up instead of passing some chunks. */
  private static final class DroppingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final double dropRate;
    private final Random random;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile int drops;
    private final Thread acceptor;

    DroppingProxy(int targetPort, double dropRate, long seed) throws IOException {
      this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      this.targetPort = targetPort;
      this.dropRate = dropRate;
      this.random = new Random(seed);
      this.acceptor = new Thread(this::acceptLoop, "dropping-proxy");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    int drops() {
      return drops;
    }

    private void acceptLoop() {
      while (!listener.isClosed()) {
        try {
          Socket client = listener.accept();
          Socket upstream = new Socket();
          upstream.connect(new InetSocketAddress("127.0.0.1", targetPort), 5_000);
          sockets.add(client);
          sockets.add(upstream);
          pump(client, upstream, false);
          pump(upstream, client, true);
        } catch (IOException e) {
          return;
        }
      }
    }

    private void pump(Socket from, Socket to, boolean mayDrop) {
      Thread t =
          new Thread(
              () -> {
                byte[] buf = new byte[16 * 1024];
                try (from;
                    to) {
                  InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream();
                  int n;
                  while ((n = in.read(buf)) >= 0) {
                    if (mayDrop && shouldDrop()) {
                      return; // hang up both sides without passing the chunk on
                    }
                    out.write(buf, 0, n);
                  }
                } catch (IOException e) {
                  // the other direction hung up
                }
              },
              "dropping-proxy-pump");
      t.setDaemon(true);
      t.start();
    }

    private synchronized boolean shouldDrop() {
      if (random.nextDouble() < dropRate) {
        drops++;
        return true;
      }
      return false;
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
