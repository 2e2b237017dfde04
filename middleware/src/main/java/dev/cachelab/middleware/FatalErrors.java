package dev.cachelab.middleware;

/**
 * The process's last word when a middleware thread (net thread, worker, statistics reporter) dies
 * of an error nothing handles ({@link OutOfMemoryError}, an uncaught exception): one log line, then
 * the process ends with {@link #EXIT_STATUS} at once, so that a supervisor or Kubernetes restarts
 * it instead of keeping a listening process that answers nothing. Installed by {@link Main} as the
 * default handler; called on the dying thread.
 */
public final class FatalErrors implements Thread.UncaughtExceptionHandler {
  /** The exit status after a fatal error (EX_SOFTWARE). */
  public static final int EXIT_STATUS = 70;

  @Override
  public void uncaughtException(Thread thread, Throwable error) {
    try {
      System.err.println(
          "cachelab middleware: fatal error in thread "
              + thread.getName()
              + ": "
              + error
              + "; exiting with status "
              + EXIT_STATUS);
      System.err.flush();
    } catch (Throwable ignored) {
      // Even the message may not fit in an exhausted heap: exit anyway.
    } finally {
      Runtime.getRuntime().halt(EXIT_STATUS);
    }
  }
}
