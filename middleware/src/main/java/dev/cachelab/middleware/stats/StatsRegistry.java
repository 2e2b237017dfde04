package dev.cachelab.middleware.stats;

import dev.cachelab.middleware.config.MiddlewareConfig;
import dev.cachelab.middleware.protocol.OpType;
import dev.cachelab.middleware.servers.BackendHealth;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * All {@link ThreadRecorder}s (one per worker and one for the net thread) and the live gauges, read
 * by the reporter, the metrics endpoint and the {@code stats} command. Built before the threads
 * start; read-only afterwards, so any thread may read it.
 */
public final class StatsRegistry {
  private final List<ThreadRecorder> recorders = new ArrayList<>();
  private volatile List<String> servers;
  private final int workers;
  private final long startMillis = System.currentTimeMillis();
  private IntSupplier queueLength = () -> 0;
  private IntSupplier connections = () -> 0;
  private LongSupplier totalConnections = () -> 0;
  private volatile List<BackendHealth> health = List.of();
  private final List<NamedValue> values = new ArrayList<>();

  /** A live value shown in {@code stats} and {@code /metrics} (a gauge). */
  public record NamedValue(String name, String help, LongSupplier value) {}

  public StatsRegistry(List<String> servers, int workers) {
    this.servers = List.copyOf(servers);
    this.workers = workers;
  }

  /** A new recorder for one thread. Call before that thread starts. */
  public ThreadRecorder newRecorder() {
    ThreadRecorder recorder = new ThreadRecorder(MiddlewareConfig.MAX_SERVERS);
    recorders.add(recorder);
    return recorder;
  }

  public void gauges(IntSupplier queueLength, IntSupplier connections, LongSupplier total) {
    this.queueLength = queueLength;
    this.connections = connections;
    this.totalConnections = total;
  }

  /** Adds a live value; call before the threads start. */
  public void value(String name, String help, LongSupplier value) {
    values.add(new NamedValue(name, help, value));
  }

  public List<NamedValue> values() {
    return values;
  }

  /**
   * The servers in use and their shared health, in server order (for ejection counts); again after
   * each change of the server list. Per-server request counts are by position in the list.
   */
  public void servers(List<String> servers, List<BackendHealth> health) {
    this.health = List.copyOf(health);
    this.servers = List.copyOf(servers);
  }

  /** Server {@code i}'s health, or null if none was registered. */
  public BackendHealth health(int server) {
    return server < health.size() ? health.get(server) : null;
  }

  List<ThreadRecorder> recorders() {
    return recorders;
  }

  public List<String> servers() {
    return servers;
  }

  public int workers() {
    return workers;
  }

  public int queueLength() {
    return queueLength.getAsInt();
  }

  public int connections() {
    return connections.getAsInt();
  }

  /** Cumulative counter over every thread (see ThreadRecorder slots). */
  long total(OpType op, int slot) {
    long sum = 0;
    for (ThreadRecorder r : recorders) {
      sum += r.counter(op, slot);
    }
    return sum;
  }

  public long requests(OpType op) {
    return total(op, ThreadRecorder.REQUESTS);
  }

  public long keysRequested(OpType op) {
    return total(op, ThreadRecorder.KEYS_REQUESTED);
  }

  public long hits(OpType op) {
    return total(op, ThreadRecorder.HITS);
  }

  public long errors(OpType op, ErrorKind kind) {
    return total(op, ThreadRecorder.ERRORS + kind.ordinal());
  }

  public long serverRequests(int server) {
    long sum = 0;
    for (ThreadRecorder r : recorders) {
      sum += r.serverRequests(server);
    }
    return sum;
  }

  public long serverErrors(int server) {
    long sum = 0;
    for (ThreadRecorder r : recorders) {
      sum += r.serverErrors(server);
    }
    return sum;
  }

  public long busyNanos() {
    long sum = 0;
    for (ThreadRecorder r : recorders) {
      sum += r.busyNanos();
    }
    return sum;
  }

  /** The reply to {@code stats}: memcached's {@code STAT <name> <value>} lines and {@code END}. */
  public byte[] statsReply() {
    StringBuilder s = new StringBuilder(1024);
    long now = System.currentTimeMillis();
    stat(s, "pid", ProcessHandle.current().pid());
    stat(s, "uptime", (now - startMillis) / 1000);
    stat(s, "time", now / 1000);
    stat(s, "version", "cachelab-middleware");
    stat(s, "threads", workers);
    stat(s, "curr_connections", connections());
    stat(s, "total_connections", totalConnections.getAsLong());
    stat(s, "queue_length", queueLength());
    for (NamedValue v : values) {
      stat(s, v.name(), v.value().getAsLong());
    }
    long getKeys = keysRequested(OpType.GET) + keysRequested(OpType.MULTIGET);
    long getHits = hits(OpType.GET) + hits(OpType.MULTIGET);
    stat(s, "cmd_get", getKeys);
    stat(s, "cmd_set", requests(OpType.SET));
    stat(s, "get_hits", getHits);
    stat(s, "get_misses", getKeys - getHits);
    for (OpType op : OpType.recorded()) {
      stat(s, "requests_" + op.label(), requests(op));
      for (ErrorKind kind : ErrorKind.values()) {
        stat(s, "errors_" + op.label() + "_" + kind.label(), errors(op, kind));
      }
    }
    for (int i = 0; i < servers.size(); i++) {
      stat(s, "server_" + i + "_address", servers.get(i));
      stat(s, "server_" + i + "_requests", serverRequests(i));
      stat(s, "server_" + i + "_errors", serverErrors(i));
      BackendHealth h = health(i);
      if (h != null) {
        stat(s, "server_" + i + "_ejected", h.ejected() ? 1 : 0);
        stat(s, "server_" + i + "_ejections", h.ejections());
        stat(s, "server_" + i + "_returns", h.returns());
        stat(s, "server_" + i + "_busy_refusals", h.busyRefusals());
      }
    }
    s.append("END\r\n");
    return s.toString().getBytes(StandardCharsets.US_ASCII);
  }

  private static void stat(StringBuilder s, String name, Object value) {
    s.append("STAT ").append(name).append(' ').append(value).append("\r\n");
  }
}
