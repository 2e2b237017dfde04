package dev.cachelab.loadgen.engine;

import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.protocol.ProtocolException;
import dev.cachelab.loadgen.protocol.WireProtocol;
import dev.cachelab.loadgen.stats.ThreadStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One engine thread (memtier: one libevent loop per thread): connects its {@code --clients}
 * connections, waits for the common start, then runs an NIO selector over them until every client
 * is done, the run is aborted, or a connection fails. Runs on its own thread; reports through its
 * {@link ThreadStats} and the shared {@link RunControl}.
 */
public final class EventLoop implements Runnable {
  /** How long after the end of a timed run outstanding replies may still arrive. */
  static final long DRAIN_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final java.util.concurrent.atomic.AtomicBoolean PIN_WARNED =
      new java.util.concurrent.atomic.AtomicBoolean();

  private final int threadIndex;
  private final LoadgenConfig config;
  private final WireProtocol protocol;
  private final ThreadStats stats;
  private final RunControl control;
  private final ClientConnection[] clients;
  private final java.util.function.Consumer<SelectionKey> readyHandler = this::onReady;
  private Selector selector;
  private ClientConnection current;

  public EventLoop(
      int threadIndex,
      LoadgenConfig config,
      WireProtocol protocol,
      ThreadStats stats,
      RunControl control) {
    this.threadIndex = threadIndex;
    this.config = config;
    this.protocol = protocol;
    this.stats = stats;
    this.control = control;
    this.clients = new ClientConnection[config.clientsPerThread()];
  }

  @Override
  public void run() {
    if (config.pinThreads()) {
      try {
        CpuAffinity.pinCurrentThread(threadIndex);
      } catch (IOException | RuntimeException e) {
        if (PIN_WARNED.compareAndSet(false, true)) {
          System.err.println("warning: --pin-threads: " + e.getMessage() + " (threads not pinned)");
        }
      }
    }
    try {
      boolean connected = false;
      try {
        connectAll();
        connected = true;
      } finally {
        control.threadConnected();
      }
      long startNanos = control.awaitStart();
      if (connected && startNanos >= 0) {
        loop(startNanos);
      }
    } catch (IOException | UncheckedIOException e) {
      control.fail(describe(e instanceof UncheckedIOException u ? u.getCause() : e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      control.fail("interrupted");
    } catch (RuntimeException e) {
      control.fail("internal error in thread " + threadIndex + ": " + e);
    } finally {
      for (ClientConnection c : clients) {
        if (c != null) {
          c.close();
        }
      }
      if (selector != null) {
        try {
          selector.close();
        } catch (IOException ignored) {
          // the run is over
        }
      }
      control.threadFinished();
    }
  }

  private void connectAll() throws IOException {
    selector = Selector.open();
    InetSocketAddress address = new InetSocketAddress(config.server(), config.port());
    if (address.isUnresolved()) {
      throw new IOException("cannot resolve server address '" + config.server() + "'");
    }
    for (int i = 0; i < clients.length; i++) {
      int clientIndex = threadIndex * config.clientsPerThread() + i;
      String name = config.server() + ":" + config.port() + " (client " + clientIndex + ")";
      SocketChannel channel = SocketChannel.open();
      try {
        channel.socket().setTcpNoDelay(true);
        channel.socket().connect(address, config.connectTimeoutMillis());
      } catch (SocketTimeoutException e) {
        channel.close();
        throw new IOException(
            "cannot connect to "
                + name
                + ": no answer within "
                + config.connectTimeoutMillis() / 1000
                + " s");
      } catch (IOException e) {
        channel.close();
        throw new IOException("cannot connect to " + name + ": " + e.getMessage(), e);
      }
      channel.configureBlocking(false);
      ClientConnection client =
          new ClientConnection(name, config, protocol, stats, control, channel, clientIndex);
      client.register(channel.register(selector, SelectionKey.OP_READ, client));
      clients[i] = client;
    }
  }

  private void loop(long startNanos) throws IOException {
    for (ClientConnection c : clients) {
      current = c;
      c.start(startNanos);
    }
    boolean timers = ClientConnection.modeOf(config) != ClientConnection.Mode.CLOSED;
    while (!control.aborted()) {
      long now = System.nanoTime();
      long due = Long.MAX_VALUE;
      boolean allDone = true;
      for (ClientConnection c : clients) {
        if (timers) {
          current = c;
          c.fill(now);
          due = Math.min(due, c.nextDueNanos(now));
        }
        allDone &= c.done(now);
      }
      if (allDone) {
        return;
      }
      checkDrain(now);
      long waitNanos = due == Long.MAX_VALUE ? TimeUnit.MILLISECONDS.toNanos(100) : due - now;
      if (control.deadlineNanos() > now) {
        waitNanos = Math.min(waitNanos, control.deadlineNanos() - now);
      }
      if (waitNanos >= 1_000_000) {
        selector.select(readyHandler, waitNanos / 1_000_000);
      } else if (selector.selectNow(readyHandler) == 0 && waitNanos > 0) {
        LockSupport.parkNanos(waitNanos);
      }
    }
  }

  private void checkDrain(long now) throws IOException {
    if (control.deadlineNanos() != Long.MAX_VALUE
        && now - control.deadlineNanos() > DRAIN_TIMEOUT_NANOS) {
      int missing = 0;
      ClientConnection worst = clients[0];
      for (ClientConnection c : clients) {
        missing += c.outstanding();
        if (c.outstanding() > worst.outstanding()) {
          worst = c;
        }
      }
      current = worst;
      throw new IOException(
          missing
              + " requests got no reply within "
              + TimeUnit.NANOSECONDS.toSeconds(DRAIN_TIMEOUT_NANOS)
              + " s after the end of the run");
    }
  }

  private void onReady(SelectionKey key) {
    ClientConnection c = (ClientConnection) key.attachment();
    current = c;
    try {
      long now = System.nanoTime();
      if (key.isReadable()) {
        c.onReadable(now);
      }
      if (key.isValid() && key.isWritable()) {
        c.onWritable(now);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String describe(Throwable e) {
    String where = current != null ? current.name() : config.server() + ":" + config.port();
    String what = e.getMessage() == null ? e.toString() : e.getMessage();
    if (what.startsWith("cannot connect") || what.startsWith("cannot resolve")) {
      return what;
    }
    if (e instanceof ProtocolException) {
      return "malformed reply from " + where + ": " + what;
    }
    return where + ": " + what;
  }
}
