package dev.cachelab.middleware;

import dev.cachelab.middleware.config.ConfigException;
import dev.cachelab.middleware.config.ConfigParser;
import dev.cachelab.middleware.config.MachineChecks;
import dev.cachelab.middleware.config.MiddlewareConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * Entry point: parses the flags, starts the {@link Middleware}, prints {@code cachelab middleware
 * listening on <ip>:<port>} and waits. SIGTERM or SIGINT: stop accepting, drain, write the final
 * statistics, exit 0. A bad flag, or a value this machine cannot use ({@link MachineChecks}), exits
 * 2 with a message naming it and its accepted range; a listening port the machine will not give
 * ({@link ListenFailure}: in use, no permission) exits 1 with one line naming the address and the
 * flags. A thread dying of an unhandled error ends the process with status 70 ({@link
 * FatalErrors}).
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    Thread.setDefaultUncaughtExceptionHandler(new FatalErrors());
    MiddlewareConfig config;
    try {
      config = ConfigParser.parse(args);
      if (config != null) {
        MachineChecks.check(config);
      }
    } catch (ConfigException e) {
      System.err.println("cachelab middleware: " + e.getMessage());
      System.err.println("Run with --help for the flags.");
      System.exit(2);
      return;
    }
    if (config == null) {
      return;
    }
    Middleware middleware;
    try {
      middleware = new Middleware(config);
      middleware.start();
    } catch (ListenFailure e) {
      System.err.println("cachelab middleware: " + e.getMessage());
      System.exit(1);
      return;
    } catch (IOException | RuntimeException e) {
      System.err.println("cachelab middleware: cannot start: " + e);
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runnable shutdown =
        () -> {
          middleware.shutdown();
          stopped.countDown();
        };
    Signal.handle(new Signal("TERM"), signal -> new Thread(shutdown, "shutdown").start());
    Signal.handle(new Signal("INT"), signal -> new Thread(shutdown, "shutdown").start());
    Runtime.getRuntime().addShutdownHook(new Thread(middleware::shutdown, "shutdown-hook"));
    try {
      InetSocketAddress address = middleware.localAddress();
      System.out.println(
          "cachelab middleware listening on "
              + address.getAddress().getHostAddress()
              + ":"
              + address.getPort());
      if (middleware.metricsPort() != 0) {
        System.out.println("cachelab middleware metrics on port " + middleware.metricsPort());
      }
      System.out.flush();
      stopped.await();
    } catch (IOException e) {
      System.err.println("cachelab middleware: " + e);
      System.exit(1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    System.exit(0);
  }
}
