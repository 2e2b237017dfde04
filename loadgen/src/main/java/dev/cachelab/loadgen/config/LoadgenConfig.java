package dev.cachelab.loadgen.config;

import java.nio.file.Path;
import java.util.List;

/**
 * Everything a run needs, validated. Built once on the main thread by {@code LoadgenCommand} and
 * then only read (by every thread).
 *
 * @param requestsPerClient requests each client sends, or 0 when the run is timed ({@code
 *     testTimeSeconds > 0}); with {@code allKeys} the engine sizes it per client (see {@link
 *     #requestsFor(long)})
 * @param rateLimitPerConnection memtier {@code --rate-limiting}: max requests per second per
 *     connection, 0 = unlimited
 * @param openLoopRate extension: total Poisson arrival rate in requests per second over all
 *     connections, 0 = closed loop
 * @param openLoopRampSeconds extension: with an open loop, the arrival rate rises linearly from 0
 *     to {@code openLoopRate} over this many seconds from the start (0 = full at once)
 * @param percentiles the percentiles printed and written to the JSON, e.g. 50, 99, 99.9
 * @param pinThreads extension: pin engine thread i to the i-th allowed CPU
 * @param keyZipfExponent memtier {@code --key-zipf-exp}, the exponent of the Z key pattern
 */
public record LoadgenConfig(
    String server,
    int port,
    Protocol protocol,
    int threads,
    int clientsPerThread,
    Ratio ratio,
    KeyPatterns keyPatterns,
    String keyPrefix,
    long keyMinimum,
    long keyMaximum,
    double keyMedian,
    double keyStddev,
    double keyZipfExponent,
    IntRange dataSize,
    boolean randomData,
    IntRange expiryRange,
    int testTimeSeconds,
    long requestsPerClient,
    boolean allKeys,
    int multiKeyGet,
    int pipeline,
    int rateLimitPerConnection,
    boolean distinctClientSeed,
    boolean randomize,
    long seed,
    int runCount,
    Path jsonOutFile,
    String hdrFilePrefix,
    List<Double> percentiles,
    boolean hideHistogram,
    ThinkTime thinkTime,
    double openLoopRate,
    double openLoopRampSeconds,
    int metricsPort,
    boolean quiet,
    boolean pinThreads,
    int connectTimeoutMillis) {

  public LoadgenConfig {
    percentiles = List.copyOf(percentiles);
  }

  /** Total connections: threads times clients per thread. */
  public int totalClients() {
    return threads * clientsPerThread;
  }

  /** Number of keys in {@code [keyMinimum, keyMaximum]}. */
  public long keyCount() {
    return keyMaximum - keyMinimum + 1;
  }

  public boolean openLoop() {
    return openLoopRate > 0;
  }

  public boolean timed() {
    return testTimeSeconds > 0;
  }

  /**
   * Requests a client sends in a request-counted run. With {@code -n allkeys} this is the size of
   * the client's own sub-range under {@code P:P} (so the clients together touch every key exactly
   * once), otherwise the whole key range.
   *
   * @param clientRangeSize number of keys in this client's sub-range
   */
  public long requestsFor(long clientRangeSize) {
    if (!allKeys) {
      return requestsPerClient;
    }
    return keyPatterns.bothParallel() ? clientRangeSize : keyCount();
  }
}
