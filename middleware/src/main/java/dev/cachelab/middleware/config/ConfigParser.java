package dev.cachelab.middleware.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Help.Visibility;
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
          "cachelab middleware: a memcached text-protocol or redis RESP proxy (net thread, queue,"
              + " workers).",
      mixinStandardHelpOptions = true,
      showDefaultValues = true,
      sortOptions = false)
  static final class Flags {
    @Option(
        names = "-l",
        required = true,
        showDefaultValue = Visibility.NEVER,
        paramLabel = "<ip>",
        description = "Listen address: an address or host name of this machine. Required.")
    String listenAddress;

    @Option(
        names = "-p",
        required = true,
        showDefaultValue = Visibility.NEVER,
        paramLabel = "<port>",
        description =
            "Listen port, 0.."
                + MiddlewareConfig.MAX_PORT
                + "; 0 = any free port (the line on stdout says which). Required.")
    @Range(min = 0, max = MiddlewareConfig.MAX_PORT)
    int port;

    @Option(
        names = "-t",
        required = true,
        showDefaultValue = Visibility.NEVER,
        paramLabel = "<workers>",
        description = "Worker threads, 1.." + MiddlewareConfig.MAX_WORKERS + ". Required.")
    @Range(min = 1, max = MiddlewareConfig.MAX_WORKERS)
    int workers;

    @Option(
        names = "-s",
        required = true,
        showDefaultValue = Visibility.NEVER,
        arity = "1",
        paramLabel = "<true|false>",
        description = "Shard multi-key gets over the servers (round-robin routing). Required.")
    String sharded;

    @Option(
        names = "-m",
        showDefaultValue = Visibility.NEVER,
        arity = "1..*",
        paramLabel = "<host:port>",
        description =
            "Backend servers (memcached, or redis with --protocol redis): 1.."
                + MiddlewareConfig.MAX_SERVERS
                + ", each given once, ports 1..65535. Required unless --servers-file is given."
                + " Default: none.")
    @Range(min = 1, max = MiddlewareConfig.MAX_SERVERS, count = true)
    List<String> servers;

    @Option(
        names = "--servers-file",
        showDefaultValue = Visibility.NEVER,
        paramLabel = "<file>",
        description =
            "File with the backend servers instead of -m: host:port, one a line (# comments),"
                + " and optionally backend-timeout-ms=<ms> and eject-retry-ms=<ms> lines, which"
                + " override those flags while they are in the file. Re-read on SIGHUP and when it"
                + " changes (checked every --servers-file-check-ms): added servers join, removed ones finish their"
                + " requests, new timeouts apply to the requests routed after; an invalid file is"
                + " refused and the servers and timeouts in use keep serving. Default: none.")
    Path serversFile;

    @Option(
        names = "--servers-file-check-ms",
        defaultValue = "1000",
        paramLabel = "<ms>",
        description =
            "How often --servers-file is checked for a change, "
                + MiddlewareConfig.MIN_SERVERS_FILE_CHECK_MS
                + ".."
                + MiddlewareConfig.MAX_SERVERS_FILE_CHECK_MS
                + "; a file that names a host that does not resolve is read again as often.")
    @Range(
        min = MiddlewareConfig.MIN_SERVERS_FILE_CHECK_MS,
        max = MiddlewareConfig.MAX_SERVERS_FILE_CHECK_MS)
    int serversFileCheckMs;

    @Option(
        names = "--protocol",
        defaultValue = "memcached",
        paramLabel = "<name>",
        description =
            "What the middleware speaks to its clients and to its servers: memcached (text"
                + " protocol) or redis (RESP2, and RESP3 to clients that ask with HELLO 3).")
    String protocol;

    @Option(
        names = "--routing",
        defaultValue = "round-robin",
        paramLabel = "<mode>",
        description =
            "round-robin (reads to the next server, writes to all: ASL 2017/2019) or hash"
                + " (consistent hashing of the keys).")
    String routing;

    @Option(
        names = "--replication",
        defaultValue = "1",
        paramLabel = "<R>",
        description =
            "Replicas per key with --routing hash, 1..servers (round-robin writes to every"
                + " server and ignores it).")
    @Range(min = 1, max = MiddlewareConfig.MAX_SERVERS, maxIs = "servers")
    int replication;

    @Option(
        names = "--queue-capacity",
        defaultValue = "0",
        paramLabel = "<n>",
        description =
            "Bound of the request queue, 0.."
                + MiddlewareConfig.MAX_QUEUE_CAPACITY
                + "; 0 = unbounded. A full queue stops reading from clients until a worker makes"
                + " room.")
    @Range(min = 0, max = MiddlewareConfig.MAX_QUEUE_CAPACITY)
    int queueCapacity;

    @Option(
        names = "--worker-batch",
        defaultValue = "1",
        paramLabel = "<n>",
        description =
            "Requests a worker takes from the queue at once and pipelines, 1.."
                + MiddlewareConfig.MAX_WORKER_BATCH
                + "; 1 = one at a time, as in the ASL.")
    @Range(min = 1, max = MiddlewareConfig.MAX_WORKER_BATCH)
    int workerBatch;

    @Option(
        names = "--event-loops",
        defaultValue = "0",
        paramLabel = "<n>",
        description =
            "Event loops, 0.."
                + MiddlewareConfig.MAX_EVENT_LOOPS
                + ": net threads that each serve their share of the clients and send"
                + " their single-server requests to the servers themselves (no queue, no worker"
                + " wake-up); requests needing several servers still go to the -t workers, and"
                + " --worker-batch bounds one client's pipelined requests sent together. 0 = one"
                + " net thread queueing every request for the workers, as in the ASL.")
    @Range(min = 0, max = MiddlewareConfig.MAX_EVENT_LOOPS)
    int eventLoops;

    @Option(
        names = "--backend-timeout-ms",
        defaultValue = "1000",
        paramLabel = "<ms>",
        description =
            "How long a worker waits for a server's reply before answering that the server timed"
                + " out, 1.."
                + MiddlewareConfig.MAX_BACKEND_TIMEOUT_MS
                + ".")
    @Range(min = 1, max = MiddlewareConfig.MAX_BACKEND_TIMEOUT_MS)
    int backendTimeoutMs;

    @Option(
        names = "--max-value-bytes",
        defaultValue = "1048576",
        paramLabel = "<n>",
        description =
            "Largest value (data block or bulk string) accepted, 1.."
                + MiddlewareConfig.MAX_VALUE_BYTES
                + ".")
    @Range(min = 1, max = MiddlewareConfig.MAX_VALUE_BYTES)
    int maxValueBytes;

    @Option(
        names = "--window-ms",
        defaultValue = "1000",
        paramLabel = "<ms>",
        description =
            "Length of a statistics window, "
                + MiddlewareConfig.MIN_WINDOW_MS
                + ".."
                + MiddlewareConfig.MAX_WINDOW_MS
                + ".")
    @Range(min = MiddlewareConfig.MIN_WINDOW_MS, max = MiddlewareConfig.MAX_WINDOW_MS)
    int windowMs;

    @Option(
        names = "--stats-dir",
        paramLabel = "<dir>",
        description =
            "Directory for windows.csv, servers.csv, histograms/ and summary.json. Default: none"
                + " (no files).")
    Path statsDir;

    @Option(
        names = "--warmup-s",
        defaultValue = "0",
        paramLabel = "<s>",
        description =
            "Seconds of windows left out at the start of the summary, 0.."
                + MiddlewareConfig.MAX_TRIM_SECONDS
                + ".")
    @Range(min = 0, max = MiddlewareConfig.MAX_TRIM_SECONDS)
    int warmupSeconds;

    @Option(
        names = "--cooldown-s",
        defaultValue = "0",
        paramLabel = "<s>",
        description =
            "Seconds of windows left out at the end of the summary, 0.."
                + MiddlewareConfig.MAX_TRIM_SECONDS
                + ".")
    @Range(min = 0, max = MiddlewareConfig.MAX_TRIM_SECONDS)
    int cooldownSeconds;

    @Option(
        names = "--metrics-port",
        defaultValue = "0",
        paramLabel = "<port>",
        description =
            "Port of the Prometheus /metrics endpoint, 0.."
                + MiddlewareConfig.MAX_PORT
                + "; 0 = off.")
    @Range(min = 0, max = MiddlewareConfig.MAX_PORT)
    int metricsPort;

    @Option(
        names = "--metrics-address",
        showDefaultValue = Visibility.NEVER,
        paramLabel = "<ip>",
        description =
            "Bind address of the /metrics endpoint (its labels name the servers). Default: -l's"
                + " address.")
    String metricsAddress;

    @Option(
        names = "--eject-after-failures",
        defaultValue = "3",
        paramLabel = "<n>",
        description =
            "Consecutive failures (timeouts, refused or broken connections) that take a server"
                + " out of rotation, 0.."
                + MiddlewareConfig.MAX_EJECT_AFTER_FAILURES
                + "; 0 = never (mcrouter's TKO: 3).")
    @Range(min = 0, max = MiddlewareConfig.MAX_EJECT_AFTER_FAILURES)
    int ejectAfterFailures;

    @Option(
        names = "--eject-retry-ms",
        defaultValue = "500",
        paramLabel = "<ms>",
        description =
            "How long an ejected server stays out before it is probed (version, or PING for"
                + " redis) on a new connection; again after each failed probe. 1.."
                + MiddlewareConfig.MAX_EJECT_RETRY_MS
                + ".")
    @Range(min = 1, max = MiddlewareConfig.MAX_EJECT_RETRY_MS)
    int ejectRetryMs;

    @Option(
        names = "--backend-max-waiters",
        defaultValue = "0",
        paramLabel = "<n>",
        description =
            "Workers that may wait at once on a server that has failed and not answered since,"
                + " 0.."
                + MiddlewareConfig.MAX_WORKERS
                + "; 0 = half the workers (at least 1).")
    @Range(min = 0, max = MiddlewareConfig.MAX_WORKERS)
    int backendMaxWaiters;

    @Option(
        names = "--buffer-budget-bytes",
        defaultValue = "0",
        paramLabel = "<n>",
        description =
            "Bytes buffered for all clients' requests and replies, 0 or >= "
                + MiddlewareConfig.MIN_BUFFER_BUDGET_BYTES
                + "; a connection that would pass it is closed with an out-of-memory error; 0 = a"
                + " sixth of the maximum heap.")
    @Range(min = MiddlewareConfig.MIN_BUFFER_BUDGET_BYTES, max = Long.MAX_VALUE, orZero = true)
    long bufferBudgetBytes;

    @Option(
        names = "--idle-timeout-s",
        defaultValue = "0",
        paramLabel = "<s>",
        description =
            "Close a client connection with nothing in flight and no input for this long,"
                + " 0.."
                + MiddlewareConfig.MAX_IDLE_TIMEOUT_S
                + "; 0 = never.")
    @Range(min = 0, max = MiddlewareConfig.MAX_IDLE_TIMEOUT_S)
    int idleTimeoutSeconds;

    @Option(
        names = "--divergence-delete",
        defaultValue = "false",
        arity = "0..1",
        paramLabel = "<true|false>",
        description =
            "After a replicated write that was applied on some servers and failed on others"
                + " (counted as replica_divergences), delete its keys on the failed ones, so that"
                + " reads find the new value or nothing, never the old one.")
    boolean divergenceDelete;

    @Option(
        names = "--admin-commands",
        defaultValue = "false",
        arity = "0..1",
        paramLabel = "<true|false>",
        description =
            "Forward the commands that act on every server for every client: flush_all and"
                + " verbosity (memcached), FLUSHALL and FLUSHDB (redis). Refused when false, so"
                + " that one client cannot empty or reconfigure the servers under the others.")
    boolean adminCommands;
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
        flags.serversFile != null ? ServersFile.read(flags.serversFile).servers() : flags.servers;
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
        flags.metricsAddress == null ? flags.listenAddress : flags.metricsAddress,
        flags.ejectAfterFailures,
        flags.ejectRetryMs,
        flags.backendMaxWaiters,
        flags.bufferBudgetBytes,
        flags.idleTimeoutSeconds,
        flags.divergenceDelete,
        flags.serversFile,
        flags.eventLoops,
        flags.adminCommands,
        flags.serversFileCheckMs);
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
