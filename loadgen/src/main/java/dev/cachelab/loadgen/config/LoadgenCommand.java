package dev.cachelab.loadgen.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The command line: memtier_benchmark's option names and meanings for the subset cachelab needs,
 * plus the loadgen extensions. picocli fills the fields on the main thread; {@link #toConfig()}
 * validates them into a {@link LoadgenConfig}. Every error names the option and the bad value.
 */
@Command(
    name = "loadgen",
    sortOptions = false,
    mixinStandardHelpOptions = true,
    versionProvider = LoadgenCommand.Version.class,
    usageHelpWidth = 100,
    description = {
      "memtier_benchmark-compatible load generator for memcached (text) and redis (RESP2).",
      "Unknown and unsupported memtier options are rejected."
    })
public final class LoadgenCommand {

  /** memtier options loadgen knows about but deliberately does not implement. */
  static final Set<String> UNSUPPORTED_MEMTIER_OPTIONS =
      Set.of(
          "--unix-socket",
          "-4",
          "--ipv4",
          "-6",
          "--ipv6",
          "-a",
          "--authenticate",
          "--tls",
          "--cert",
          "--key",
          "--cacert",
          "--tls-skip-verify",
          "--tls-protocols",
          "--sni",
          "-o",
          "--out-file",
          "--client-stats",
          "--show-config",
          "--print-all-runs",
          "-D",
          "--debug",
          "--cluster-mode",
          "--reconnect-interval",
          "--reconnect-on-error",
          "--max-reconnect-attempts",
          "--reconnect-backoff-factor",
          "--data-offset",
          "--data-size-list",
          "--data-size-pattern",
          "--data-import",
          "--data-verify",
          "--verify-only",
          "--generate-keys",
          "--no-expiry",
          "--select-db",
          "--wait-ratio",
          "--num-slaves",
          "--wait-timeout",
          "--command",
          "--command-ratio",
          "--command-key-pattern",
          "--monitor-input",
          "--monitor-pattern",
          "-u",
          "--uri",
          "--prometheus-port",
          "--prometheus-bind-addr",
          "--prometheus-run-label",
          "--statsd-host",
          "--statsd-port",
          "--statsd-prefix",
          "--statsd-run-label",
          "--graphite-port",
          "--clients-start",
          "--clients-step",
          "--step-duration",
          "--realtime-latencies",
          "--miss-rate-threshold",
          "--connection-stage-timeout");

  /** Seed of every client's random generator unless --randomize is given (memtier's habit). */
  static final long DEFAULT_SEED = 5489L;

  /** memtier's bound on {@code --key-zipf-exp}: the exponent must be below it (and above 0). */
  static final double MAX_ZIPF_EXPONENT = 5.0;

  @Option(
      names = {"-s", "--server"},
      description = "Server address (default: ${DEFAULT-VALUE}).",
      defaultValue = "localhost")
  String server;

  @Option(
      names = {"-p", "--port"},
      description = "Server port (default: ${DEFAULT-VALUE}).",
      defaultValue = "6379")
  int port;

  @Option(
      names = {"-P", "--protocol"},
      description = "redis (= resp2) or memcache_text (default: ${DEFAULT-VALUE}).",
      defaultValue = "redis")
  String protocol;

  @Option(
      names = {"-t", "--threads"},
      description = "Threads (default: ${DEFAULT-VALUE}).",
      defaultValue = "4")
  int threads;

  @Option(
      names = {"-c", "--clients"},
      description = "Clients (connections) per thread (default: ${DEFAULT-VALUE}).",
      defaultValue = "50")
  int clients;

  @Option(
      names = "--test-time",
      paramLabel = "SECS",
      description = "Run for SECS seconds (excludes --requests).")
  Integer testTime;

  @Option(
      names = {"-n", "--requests"},
      paramLabel = "NUM|allkeys",
      description =
          "Requests per client (default 10000); 'allkeys' = one request per key of the client's"
              + " range (its P sub-range under P:P).")
  String requests;

  @Option(
      names = "--ratio",
      paramLabel = "SET:GET",
      description = "Set:get ratio per client cycle (default: ${DEFAULT-VALUE}).",
      defaultValue = "1:10")
  String ratio;

  @Option(
      names = "--pipeline",
      description = "Requests outstanding per connection (default: ${DEFAULT-VALUE}).",
      defaultValue = "1")
  int pipeline;

  @Option(
      names = {"-d", "--data-size"},
      description = "Value size in bytes (default 32).")
  Integer dataSize;

  @Option(
      names = "--data-size-range",
      paramLabel = "MIN-MAX",
      description = "Value size drawn uniformly from MIN-MAX bytes per SET.")
  String dataSizeRange;

  @Option(
      names = {"-R", "--random-data"},
      description = "Random value bytes instead of a constant fill.")
  boolean randomData;

  @Option(
      names = "--expiry-range",
      paramLabel = "MIN-MAX",
      description = "Expiry in seconds drawn from MIN-MAX per SET (default: ${DEFAULT-VALUE}).",
      defaultValue = "0-0")
  String expiryRange;

  @Option(
      names = "--key-prefix",
      description = "Key prefix (default: ${DEFAULT-VALUE}).",
      defaultValue = "memtier-")
  String keyPrefix;

  @Option(
      names = "--key-minimum",
      description = "Smallest key number (default: ${DEFAULT-VALUE}).",
      defaultValue = "0")
  long keyMinimum;

  @Option(
      names = "--key-maximum",
      description = "Largest key number, inclusive (default: ${DEFAULT-VALUE}).",
      defaultValue = "10000000")
  long keyMaximum;

  @Option(
      names = "--key-pattern",
      paramLabel = "SET:GET",
      description =
          "Key patterns: S sequential per client, R uniform random, G gaussian, P parallel"
              + " (disjoint sub-range per client), Z zipf (key n with weight n^-exp, from key 1)"
              + " (default: ${DEFAULT-VALUE}).",
      defaultValue = "R:R")
  String keyPattern;

  @Option(names = "--key-median", description = "Median of the G pattern (default: range middle).")
  Double keyMedian;

  @Option(names = "--key-stddev", description = "Stddev of the G pattern (default: range / 6).")
  Double keyStddev;

  @Option(
      names = "--key-zipf-exp",
      paramLabel = "EXP",
      description =
          "Exponent of the Z pattern, in (0, 5); higher puts more requests on the first keys"
              + " (default 1).")
  @Range(min = 0, max = MAX_ZIPF_EXPONENT, exclusive = true)
  Double keyZipfExp;

  @Option(
      names = "--multi-key-get",
      paramLabel = "NUM",
      description = "GETs carry up to NUM keys, as the ratio allows (default 0 = off).",
      defaultValue = "0")
  int multiKeyGet;

  @Option(
      names = "--rate-limiting",
      paramLabel = "NUM",
      description = "At most NUM requests per second per connection.")
  Integer rateLimiting;

  @Option(
      names = "--distinct-client-seed",
      description = "Each client gets its own random seed (else all clients repeat one sequence).")
  boolean distinctClientSeed;

  @Option(names = "--randomize", description = "Seed from the clock instead of a constant.")
  boolean randomize;

  @Option(
      names = {"-x", "--run-count"},
      description = "Number of runs (default: ${DEFAULT-VALUE}).",
      defaultValue = "1")
  int runCount;

  @Option(names = "--json-out-file", paramLabel = "FILE", description = "Write memtier JSON.")
  Path jsonOutFile;

  @Option(
      names = "--hdr-file-prefix",
      paramLabel = "PREFIX",
      description = "Write HdrHistogram logs (.txt, per-second intervals) and .hgrm files.")
  String hdrFilePrefix;

  @Option(
      names = "--print-percentiles",
      paramLabel = "P1,P2,...",
      description = "Percentiles to report (default: ${DEFAULT-VALUE}).",
      defaultValue = "50,99,99.9")
  String printPercentiles;

  @Option(
      names = "--hide-histogram",
      description = "No latency histogram in the text output or the JSON.")
  boolean hideHistogram;

  @Option(
      names = "--connection-timeout",
      paramLabel = "SECS",
      description = "Connect timeout (default: ${DEFAULT-VALUE}).",
      defaultValue = "5")
  int connectionTimeout;

  @Option(
      names = "--think-time",
      paramLabel = "MS[:exp]",
      description =
          "Extension: each client waits MS ms after a reply before its next request (fixed, or"
              + " exponential with this mean).")
  String thinkTime;

  @Option(
      names = "--open-loop-rate",
      paramLabel = "OPS",
      description =
          "Extension: open loop, Poisson arrivals at OPS requests/s in total; latency from the"
              + " intended send time.")
  Double openLoopRate;

  @Option(
      names = "--open-loop-ramp-s",
      paramLabel = "SECONDS",
      description =
          "Extension: with --open-loop-rate, the arrival rate rises linearly from 0 to OPS over"
              + " SECONDS from the start, so processes still cold from start-up build no backlog"
              + " that lasts into the measured seconds (default 0 = the full rate at once).",
      defaultValue = "0")
  double openLoopRampSeconds;

  @Option(
      names = "--metrics-port",
      paramLabel = "PORT",
      description = "Extension: serve Prometheus /metrics on PORT (default 0 = off).",
      defaultValue = "0")
  int metricsPort;

  @Option(names = "--quiet", description = "Extension: no per-second progress line.")
  boolean quiet;

  @Option(
      names = "--pin-threads",
      description =
          "Extension: pin thread i to the i-th CPU this process may use (as memcaslap does).")
  boolean pinThreads;

  /**
   * Rejects memtier options that loadgen does not implement, with a message naming them (picocli
   * reports the remaining unknown options itself).
   */
  public static void rejectUnsupported(String[] args) {
    for (String arg : args) {
      if (arg.equals("--")) {
        return;
      }
      String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
      if (UNSUPPORTED_MEMTIER_OPTIONS.contains(name)) {
        throw new ConfigException(
            "memtier option '" + name + "' is not supported by loadgen (see --help)");
      }
    }
  }

  /** Validates the parsed fields. */
  public LoadgenConfig toConfig() {
    requireRange("--port", port, 1, 65535);
    requireRange("--threads", threads, 1, 1024);
    requireRange("--clients", clients, 1, 100_000);
    requireRange("--pipeline", pipeline, 1, 100_000);
    requireRange("--run-count", runCount, 1, 1000);
    requireRange("--multi-key-get", multiKeyGet, 0, 100_000);
    requireRange("--metrics-port", metricsPort, 0, 65535);
    requireRange("--connection-timeout", connectionTimeout, 1, 3600);
    if (server.isBlank()) {
      throw new ConfigException("--server: must not be empty");
    }
    rejectOptionLike("--server", server);
    rejectOptionLike("--json-out-file", jsonOutFile == null ? null : jsonOutFile.toString());
    rejectOptionLike("--hdr-file-prefix", hdrFilePrefix);
    Protocol proto = Protocol.parse(protocol);
    Ratio mix = Ratio.parse(ratio);
    KeyPatterns patterns = KeyPatterns.parse(keyPattern);
    validateKeyPrefix();
    if (keyMinimum < 0) {
      throw new ConfigException("--key-minimum: must be >= 0, got " + keyMinimum);
    }
    if (keyMaximum < keyMinimum) {
      throw new ConfigException(
          "--key-maximum: must be >= --key-minimum (" + keyMinimum + "), got " + keyMaximum);
    }
    long keyCount = keyMaximum - keyMinimum + 1;
    int totalClients = threads * clients;
    if (patterns.anyParallel() && keyCount < totalClients) {
      throw new ConfigException(
          "--key-pattern: P gives every client its own keys, but the range has "
              + keyCount
              + " keys for "
              + totalClients
              + " clients");
    }
    double zipfExponent = zipfExponent(patterns);
    double median = keyMedian != null ? keyMedian : (keyMinimum + keyMaximum) / 2.0;
    double stddev = keyStddev != null ? keyStddev : (keyMaximum - keyMinimum) / 6.0;
    if (!(stddev >= 0)) {
      throw new ConfigException("--key-stddev: must be >= 0, got " + stddev);
    }
    IntRange sizes = dataSizes();
    IntRange expiry = IntRange.parse("--expiry-range", expiryRange);

    boolean allKeys = false;
    long requestsPerClient = 0;
    int seconds = 0;
    if (testTime != null && requests != null) {
      throw new ConfigException("--test-time and --requests are mutually exclusive");
    }
    if (testTime != null) {
      requireRange("--test-time", testTime, 1, 31_536_000);
      seconds = testTime;
    } else if (requests == null) {
      requestsPerClient = 10_000;
    } else if (requests.equals("allkeys")) {
      allKeys = true;
    } else {
      try {
        requestsPerClient = Long.parseLong(requests.trim());
      } catch (NumberFormatException e) {
        throw new ConfigException(
            "--requests: expected a number or 'allkeys', got '" + requests + "'");
      }
      if (requestsPerClient < 1) {
        throw new ConfigException("--requests: must be >= 1, got " + requestsPerClient);
      }
    }

    int rate = 0;
    if (rateLimiting != null) {
      requireRange("--rate-limiting", rateLimiting, 1, 10_000_000);
      rate = rateLimiting;
    }
    ThinkTime think = thinkTime == null ? ThinkTime.NONE : ThinkTime.parse(thinkTime);
    double openRate = 0;
    if (openLoopRate != null) {
      if (!(openLoopRate > 0) || openLoopRate.isInfinite()) {
        throw new ConfigException("--open-loop-rate: must be > 0 requests/s, got " + openLoopRate);
      }
      if (rate > 0 || think.enabled()) {
        throw new ConfigException(
            "--open-loop-rate: cannot be combined with --rate-limiting or --think-time"
                + " (open loop sets the send times itself)");
      }
      openRate = openLoopRate;
    }
    if (!(openLoopRampSeconds >= 0) || Double.isInfinite(openLoopRampSeconds)) {
      throw new ConfigException("--open-loop-ramp-s: must be >= 0 s, got " + openLoopRampSeconds);
    }
    if (openLoopRampSeconds > 0 && openLoopRate == null) {
      throw new ConfigException(
          "--open-loop-ramp-s: needs --open-loop-rate (it ramps the open loop)");
    }
    if (openLoopRampSeconds > 0 && seconds > 0 && openLoopRampSeconds > seconds) {
      throw new ConfigException(
          "--open-loop-ramp-s: "
              + openLoopRampSeconds
              + " s is longer than the run (--test-time "
              + seconds
              + " s)");
    }
    if (hdrFilePrefix != null && hdrFilePrefix.isBlank()) {
      throw new ConfigException("--hdr-file-prefix: must not be empty");
    }
    long seed = randomize ? System.nanoTime() : DEFAULT_SEED;
    return new LoadgenConfig(
        server,
        port,
        proto,
        threads,
        clients,
        mix,
        patterns,
        keyPrefix,
        keyMinimum,
        keyMaximum,
        median,
        stddev,
        zipfExponent,
        sizes,
        randomData,
        expiry,
        seconds,
        requestsPerClient,
        allKeys,
        multiKeyGet,
        pipeline,
        rate,
        distinctClientSeed,
        randomize,
        seed,
        runCount,
        jsonOutFile,
        hdrFilePrefix,
        parsePercentiles(printPercentiles),
        hideHistogram,
        think,
        openRate,
        openLoopRampSeconds,
        metricsPort,
        quiet,
        pinThreads,
        connectionTimeout * 1000);
  }

  /**
   * memtier's {@code --key-zipf-exp}: in (0, 5), default 1. Given without a Z pattern it would
   * change nothing, so that is an error too.
   */
  private double zipfExponent(KeyPatterns patterns) {
    if (keyZipfExp != null) {
      if (!(keyZipfExp > 0 && keyZipfExp < MAX_ZIPF_EXPONENT)) {
        throw new ConfigException(
            "--key-zipf-exp: must be in (0, 5) as in memtier, got " + keyZipfExp);
      }
      if (!patterns.anyZipf()) {
        throw new ConfigException(
            "--key-zipf-exp: only the Z key pattern uses it, but --key-pattern is "
                + patterns
                + " (e.g. --key-pattern=Z:Z)");
      }
    }
    if (patterns.anyZipf() && keyMaximum < 1) {
      throw new ConfigException(
          "--key-pattern: Z draws keys from 1 up (as memtier does), so --key-maximum must be"
              + " >= 1, got "
              + keyMaximum);
    }
    return keyZipfExp == null ? 1.0 : keyZipfExp;
  }

  private IntRange dataSizes() {
    if (dataSize != null && dataSizeRange != null) {
      throw new ConfigException("--data-size and --data-size-range are mutually exclusive");
    }
    if (dataSizeRange != null) {
      IntRange r = IntRange.parse("--data-size-range", dataSizeRange);
      if (r.min() < 1 || r.max() > 64 * 1024 * 1024) {
        throw new ConfigException(
            "--data-size-range: sizes must be in 1..67108864 bytes, got '" + dataSizeRange + "'");
      }
      return r;
    }
    int size = dataSize == null ? 32 : dataSize;
    requireRange("--data-size", size, 1, 64 * 1024 * 1024);
    return new IntRange(size, size);
  }

  private void validateKeyPrefix() {
    if (keyPrefix.length() > 200) {
      throw new ConfigException(
          "--key-prefix: at most 200 characters (keys must stay under 250), got "
              + keyPrefix.length());
    }
    for (int i = 0; i < keyPrefix.length(); i++) {
      char ch = keyPrefix.charAt(i);
      if (ch <= ' ' || ch >= 127) {
        throw new ConfigException(
            "--key-prefix: only printable ASCII without spaces, got '" + keyPrefix + "'");
      }
    }
  }

  /** Parses {@code "50,99,99.9"}. */
  static List<Double> parsePercentiles(String text) {
    List<Double> out = new ArrayList<>();
    for (String part : text.split(",", -1)) {
      double p;
      try {
        p = Double.parseDouble(part.trim());
      } catch (NumberFormatException e) {
        throw new ConfigException(
            "--print-percentiles: expected numbers such as 50,99,99.9, got '" + text + "'");
      }
      if (!(p > 0 && p <= 100)) {
        throw new ConfigException(
            "--print-percentiles: each percentile must be in (0, 100], got '" + part.trim() + "'");
      }
      out.add(p);
    }
    return out;
  }

  /**
   * A host or file name that starts with {@code -} is an option picocli took for the value, as in
   * {@code -s --bogus}: reported as such instead of as an unresolvable host or a file named so.
   */
  private static void rejectOptionLike(String option, String value) {
    if (value != null && value.startsWith("-")) {
      throw new ConfigException(
          option + ": expected a value, got the option '" + value + "' (misspelled or unknown?)");
    }
  }

  private static void requireRange(String option, long value, long min, long max) {
    if (value < min || value > max) {
      throw new ConfigException(
          String.format(Locale.ROOT, "%s: must be in %d..%d, got %d", option, min, max, value));
    }
  }

  /** Version string for {@code --version}. */
  static final class Version implements picocli.CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = LoadgenCommand.class.getPackage().getImplementationVersion();
      return new String[] {"cachelab loadgen " + (v == null ? "dev" : v)};
    }
  }
}
