package dev.cachelab.middleware.net;

import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.protocol.OpType;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RequestDecoder;
import dev.cachelab.middleware.routing.RoutingTable;
import dev.cachelab.middleware.stats.ErrorKind;
import dev.cachelab.middleware.stats.ThreadRecorder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The single net thread: a selector loop that accepts clients, reads, decodes complete requests,
 * routes them, stamps and enqueues them. Requests the middleware answers itself (stats, rejected
 * input) are completed here, in order with the client's other replies. A failing connection is
 * closed alone; the loop never dies from one client.
 *
 * <p>Backpressure: with a bounded queue, a connection that finds the queue full stops being read
 * (its unparsed bytes stay buffered) until a worker makes room and wakes the selector. A connection
 * whose backlog passes its high-water mark (see {@link ClientConnection}) stops being read until
 * the thread that drains it below the low-water mark asks for it to be resumed ({@link
 * #resumeReading}). A connection that cannot grow its read buffer within the {@link BufferBudget}
 * is closed with {@code SERVER_ERROR out of memory}, unless another connection has held a grown
 * read buffer for longer (a stalled or trickling partial request): that one is closed instead,
 * oldest first. With an idle timeout, a connection with nothing in flight and no input for that
 * long is closed.
 *
 * <p>With event loops ({@code --event-loops}) there are several net threads: the first accepts and
 * hands each new client to the next thread in turn ({@link #shareAccepts}), and each serves its own
 * clients through its own {@link RequestDispatch}.
 */
public final class NetThread implements Runnable, ConnectionEvents {
  private final Selector selector;
  private final ServerSocketChannel server; // null: a net thread that does not accept
  private final RequestDispatch queue;
  private final DirectScratch scratch = new DirectScratch();
  private final ConcurrentLinkedQueue<SocketChannel> adopted = new ConcurrentLinkedQueue<>();
  private List<NetThread> acceptFor = List.of();
  private int nextAcceptor;
  private final Supplier<RoutingTable> routes;
  private final ThreadRecorder recorder;
  private final Supplier<byte[]> statsReply;
  private final Supplier<RequestDecoder> decoders;
  private final ArrayDeque<ClientConnection> paused = new ArrayDeque<>();
  private final ConcurrentLinkedQueue<ClientConnection> toResume = new ConcurrentLinkedQueue<>();
  private final BufferBudget budget;
  // Connections holding a grown read buffer, oldest first (net thread only).
  private final HolderList grownHolders = new HolderList();
  private final AtomicLong budgetEvictions = new AtomicLong();
  private long nextHolderPruneNanos;
  private final long idleTimeoutNanos;
  private final int clientWindow;
  private long round; // selector rounds (net thread only): a chain joins requests of one round
  private long nextIdleScanNanos;
  private final AtomicLong idleClosed = new AtomicLong();
  private final SelectionKey serverKey;
  // After a failed accept (out of file descriptors: the pending connection stays, so the key stays
  // ready) accepting pauses until this time, instead of the loop retrying it at full speed.
  private long acceptPausedUntilNanos;
  private boolean acceptPaused;
  private final AtomicLong acceptFailures = new AtomicLong();
  private final AtomicInteger connections = new AtomicInteger();
  private long totalConnections;
  private volatile boolean running = true;
  private volatile boolean stopAccepting;

  /**
   * Binds the listening socket (so the port is known before the thread starts); with {@code listen}
   * null it does not accept, and serves the clients another net thread hands it.
   *
   * @param clientWindow forwarded requests of one client connection with the workers at once, taken
   *     by one worker together (see {@link ClientConnection}): the worker batch
   */
  public NetThread(
      InetSocketAddress listen,
      RequestDispatch queue,
      Supplier<RoutingTable> routes,
      ThreadRecorder recorder,
      Supplier<byte[]> statsReply,
      Supplier<RequestDecoder> decoders,
      BufferBudget budget,
      long idleTimeoutNanos,
      int clientWindow)
      throws IOException {
    this.selector = Selector.open();
    if (listen == null) {
      this.server = null;
      this.serverKey = null;
    } else {
      this.server = ServerSocketChannel.open();
      try {
        server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        server.bind(listen, 1024);
      } catch (IOException e) {
        server.close();
        selector.close();
        throw e;
      }
      server.configureBlocking(false);
      this.serverKey = server.register(selector, SelectionKey.OP_ACCEPT);
    }
    this.queue = queue;
    this.routes = routes;
    this.recorder = recorder;
    this.statsReply = statsReply;
    this.decoders = decoders;
    this.budget = budget;
    this.idleTimeoutNanos = idleTimeoutNanos;
    this.clientWindow = Math.max(1, clientWindow);
    queue.onRoom(selector::wakeup);
    queue.attach(selector);
  }

  /**
   * Before the threads start: new clients go to {@code threads} in turn (this one among them), not
   * all to this accepting thread.
   */
  public void shareAccepts(List<NetThread> threads) {
    acceptFor = List.copyOf(threads);
  }

  /** Any thread: a client accepted by another net thread, to be served by this one. */
  private void adopt(SocketChannel channel) {
    adopted.add(channel);
    selector.wakeup();
  }

  public InetSocketAddress localAddress() throws IOException {
    return (InetSocketAddress) server.getLocalAddress();
  }

  /** Clients connected now. Any thread. */
  public int connections() {
    return connections.get();
  }

  /** Clients accepted since start. Any thread (approximate). */
  public long totalConnections() {
    return totalConnections;
  }

  /** Any thread: close the listening socket; connected clients are still served. */
  public void stopAccepting() {
    stopAccepting = true;
    selector.wakeup();
  }

  /** Any thread: end the loop and close every client. */
  public void stop() {
    running = false;
    selector.wakeup();
  }

  /**
   * A worker queues a connection's next chain of pipelined requests after completing the previous
   * one. Its queue length is not sampled (the sampler is the net thread's single-writer recorder).
   */
  @Override
  public void enqueueWaiting(Request request) {
    queue.enqueue(request);
  }

  @Override
  public void connectionClosed() {
    connections.decrementAndGet();
  }

  /** Any thread: a connection paused for its backlog may be read again. */
  @Override
  public void resumeReading(ClientConnection connection) {
    toResume.add(connection);
    selector.wakeup();
  }

  /** Accepts that failed (each paused accepting for {@link #ACCEPT_PAUSE_NANOS}). Any thread. */
  public long acceptFailures() {
    return acceptFailures.get();
  }

  /**
   * Connections closed because a newer request needed their budget (oldest partial request first).
   * Any thread.
   */
  public long budgetEvictions() {
    return budgetEvictions.get();
  }

  /** Connections closed by the idle timeout. Any thread. */
  public long idleClosed() {
    return idleClosed.get();
  }

  @Override
  public void run() {
    scratch.claim();
    try {
      while (running) {
        round++;
        if (stopAccepting && server != null && server.isOpen()) {
          closeServer();
        }
        selector.select(this::processKey, selectTimeoutMillis()); // no selected-key set to fill
        registerAdopted();
        resumePaused();
        resumeDrained();
        closeIdle();
        pruneHolders();
        resumeAccepting();
        queue.publish(); // the round's requests, with one wake-up per worker batch
      }
    } catch (IOException e) {
      // The selector itself failed: no client can be served any more. Fatal (see FatalErrors).
      throw new java.io.UncheckedIOException("net thread: selector failed", e);
    } finally {
      closeAll();
    }
  }

  /**
   * 0 (no timeout) unless something needs a look without an event: requests left to running workers
   * (1 ms, see {@link RequestQueue#awaitsWorkers}), paused connections (10 ms), the idle scan (1
   * s).
   */
  private long selectTimeoutMillis() {
    if (queue.awaitsWorkers()) {
      return 1;
    }
    if (!paused.isEmpty()) {
      return 10;
    }
    if (acceptPaused) {
      return ACCEPT_PAUSE_NANOS / 1_000_000;
    }
    return idleTimeoutNanos > 0 ? 1000 : 0;
  }

  private void processKey(SelectionKey key) {
    if (key.attachment() == null) {
      accept();
      return;
    }
    if (key.attachment() instanceof SelectorTask task) {
      task.onSelected(key);
      return;
    }
    ClientConnection connection = (ClientConnection) key.attachment();
    try {
      if (key.isValid() && key.isWritable()) {
        connection.onWritable();
      }
      if (key.isValid() && key.isReadable() && !connection.inputClosed) {
        onReadable(connection);
      }
    } catch (IOException | CancelledKeyException e) {
      connection.close();
    } catch (RuntimeException e) {
      // A bug triggered by one connection closes that connection, not the loop.
      reportOnce(e);
      connection.close();
    }
    if (connection.inputClosed && connection.isClosed()) {
      connection
          .dropReadBuffer(); // closed in this round: its buffer goes now, not at deregistration
    }
  }

  private boolean reported;

  private void reportOnce(RuntimeException e) {
    if (!reported) {
      reported = true;
      System.err.println("cachelab middleware: closed a client after an unexpected error: " + e);
    }
  }

  private void accept() {
    while (true) {
      SocketChannel channel;
      try {
        channel = server.accept();
        if (channel == null) {
          return;
        }
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        NetThread owner =
            acceptFor.isEmpty() ? this : acceptFor.get(nextAcceptor++ % acceptFor.size());
        if (owner == this) {
          register(channel);
        } else {
          owner.adopt(channel);
        }
      } catch (IOException e) {
        // One failed accept (e.g. out of file descriptors) must not stop the loop, nor spin it: the
        // pending connection keeps the key ready, so accepting pauses (as memcached does at its
        // connection limit) and resumes after ACCEPT_PAUSE_NANOS.
        acceptFailures.incrementAndGet();
        if (serverKey.isValid()) {
          serverKey.interestOps(0);
          acceptPaused = true;
          acceptPausedUntilNanos = System.nanoTime() + ACCEPT_PAUSE_NANOS;
        }
        return;
      }
    }
  }

  private static final long ACCEPT_PAUSE_NANOS = 100_000_000L;

  private void register(SocketChannel channel) throws IOException {
    SocketClientChannel client = new SocketClientChannel(channel, scratch);
    ClientConnection connection =
        new ClientConnection(client, this, budget, decoders.get(), clientWindow);
    connection.lendData(queue.forwardsInRound());
    client.attach(channel.register(selector, SelectionKey.OP_READ, connection));
    connections.incrementAndGet();
    totalConnections++;
  }

  private void registerAdopted() {
    SocketChannel channel;
    while ((channel = adopted.poll()) != null) {
      try {
        register(channel);
      } catch (IOException e) {
        acceptFailures.incrementAndGet();
        try {
          channel.close();
        } catch (IOException ignored) {
          // already failed
        }
      }
    }
  }

  private void resumeAccepting() {
    if (acceptPaused && System.nanoTime() - acceptPausedUntilNanos >= 0) {
      acceptPaused = false;
      if (serverKey.isValid()) {
        serverKey.interestOps(SelectionKey.OP_ACCEPT);
      }
    }
  }

  /**
   * Reads per round from one connection at most, while each read fills its buffer: a pipeline
   * larger than the base buffer (16 SETs of 1 KiB) is decoded in one round, so its requests go to
   * the workers as one chain.
   */
  static final int MAX_READS_PER_ROUND = 8;

  private void onReadable(ClientConnection connection) throws IOException {
    for (int reads = 0; reads < MAX_READS_PER_ROUND; reads++) {
      readOnce(connection);
      if (!connection.readsOn()) {
        return;
      }
    }
  }

  private void readOnce(ClientConnection connection) throws IOException {
    int n = connection.read();
    while (n == ClientConnection.OVER_BUDGET && evictOldestHolder(connection)) {
      n = connection.read();
    }
    if (n == ClientConnection.OVER_BUDGET) {
      connection.closeWithError(connection.parser.outOfMemoryReply());
      return;
    }
    trackGrownBuffer(connection);
    if (n < 0) {
      // End of input (a half-close, as `nc -N` sends): the requests read before it are answered,
      // then the connection closes; an incomplete request at the end is dropped.
      connection.closeAfterReplies();
      return;
    }
    long now = System.nanoTime();
    connection.lastActivityNanos = now;
    decodeAvailable(connection, now);
  }

  private void resumeDrained() {
    ClientConnection c;
    while ((c = toResume.poll()) != null) {
      if (c.isClosed() || c.paused) {
        continue; // closed, or waiting for queue room (resumePaused reads it)
      }
      c.setReading(true);
      decodeAvailable(c, System.nanoTime());
    }
  }

  /** Once a second with an idle timeout: closes connections idle longer than it. */
  private void closeIdle() {
    if (idleTimeoutNanos <= 0) {
      return;
    }
    long now = System.nanoTime();
    if (now - nextIdleScanNanos < 0) {
      return;
    }
    nextIdleScanNanos = now + 1_000_000_000L;
    for (SelectionKey key : selector.keys()) {
      if (key.attachment() instanceof ClientConnection c
          && now - c.lastActivityNanos > idleTimeoutNanos
          && c.isIdle()) {
        idleClosed.incrementAndGet();
        c.close();
      }
    }
  }

  /** Decodes and dispatches every complete request in the connection's buffer. */
  private void decodeAvailable(ClientConnection c, long receivedNanos) {
    while (!c.inputClosed && c.parseStart < c.readEnd) {
      if (!queue.hasRoom()) {
        pause(c);
        break;
      }
      if (c.backlogged() && c.pauseForBacklog()) {
        break;
      }
      if (c.current == null) {
        c.current = c.acquire();
      }
      Request request = c.current;
      int consumed = c.parser.decode(c.readBuf, c.parseStart, c.readEnd, request);
      if (consumed == 0) {
        break;
      }
      c.parseStart += consumed;
      if (request.status() == null) {
        continue; // skipped bytes of a rejected data block
      }
      c.current = null;
      if (request.dataLent()) {
        c.noteLent(request);
      }
      request.receivedNanos = receivedNanos;
      dispatch(c, request);
    }
    boolean reserved = c.reserveScratch();
    while (!reserved && evictOldestHolder(c)) {
      reserved = c.reserveScratch();
    }
    if (!reserved) {
      c.closeWithError(c.parser.outOfMemoryReply());
      return;
    }
    c.compact();
    trackGrownBuffer(c);
  }

  /**
   * Keeps {@link #grownHolders} in step with the connection's read buffer: added while a partial
   * request sits in a buffer grown past its base size (a large or incomplete request), removed when
   * the request is decoded.
   */
  private void trackGrownBuffer(ClientConnection c) {
    boolean grown = c.grownWithPartialRequest() && !c.isClosed();
    if (grown && !c.holdsGrownBuffer) {
      c.holdsGrownBuffer = true;
      c.grownSinceNanos = System.nanoTime();
      grownHolders.add(c);
    } else if (!grown && c.holdsGrownBuffer) {
      c.holdsGrownBuffer = false;
      grownHolders.remove(c);
    }
  }

  /**
   * The budget cannot take what {@code requester} needs: closes the connection that has held a
   * grown read buffer longest, if it has held it longer than the requester (a stalled or trickling
   * partial request), so that a few stalled senders cannot shut every client with a large request
   * out. Returns whether one was closed.
   */
  private boolean evictOldestHolder(ClientConnection requester) {
    ClientConnection victim;
    while ((victim = grownHolders.oldest()) != null) {
      if (victim.isClosed()) {
        victim.holdsGrownBuffer = false;
        grownHolders.remove(victim);
        continue;
      }
      if (victim == requester) {
        return false; // the requester's own request is the oldest
      }
      grownHolders.remove(victim);
      victim.holdsGrownBuffer = false;
      budgetEvictions.incrementAndGet();
      victim.closeWithError(victim.parser.outOfMemoryReply());
      victim.dropReadBuffer();
      return true;
    }
    return false;
  }

  /** Every 100 ms: forgets closed connections in {@link #grownHolders} (closed by workers). */
  private void pruneHolders() {
    if (grownHolders.isEmpty()) {
      return;
    }
    long now = System.nanoTime();
    if (now - nextHolderPruneNanos < 0) {
      return;
    }
    nextHolderPruneNanos = now + 100_000_000L;
    ClientConnection c = grownHolders.oldest();
    while (c != null) {
      ClientConnection next = HolderList.next(c);
      if (c.isClosed()) {
        c.holdsGrownBuffer = false;
        grownHolders.remove(c);
        c.dropReadBuffer();
      }
      c = next;
    }
  }

  /**
   * The reply to a meta write with the {@code C} flag while writes go to several servers: the cas
   * unique one server gave matches there only, so the write would be applied on that server and
   * refused on the others (the client told it failed, the replicas differing).
   */
  private static final byte[] META_CAS_REFUSED =
      ("CLIENT_ERROR compare-and-swap by a meta command (C flag) is not supported while writes go"
              + " to several servers (each numbers its cas uniques itself): use gets and cas\r\n")
          .getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  private void dispatch(ClientConnection c, Request request) {
    if (request.status() == Request.Status.FORWARD
        && request.metaCompareAndSwap()
        && routes.get().router().replicatesWrites()) {
      request.refuse(META_CAS_REFUSED);
    }
    switch (request.status()) {
      case FORWARD -> {
        boolean reserved = c.reserveDecoded(request);
        while (!reserved && evictOldestHolder(c)) {
          reserved = c.reserveDecoded(request);
        }
        if (!reserved) {
          c.closeWithError(c.parser.outOfMemoryReply());
          return;
        }
        RoutingTable table = routes.get();
        table.router().route(request);
        request.generation = table.generation();
        switch (c.admitForwarded(request, round)) {
          case HEAD -> recorder.recordQueueLength(queue.stage(request));
          case JOINED -> recorder.recordQueueLength(queue.stageJoined(request));
          case WAITING -> {}
        }
      }
      case LOCAL -> {
        // Answered here: a reply the parser made (redis PING, ECHO), else the statistics.
        byte[] reply = request.immediateReply();
        completeHere(c, request, reply != null ? reply : statsReply.get(), null);
      }
      case REJECT -> completeHere(c, request, request.immediateReply(), ErrorKind.CLIENT_ERROR);
      case REJECT_AND_CLOSE -> {
        completeHere(c, request, request.immediateReply(), ErrorKind.CLIENT_ERROR);
        c.closeAfterReplies();
      }
      case QUIT -> {
        if (request.immediateReply() != null) {
          completeHere(c, request, request.immediateReply(), null); // redis: +OK
        }
        c.closeAfterReplies();
      }
    }
  }

  private void completeHere(ClientConnection c, Request request, byte[] reply, ErrorKind error) {
    OpType op = request.opType();
    long received = request.receivedNanos;
    c.registerInFlight(request);
    long written = c.complete(request, ByteBuffer.wrap(reply));
    recorder.recordRequest(op, written - received, 0, 0, 0, 0, 0);
    if (error != null) {
      recorder.recordError(op, error);
    }
  }

  private void pause(ClientConnection c) {
    if (!c.paused) {
      c.paused = true;
      c.setReading(false);
      paused.addLast(c);
    }
  }

  private void resumePaused() {
    while (!paused.isEmpty() && queue.hasRoom()) {
      ClientConnection c = paused.pollFirst();
      c.paused = false;
      if (c.isClosed()) {
        continue;
      }
      c.setReading(true);
      decodeAvailable(c, System.nanoTime());
    }
  }

  private void closeServer() {
    if (server == null) {
      return;
    }
    try {
      server.close();
    } catch (IOException ignored) {
      // shutting down
    }
  }

  private void closeAll() {
    closeServer();
    for (SelectionKey key : selector.keys()) {
      if (key.attachment() instanceof ClientConnection c) {
        c.close();
      }
    }
    queue.close();
    SocketChannel channel;
    while ((channel = adopted.poll()) != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // shutting down
      }
    }
    try {
      selector.close();
    } catch (IOException ignored) {
      // shutting down
    }
  }
}
