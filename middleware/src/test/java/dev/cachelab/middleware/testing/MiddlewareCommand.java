package dev.cachelab.middleware.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Command lines of a middleware under test. Called from the test's thread. */
public final class MiddlewareCommand {
  private MiddlewareCommand() {}

  /**
   * A free loopback port ({@code -l 127.0.0.1 -p 0}), {@code workers} worker threads, no statistics
   * file ({@code -s false}), then {@code more} (the servers and whatever the test sets).
   */
  public static List<String> flagsOnLoopback(int workers, String... more) {
    List<String> flags =
        new ArrayList<>(List.of("-l", "127.0.0.1", "-p", "0", "-t", "" + workers, "-s", "false"));
    flags.addAll(List.of(more));
    return flags;
  }

  /**
   * The middleware as a process of its own: this JVM's {@code java} with {@code jvmFlags} and the
   * test's class path, running {@code Main} with {@code flags}.
   */
  public static List<String> inOwnJvm(List<String> jvmFlags, List<String> flags) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add("dev.cachelab.middleware.Main");
    command.addAll(flags);
    return command;
  }
}
