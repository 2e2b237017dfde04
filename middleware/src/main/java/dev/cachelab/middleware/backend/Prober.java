package dev.cachelab.middleware.backend;

import dev.cachelab.middleware.config.Protocol;
import dev.cachelab.middleware.servers.BackendHealth;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Probes ejected servers, each on a new connection of its own, when their retry interval has
 * passed: {@code version} for memcached, {@code PING} for redis; an answer puts the server back in
 * rotation. No client request waits on a probe, and a probe never runs on a worker's socket that
 * may be stale (a server restarted since). Runs on its own daemon thread; servers are probed one
 * after another, each within {@code timeoutMillis}.
 */
public final class Prober implements Runnable {
  /** How often the ejected servers' retry times are checked. */
  static final long PERIOD_NANOS = 20_000_000L;

  private static final byte[] VERSION_REQUEST = "version\r\n".getBytes();
  private static final byte[] VERSION_PREFIX = "VERSION ".getBytes();
  private static final byte[] PING_REQUEST = "*1\r\n$4\r\nPING\r\n".getBytes();
  private static final byte[] PONG_REPLY = "+PONG\r\n".getBytes();

  private final Supplier<List<BackendHealth>> health;
  private final Supplier<List<InetSocketAddress>> addresses;
  private final Protocol protocol;
  private final int timeoutMillis;
  private volatile boolean running = true;

  /**
   * @param health the current servers' health, in server order
   * @param addresses their addresses, in the same order
   * @param timeoutMillis how long a probe may take to connect and to be answered
   */
  public Prober(
      Supplier<List<BackendHealth>> health,
      Supplier<List<InetSocketAddress>> addresses,
      Protocol protocol,
      int timeoutMillis) {
    this.health = health;
    this.addresses = addresses;
    this.protocol = protocol;
    this.timeoutMillis = timeoutMillis;
  }

  public void stop() {
    running = false;
  }

  @Override
  public void run() {
    while (running) {
      List<BackendHealth> servers = health.get();
      List<InetSocketAddress> at = addresses.get();
      for (int s = 0; s < servers.size() && s < at.size() && running; s++) {
        BackendHealth h = servers.get(s);
        if (h.claimProbe(System.nanoTime())) {
          if (answers(at.get(s))) {
            h.probeSucceeded();
          } else {
            h.probeFailed(System.nanoTime());
          }
        }
      }
      try {
        TimeUnit.NANOSECONDS.sleep(PERIOD_NANOS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Whether the server at {@code address} answers the probe on a new connection in time. */
  boolean answers(InetSocketAddress address) {
    boolean redis = protocol == Protocol.REDIS;
    byte[] request = redis ? PING_REQUEST : VERSION_REQUEST;
    byte[] expected = redis ? PONG_REPLY : VERSION_PREFIX;
    try (Socket socket = new Socket()) {
      socket.setTcpNoDelay(true);
      socket.connect(
          new InetSocketAddress(address.getHostString(), address.getPort()), timeoutMillis);
      socket.setSoTimeout(timeoutMillis);
      socket.getOutputStream().write(request);
      byte[] reply = readPrefix(socket.getInputStream(), expected.length);
      return Arrays.equals(reply, expected);
    } catch (IOException e) {
      return false;
    }
  }

  private static byte[] readPrefix(InputStream in, int length) throws IOException {
    byte[] bytes = new byte[length];
    int got = 0;
    while (got < length) {
      int n = in.read(bytes, got, length - got);
      if (n < 0) {
        break;
      }
      got += n;
    }
    return got == length ? bytes : Arrays.copyOf(bytes, got);
  }
}
