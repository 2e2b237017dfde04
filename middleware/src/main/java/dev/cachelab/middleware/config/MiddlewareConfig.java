package dev.cachelab.middleware.config;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The validated, immutable middleware configuration; one place for ranges. Built once at startup by
 * {@link ConfigParser}; read by any thread.
 *
 * @param listenAddress {@code -l}: address the net thread binds
 * @param port {@code -p}: listen port (0 = any free port, reported on stdout)
 * @param protocol {@code --protocol}: memcached text protocol or redis RESP2, to clients and
 *     servers
 * @param workers {@code -t}: worker threads
 * @param sharded {@code -s}: split multi-key gets over the servers
 * @param servers {@code -m}: backend memcached servers, {@code host:port}
 * @param routing {@code --routing}
 * @param replication {@code --replication}: replicas per key in hash mode (round-robin writes to
 *     every server and ignores it)
 * @param queueCapacity {@code --queue-capacity}: 0 = unbounded
 * @param workerBatch {@code --worker-batch}: requests a worker takes from the queue at once and
 *     pipelines to its servers; 1 = one at a time
 * @param backendTimeoutMs {@code --backend-timeout-ms}
 * @param maxValueBytes {@code --max-value-bytes}
 * @param windowMs {@code --window-ms}: statistics window
 * @param statsDir {@code --stats-dir}, or null for no files
 * @param warmupSeconds {@code --warmup-s}
 * @param cooldownSeconds {@code --cooldown-s}
 * @param metricsPort {@code --metrics-port}: 0 = off
 * @param metricsAddress {@code --metrics-address}
 * @param ejectAfterFailures {@code --eject-after-failures}: consecutive failures (timeouts, refused
 *     or broken connections) that take a server out of rotation; 0 = never
 * @param ejectRetryMs {@code --eject-retry-ms}: how long an ejected server stays out before it is
 *     probed with {@code version}
 * @param backendMaxWaiters {@code --backend-max-waiters}: workers that may wait at once on a server
 *     that has failed recently; 0 = half the workers (at least 1)
 * @param bufferBudgetBytes {@code --buffer-budget-bytes}: request and reply bytes buffered over all
 *     client connections; 0 = a sixth of the maximum heap (see {@link #effectiveBufferBudgetBytes})
 * @param idleTimeoutSeconds {@code --idle-timeout-s}: close a client idle this long; 0 = never
 * @param divergenceDelete {@code --divergence-delete}: after a replicated write applied on some
 *     servers and failed on others, delete its keys on the failed ones
 * @param serversFile {@code --servers-file}: where {@code servers} were read from (and are re-read
 *     on SIGHUP or a change), or null for {@code -m}
 * @param eventLoops {@code --event-loops}: net threads that serve single-server requests
 *     themselves; 0 = one net thread that queues every request for the workers (the ASL design)
 * @param adminCommands {@code --admin-commands}: forward the commands that act on every server for
 *     every client ({@code flush_all}, {@code verbosity}; redis {@code FLUSHALL}, {@code FLUSHDB});
 *     refused when false
 * @param serversFileCheckMs {@code --servers-file-check-ms}: how often {@code serversFile} is
 *     checked for a change
 */
public record MiddlewareConfig(
    String listenAddress,
    int port,
    Protocol protocol,
    int workers,
    boolean sharded,
    List<String> servers,
    Routing routing,
    int replication,
    int queueCapacity,
    int workerBatch,
    int backendTimeoutMs,
    int maxValueBytes,
    int windowMs,
    Path statsDir,
    int warmupSeconds,
    int cooldownSeconds,
    int metricsPort,
    String metricsAddress,
    int ejectAfterFailures,
    int ejectRetryMs,
    int backendMaxWaiters,
    long bufferBudgetBytes,
    int idleTimeoutSeconds,
    boolean divergenceDelete,
    Path serversFile,
    int eventLoops,
    boolean adminCommands,
    int serversFileCheckMs) {

  // The bounds of the flags: ConfigParser.Flags states them in @Range and in the help, from here.
  public static final int MAX_PORT = 65535;
  public static final int MAX_WORKERS = 1024;
  public static final int MAX_SERVERS = 64;
  public static final int MAX_QUEUE_CAPACITY = 1 << 24;
  public static final int MAX_WORKER_BATCH = 1024;
  public static final int MAX_EVENT_LOOPS = 64;
  public static final int MAX_BACKEND_TIMEOUT_MS = 600_000;
  public static final int MAX_VALUE_BYTES = 128 << 20;
  public static final int MIN_WINDOW_MS = 10;
  public static final int MAX_WINDOW_MS = 3_600_000;
  public static final int MAX_TRIM_SECONDS = 86_400;
  public static final int MAX_EJECT_AFTER_FAILURES = 1_000_000;
  public static final int MAX_EJECT_RETRY_MS = 3_600_000;
  public static final long MIN_BUFFER_BUDGET_BYTES = 1 << 20;
  public static final int MAX_IDLE_TIMEOUT_S = 86_400 * 30;
  public static final int MIN_SERVERS_FILE_CHECK_MS = 10;
  public static final int MAX_SERVERS_FILE_CHECK_MS = 60_000;

  /**
   * The buffer budget in effect: the flag, or a sixth of the maximum heap. A sixth, not a third:
   * with G1 an array of half a region or more occupies whole regions (a 1 MiB buffer two 1 MiB
   * regions), so buffered bytes can cost the heap twice their count; with a third, partial 1 MB
   * requests kept 70 % of a 256 MiB heap in use after a full collection and the net thread ran out
   * of heap now and then (ProcessLimitsIT).
   */
  public long effectiveBufferBudgetBytes() {
    return bufferBudgetBytes != 0 ? bufferBudgetBytes : Runtime.getRuntime().maxMemory() / 6;
  }

  /** The waiter bound in effect: the flag, or half the workers (at least 1). */
  public int effectiveBackendMaxWaiters() {
    return backendMaxWaiters != 0 ? backendMaxWaiters : Math.max(1, workers / 2);
  }

  public MiddlewareConfig {
    servers = List.copyOf(servers);
    if (protocol == null) {
      throw new ConfigException("--protocol: missing (expected: memcached or redis)");
    }
    check("-p", port, 0, MAX_PORT);
    check("-t", workers, 1, MAX_WORKERS);
    check("-m", servers.size(), 1, MAX_SERVERS, "servers");
    for (int i = 0; i < servers.size(); i++) {
      String key = serverKey(servers.get(i));
      for (int j = 0; j < i; j++) {
        // Round-robin would write every set twice to it and give it twice the reads.
        if (serverKey(servers.get(j)).equals(key)) {
          throw new ConfigException(
              "-m: " + twice(servers.get(j), servers.get(i)) + " (expected: each server once)");
        }
      }
    }
    check("--replication", replication, 1, servers.size());
    check("--queue-capacity", queueCapacity, 0, MAX_QUEUE_CAPACITY);
    check("--worker-batch", workerBatch, 1, MAX_WORKER_BATCH);
    check("--event-loops", eventLoops, 0, MAX_EVENT_LOOPS);
    check("--backend-timeout-ms", backendTimeoutMs, 1, MAX_BACKEND_TIMEOUT_MS);
    check("--max-value-bytes", maxValueBytes, 1, MAX_VALUE_BYTES);
    check("--window-ms", windowMs, MIN_WINDOW_MS, MAX_WINDOW_MS);
    check("--warmup-s", warmupSeconds, 0, MAX_TRIM_SECONDS);
    check("--cooldown-s", cooldownSeconds, 0, MAX_TRIM_SECONDS);
    check("--metrics-port", metricsPort, 0, MAX_PORT);
    if (metricsPort != 0 && metricsPort == port) {
      throw new ConfigException(
          "--metrics-port: " + metricsPort + " (expected: 0 = off, or a port other than -p's)");
    }
    check("--eject-after-failures", ejectAfterFailures, 0, MAX_EJECT_AFTER_FAILURES);
    check("--eject-retry-ms", ejectRetryMs, 1, MAX_EJECT_RETRY_MS);
    check("--backend-max-waiters", backendMaxWaiters, 0, MAX_WORKERS);
    if (bufferBudgetBytes != 0 && (bufferBudgetBytes < MIN_BUFFER_BUDGET_BYTES)) {
      throw new ConfigException(
          "--buffer-budget-bytes: "
              + bufferBudgetBytes
              + " (expected: 0 for a sixth of the heap, or >= "
              + MIN_BUFFER_BUDGET_BYTES
              + ")");
    }
    check("--idle-timeout-s", idleTimeoutSeconds, 0, MAX_IDLE_TIMEOUT_S);
    check(
        "--servers-file-check-ms",
        serversFileCheckMs,
        MIN_SERVERS_FILE_CHECK_MS,
        MAX_SERVERS_FILE_CHECK_MS);
    if (listenAddress == null || listenAddress.isBlank()) {
      throw new ConfigException("-l: missing (expected: an IP address or host name)");
    }
    if (metricsAddress == null || metricsAddress.isBlank()) {
      throw new ConfigException(
          "--metrics-address: missing (expected: an IP address or host name)");
    }
  }

  /** The backend addresses, unresolved host names kept as given. */
  public List<InetSocketAddress> serverAddresses() {
    return servers.stream().map(MiddlewareConfig::parseServer).toList();
  }

  /**
   * A server as written, for spotting one given twice before anything is resolved: the host in
   * lower case and the port as a number ({@code LocalHost:011211} is {@code localhost:11211}).
   * {@link MachineChecks#resolveServers} compares the addresses the hosts resolve to.
   */
  public static String serverKey(String server) {
    InetSocketAddress address = parseServer(server);
    return address.getHostString().toLowerCase(Locale.ROOT) + ":" + address.getPort();
  }

  /** How a server given twice is named in a message: once, or both spellings. */
  static String twice(String first, String second) {
    return first.equals(second)
        ? first + " given twice"
        : second + " is " + first + " again, given twice";
  }

  /** Parses {@code host:port}, naming {@code -m} in the error. */
  public static InetSocketAddress parseServer(String server) {
    int colon = server.lastIndexOf(':');
    if (colon <= 0 || colon == server.length() - 1) {
      throw new ConfigException("-m: " + server + " (expected: host:port)");
    }
    String host = server.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(server.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new ConfigException("-m: " + server + " (expected: host:port with port 1..65535)");
    }
    if (port < 1 || port > 65535) {
      throw new ConfigException("-m: " + server + " (expected: host:port with port 1..65535)");
    }
    return InetSocketAddress.createUnresolved(host, port);
  }

  private static void check(String flag, int value, int min, int max) {
    check(flag, value, min, max, null);
  }

  private static void check(String flag, int value, int min, int max, String unit) {
    if (value < min || value > max) {
      throw new ConfigException(
          flag
              + ": "
              + value
              + (unit == null ? "" : " " + unit)
              + " (expected: "
              + min
              + ".."
              + max
              + ")");
    }
  }
}
