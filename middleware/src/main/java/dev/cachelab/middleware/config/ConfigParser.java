package dev.cachelab.middleware.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Command line to {@link MiddlewareConfig}: ASL-compatible short flags plus long options (see
 * {@code middleware/README.md}). Main thread only.
 */
public final class ConfigParser {
  private ConfigParser() {}

  @Command(
      name = "middleware",
      description =
          "cachelab middleware: a memcached text-protocol or redis RESP2 proxy (net thread,"
              + " queue, workers).",
      mixinStandardHelpOptions = true,
      sortOptions = false)
  static final class Flags {
    @Option(names = "-l", required = true, description = "Listen address.")
    String listenAddress;

    @Option(names = "-p", required = true, description = "Listen port (0 = any free port).")
    int port;

    @Option(
        names = "--protocol",
        defaultValue = "memcached",
        description =
            "Protocol to clients and servers: memcached (text protocol) or redis (RESP2).")
    String protocol;

    @Option(names = "-t", required = true, description = "Worker threads (1..1024).")
    int workers;

    @Option(
        names = "-s",
        required = true,
        arity = "1",
        description = "Shard multi-key gets over the servers: true or false.")
    String sharded;

    @Option(
        names = "-m",
        arity = "1..*",
        description = "Backend servers, host:port (1..64); or --servers-file.")
    List<String> servers;

    @Option(
        names = "--servers-file",
        description =
            "File with the backend servers instead of -m: host:port, one a line (# comments)."
                + " Re-read on SIGHUP and when it changes (checked every second): added servers"
                + " join, removed ones finish their requests; an invalid file is refused and the"
                + " servers in use keep serving. Default: none.")
    Path serversFile;

    @Option(names = "--routing", defaultValue = "round-robin", description = "round-robin or hash.")
    String routing;

    @Option(names = "--replication", defaultValue = "1", description = "Replicas per key (hash).")
    int replication;

    @Option(names = "--queue-capacity", defaultValue = "0", description = "0 = unbounded.")
    int queueCapacity;

    @Option(
        names = "--worker-batch",
        defaultValue = "1",
        description =
            "Requests a worker takes at once and pipelines; 1 = one at a time, as in the ASL.")
    int workerBatch;

    @Option(names = "--backend-timeout-ms", defaultValue = "1000")
    int backendTimeoutMs;

    @Option(names = "--max-value-bytes", defaultValue = "1048576")
    int maxValueBytes;

    @Option(names = "--window-ms", defaultValue = "1000")
    int windowMs;

    @Option(names = "--stats-dir", description = "Directory for windows.csv, histograms, summary.")
    Path statsDir;

    @Option(names = "--warmup-s", defaultValue = "0")
    int warmupSeconds;

    @Option(names = "--cooldown-s", defaultValue = "0")
    int cooldownSeconds;

    @Option(names = "--metrics-port", defaultValue = "0", description = "0 = off.")
    int metricsPort;

    @Option(names = "--metrics-address", defaultValue = "0.0.0.0")
    String metricsAddress;

    @Option(
        names = "--eject-after-failures",
        defaultValue = "3",
        description = "Consecutive failures that eject a server (0 = never; mcrouter TKO: 3).")
    int ejectAfterFailures;

    @Option(
        names = "--eject-retry-ms",
        defaultValue = "500",
        description =
            "Time an ejected server stays out before it is probed (version, or PING for redis) on"
                + " a new connection; again after each failed probe. Default: ${DEFAULT-VALUE}.")
    int ejectRetryMs;

    @Option(
        names = "--backend-max-waiters",
        defaultValue = "0",
        description = "Workers that may wait on a failing server at once (0 = half the workers).")
    int backendMaxWaiters;

    @Option(
        names = "--buffer-budget-bytes",
        defaultValue = "0",
        description =
            "Bytes buffered for all clients' requests and replies (0 = a sixth of the heap).")
    long bufferBudgetBytes;

    @Option(
        names = "--idle-timeout-s",
        defaultValue = "0",
        description = "Close a client connection idle this long (0 = never).")
    int idleTimeoutSeconds;

    @Option(
        names = "--divergence-delete",
        defaultValue = "false",
        arity = "0..1",
        description =
            "After a replicated write that was applied on some servers and failed on others"
                + " (counted as replica_divergences), delete its keys on the failed ones, so that"
                + " reads find the new value or nothing, never the old one. Default:"
                + " ${DEFAULT-VALUE}.")
    boolean divergenceDelete;
  }

  /**
   * Parses and validates the arguments.
   *
   * @return the config, or null if help or the version was printed
   * @throws ConfigException naming the bad flag and its accepted range
   */
  public static MiddlewareConfig parse(String[] args) {
    Flags flags = new Flags();
    CommandLine commandLine = new CommandLine(flags);
    // An option-like word after -m (or any flag) is an unknown option, not a value: without this,
    // `-m host:1 --bogus` took --bogus for a server and reported it as a bad address.
    commandLine.setUnmatchedOptionsAllowedAsOptionParameters(false);
    try {
      CommandLine.ParseResult result = commandLine.parseArgs(args);
      if (result.isUsageHelpRequested()) {
        commandLine.usage(System.out);
        return null;
      }
      if (result.isVersionHelpRequested()) {
        System.out.println("cachelab middleware");
        return null;
      }
    } catch (CommandLine.UnmatchedArgumentException e) {
      throw new ConfigException(unmatchedMessage(commandLine, args, e.getMessage()));
    } catch (CommandLine.ParameterException e) {
      throw new ConfigException(e.getMessage());
    }
    boolean sharded =
        switch (flags.sharded) {
          case "true" -> true;
          case "false" -> false;
          default ->
              throw new ConfigException("-s: " + flags.sharded + " (expected: true or false)");
        };
    if ((flags.servers == null) == (flags.serversFile == null)) {
      throw new ConfigException(
          flags.servers == null
              ? "-m: missing (expected: host:port servers, or --servers-file FILE)"
              : "-m, --servers-file: both given (expected: one of them)");
    }
    List<String> servers =
        flags.serversFile != null ? ServersFile.read(flags.serversFile) : flags.servers;
    return new MiddlewareConfig(
        flags.listenAddress,
        flags.port,
        Protocol.parse(flags.protocol),
        flags.workers,
        sharded,
        servers,
        Routing.parse(flags.routing),
        flags.replication,
        flags.queueCapacity,
        flags.workerBatch,
        flags.backendTimeoutMs,
        flags.maxValueBytes,
        flags.windowMs,
        flags.statsDir,
        flags.warmupSeconds,
        flags.cooldownSeconds,
        flags.metricsPort,
        flags.metricsAddress,
        flags.ejectAfterFailures,
        flags.ejectRetryMs,
        flags.backendMaxWaiters,
        flags.bufferBudgetBytes,
        flags.idleTimeoutSeconds,
        flags.divergenceDelete,
        flags.serversFile);
  }

  /**
   * The message for an unknown option or a stray argument: the first option-like word that is no
   * flag, with the long options within two edits of it, or picocli's own message.
   */
  private static String unmatchedMessage(CommandLine commandLine, String[] args, String fallback) {
    Set<String> names = commandLine.getCommandSpec().optionsMap().keySet();
    for (String arg : args) {
      String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
      boolean number = name.length() > 1 && Character.isDigit(name.charAt(1));
      if (name.length() < 2 || name.charAt(0) != '-' || number || names.contains(name)) {
        continue;
      }
      List<String> close =
          names.stream()
              .filter(known -> known.startsWith("--") && editDistance(name, known) <= 2)
              .sorted()
              .toList();
      return "unknown option "
          + name
          + (close.isEmpty() ? "" : " (did you mean " + String.join(" or ", close) + "?)");
    }
    return fallback;
  }

  /** Levenshtein distance; option names are short. */
  static int editDistance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
