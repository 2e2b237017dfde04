package dev.cachelab.middleware.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The clients of a fault test: loops, each on its own thread, that run until {@link #close} sets
 * their stop flag, then are joined (at most 30 s each). Started and closed by the test's thread.
 */
public final class ClientThreads implements AutoCloseable {
  private static final long JOIN_MILLIS = 30_000;

  /** One client's loop: returns when {@code stop} is set (or on its own). Its thread only. */
  @FunctionalInterface
  public interface Loop {
    void run(int id, AtomicBoolean stop);
  }

  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> threads = new ArrayList<>();

  private ClientThreads() {}

  /** Starts {@code count} threads named {@code <name>-<id>}, each running {@code loop}. */
  public static ClientThreads start(int count, String name, Loop loop) {
    ClientThreads clients = new ClientThreads();
    for (int c = 0; c < count; c++) {
      int id = c;
      Thread t = new Thread(() -> loop.run(id, clients.stop), name + "-" + c);
      clients.threads.add(t);
      t.start();
    }
    return clients;
  }

  /** Sets the stop flag and joins every thread. */
  @Override
  public void close() throws InterruptedException {
    stop.set(true);
    for (Thread t : threads) {
      t.join(JOIN_MILLIS);
    }
  }
}
