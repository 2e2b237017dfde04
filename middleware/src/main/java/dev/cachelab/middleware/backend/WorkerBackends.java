package dev.cachelab.middleware.backend;

import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.servers.ServerGeneration;
import java.io.IOException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A worker's blocking connections, one per server, and the steps every fan-out strategy takes with
 * them: open (arm the deadline, connect if down), send a request as forwarded, mark a failure. One
 * per worker; its thread only.
 *
 * <p>Server list changes: {@link #use} shows the connections of the request's {@link
 * ServerGeneration} by position; a server kept keeps its connection. When the worker turns to the
 * current generation, its connections to servers no longer in it are closed (a request routed
 * before the change reopens one to finish there).
 */
public final class WorkerBackends {
  private static final byte[] CRLF = {'\r', '\n'};

  private final Map<String, BackendConnection> byServer = new HashMap<>();
  private final Supplier<ServerGeneration> currentGeneration;
  private final Watchdog watchdog;
  private BackendConnection[] connections = new BackendConnection[0];
  private ServerGeneration generation;
  private final long armAheadNanos;
  private long timeoutNanos;
  private final long graceNanos;
  private final ReplyLimit replyLimit;

  /**
   * @param armAheadNanos how much earlier than the generation's backend timeout the deadline of a
   *     request is armed, counted from its dequeue (the watchdog's period)
   * @param graceNanos the time a connection set aside still has to answer when the worker comes
   *     back to it after its deadline was spent on another server (see {@link
   *     BackendConnection#setAside})
   * @param replyLimit how much heap one server reply may take
   */
  public WorkerBackends(
      Supplier<ServerGeneration> currentGeneration,
      Watchdog watchdog,
      long armAheadNanos,
      long graceNanos,
      ReplyLimit replyLimit) {
    this.replyLimit = replyLimit;
    this.currentGeneration = currentGeneration;
    this.watchdog = watchdog;
    this.armAheadNanos = armAheadNanos;
    this.graceNanos = graceNanos;
    use(currentGeneration.get());
  }

  /** Shows {@code next}'s servers by position (see the class comment). */
  public void use(ServerGeneration next) {
    if (next == generation) {
      return;
    }
    generation = next;
    timeoutNanos = Math.max(1, next.timeouts().backendTimeoutNanos() - armAheadNanos);
    connections = new BackendConnection[next.size()];
    for (int i = 0; i < connections.length; i++) {
      String server = next.servers().get(i);
      BackendConnection connection = byServer.get(server);
      if (connection == null) {
        connection =
            new BackendConnection(i, next.addresses().get(i), next.health().get(i), replyLimit);
        byServer.put(server, connection);
        watchdog.register(connection);
      }
      connection.serverIndex(i);
      connections[i] = connection;
    }
    if (next == currentGeneration.get() && byServer.size() > connections.length) {
      Iterator<Map.Entry<String, BackendConnection>> it = byServer.entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<String, BackendConnection> entry = it.next();
        if (!next.servers().contains(entry.getKey())) {
          entry.getValue().close();
          watchdog.unregister(entry.getValue());
          it.remove();
        }
      }
    }
  }

  /**
   * The worker is about to block on {@code backend}'s reply after other servers' I/O: its deadline,
   * set aside, is resumed, with a grace period if it was spent meanwhile.
   */
  public void resume(BackendConnection backend) {
    backend.resume(graceNanos);
  }

  public int size() {
    return connections.length;
  }

  public BackendConnection get(int server) {
    return connections[server];
  }

  /** The deadline of a request dequeued at {@code dequeuedNanos}. */
  public long deadline(long dequeuedNanos) {
    return dequeuedNanos + timeoutNanos;
  }

  /** Connects to every server up front (failures are retried on demand). */
  public void connectAll() {
    for (BackendConnection backend : connections) {
      long now = System.nanoTime();
      backend.arm(now + timeoutNanos, now);
      backend.ensureConnected(now);
      backend.disarmQuietly();
    }
  }

  public void closeAll() {
    for (BackendConnection backend : byServer.values()) {
      backend.close();
      watchdog.unregister(backend);
    }
  }

  /**
   * Arms the deadline for {@code request} and makes sure the connection is up; false if the server
   * is down.
   */
  public static boolean open(BackendConnection backend, long deadline, Request request) {
    boolean open = open(backend, deadline);
    backend.forClient(System.identityHashCode(request.connection));
    return open;
  }

  /** Arms the deadline and makes sure the connection is up; false if the server is down. */
  public static boolean open(BackendConnection backend, long deadline) {
    backend.forClient(0);
    long now = System.nanoTime();
    backend.arm(deadline, now);
    if (!backend.ensureConnected(now)) {
      backend.disarmQuietly();
      return false;
    }
    return true;
  }

  /** Sends the request as forwarded ({@code noreply} stripped: the middleware waits anyway). */
  public static void send(BackendConnection backend, Request request) throws IOException {
    if (!request.idempotent()) {
      backend.reopenIfClosedWhileIdle(System.nanoTime()); // a write is not sent again
    }
    markSent(request);
    if (request.dataLent()) {
      throw new IllegalStateException("a worker's request must hold its data block");
    }
    if (!request.rewrittenForServer()) {
      backend.send(request.bytes(), 0, request.wireLength());
      return;
    }
    backend.beginCompose();
    appendForward(backend, request);
    backend.sendComposed();
  }

  /**
   * Sends the request, reconnecting once if the connection turns out stale (see {@link
   * BackendConnection#reconnectIfStale}).
   */
  public static void sendRetryingStale(BackendConnection backend, Request request)
      throws IOException {
    try {
      send(backend, request);
    } catch (IOException e) {
      if (!backend.reconnectIfStale()) {
        throw e;
      }
      send(backend, request);
    }
  }

  /**
   * Reads the reply to the request sent; if the connection turns out stale (closed before the
   * server sent a byte) and the request is {@linkplain Request#idempotent idempotent}, reconnects,
   * sends the request again and reads that reply. Any other request is not sent again: the server
   * may have applied it before the connection broke (an {@code incr} would count twice).
   */
  public static void readReplyRetryingStale(BackendConnection backend, Request request)
      throws IOException {
    try {
      readReply(backend, request);
    } catch (IOException e) {
      if (!request.idempotent() || !backend.reconnectIfStale()) {
        throw e;
      }
      send(backend, request);
      readReply(backend, request);
    }
  }

  /** Appends the request as forwarded ({@code noreply} stripped) to the server's send buffer. */
  public static void appendForward(SendBuffer backend, Request request) {
    byte[] bytes = request.bytes();
    if (!request.rewrittenForServer()) {
      if (!request.dataLent()) {
        backend.append(bytes, 0, request.wireLength());
        return;
      }
      backend.append(bytes, 0, request.dataOffset()); // the line; the data block where it was read
      appendData(backend, request);
      return;
    }
    backend.append(bytes, 0, request.forwardSkipStart());
    backend.append(
        bytes, request.forwardSkipEnd(), request.lineLength() - request.forwardSkipEnd());
    backend.append(CRLF, 0, 2);
    if (request.command().hasDataBlock()) {
      appendData(backend, request);
    }
  }

  /** The data block and its {@code \r\n}, from the client's read buffer if it is still there. */
  private static void appendData(SendBuffer backend, Request request) {
    backend.append(request.dataArray(), request.dataArrayOffset(), request.dataLength() + 2);
  }

  /**
   * Reads the server's reply to {@code request} in the request's protocol: a RESP value for a redis
   * request, else a memcached meta reply, retrieval reply ({@code VALUE} blocks up to {@code END}),
   * {@code stats} group or one line.
   */
  public static void readReply(BackendConnection backend, Request request) throws IOException {
    backend.readReplyTo(request);
  }

  /** Values found by the last reply to the read {@code request} (its hits). */
  public static int hits(BackendConnection backend, Request request) {
    return request.respCommand() != null ? backend.hitCount() : backend.valueCount();
  }

  public static void appendCrlf(BackendConnection backend) {
    backend.append(CRLF, 0, 2);
  }

  /** Stamps the first send of the request. */
  public static void markSent(Request request) {
    if (request.sentNanos == 0) {
      request.sentNanos = System.nanoTime();
    }
  }

  /** Marks the connection down after a failed send or read; returns whether it was a timeout. */
  public static boolean fail(BackendConnection backend) {
    boolean timedOut = backend.timedOut();
    backend.markDown();
    return timedOut;
  }
}
