package dev.cachelab.middleware.net;

import dev.cachelab.middleware.memory.BufferBudget;
import dev.cachelab.middleware.protocol.ReplySink;
import dev.cachelab.middleware.protocol.Request;
import dev.cachelab.middleware.protocol.RequestDecoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client socket: its read buffer and parser (net thread only), and the in-flight requests whose
 * replies must leave in request order (guarded by this object's monitor, shared by the net thread
 * and the workers that complete requests).
 *
 * <p>One chain of forwarded requests per connection is with the workers at a time: up to {@code
 * window} requests (the worker batch; 1 for the ASL worker) decoded in one round of the net thread,
 * queued as one entry that a single worker takes whole and serves in request order (the requests of
 * one server pipelined on its one connection, as memcached serves a connection's requests one after
 * another). So a pipelined {@code get} never overtakes the {@code set} (or {@code noreply} write)
 * before it. Later forwarded requests wait in {@code waiting}; the worker that completes the last
 * request of a chain queues the next chain from them, so the net thread is not woken.
 *
 * <p>Ordering: the net thread appends each request to {@code inFlight} before it is queued. A
 * worker completing the head request writes its reply straight to the socket; a request completed
 * out of order keeps a copy of its reply until the requests before it are written. The replies of a
 * chain are collected in {@code pendingOut} and written together when its last request completes
 * (one system call for a client's pipeline, as the requests reached the server in one). What the
 * non-blocking socket does not take goes to {@code pendingOut}, flushed when the selector reports
 * the socket writable.
 *
 * <p>Memory: the read buffer is allocated at the first read (an idle connection that never sends
 * holds none), at {@link #BASE_READ_BYTES}; growth past that (a large or incomplete request) and
 * every byte of {@code pendingOut} are reserved from the global {@link BufferBudget}; a connection
 * that cannot reserve is closed with {@code SERVER_ERROR out of memory}. A reply buffer grown for a
 * large reply is given back once it is sent; a read buffer grown for a large request is kept for
 * the next one (still reserved) if it is at most {@link #KEEP_READ_BYTES} and the budget is less
 * than half used, else given back once the request is decoded, so that a client sending 16 KiB
 * values does not allocate and copy a grown buffer for each. Backpressure: when the connection's
 * backlog (reply bytes the client has not taken, plus the requests decoded and not yet answered)
 * reaches {@link #HIGH_WATER_BYTES}, the net thread stops reading it; when unsent reply bytes alone
 * reach that mark, its next request is not queued either. Both resume below {@link
 * #LOW_WATER_BYTES}.
 *
 * <p>Lent data: behind an event loop ({@link #lendData}) a storage command's data block smaller
 * than {@link Request#LEND_LIMIT_BYTES} stays in the read buffer when it is decoded, and the loop
 * copies it from there to the server's send buffer at the end of the round, the value's one copy
 * between the client's bytes and the server's socket. Until then the bytes before {@code
 * parseStart} are not overwritten: the buffer is not compacted (a partial request moved to its
 * front) nor read into from its start again without the lent blocks being copied into their
 * requests first ({@link Request#ownData}); a full buffer with nothing left to decode is read in
 * the next round instead, when the loop has forwarded them. A request that leaves for the workers
 * owns its data block before it goes.
 */
public final class ClientConnection implements ReplySink {
  private static final int POOL_LIMIT = 64;

  /** Read buffer of a connection between requests (grown for larger ones, then shrunk back). */
  static final int BASE_READ_BYTES = 4 * 1024;

  /** Largest grown read buffer kept between requests (see Memory above). */
  static final int KEEP_READ_BYTES = 64 * 1024;

  /** Backlog at which the connection stops being read (and its next request waits). */
  static final long HIGH_WATER_BYTES = 2L << 20;

  /** Backlog below which reading (and queueing) resumes. */
  static final long LOW_WATER_BYTES = 512L << 10;

  /** What a decoded request is counted as in the backlog, beyond its bytes (its objects). */
  static final int REQUEST_OVERHEAD_BYTES = 1024;

  /**
   * A decoded request holding more heap than this (its copy of the wire bytes and its token arrays:
   * an MGET of 290,000 one-byte keys holds about 7 MB for 2 MB of wire bytes) reserves it from the
   * budget while it is in flight, and is not pooled afterwards.
   */
  static final long LARGE_REQUEST_BYTES = 64 * 1024;

  /** Unsent reply capacity kept after a drain; more is given back. */
  private static final int KEEP_PENDING_BYTES = 64 * 1024;

  private static final byte[] NO_BYTES = new byte[0];

  /** Returned by {@link #read()} when the buffer could not grow within the budget. */
  static final int OVER_BUDGET = -2;

  private final ClientChannel channel;
  private final ConnectionEvents net;
  private final BufferBudget budget;
  private final AtomicLong readReservedBytes = new AtomicLong();
  private volatile long backlogBytes;

  // Net thread only.
  final RequestDecoder parser;
  // Allocated at the first read: a connection that never sends holds no read buffer.
  byte[] readBuf = NO_BYTES;
  ByteBuffer readView = ByteBuffer.wrap(readBuf);
  int parseStart;
  int readEnd;
  Request current;
  boolean inputClosed;
  boolean paused;
  boolean lastReadFilled; // the last read filled the buffer: more input may be waiting
  // Holds a read buffer grown past the base size (a large or incomplete request), since when: the
  // net thread's eviction order (see NetThread#evictOldestHolder).
  boolean holdsGrownBuffer;
  ClientConnection holderPrev; // the net thread's HolderList
  ClientConnection holderNext;
  long grownSinceNanos;
  long lastActivityNanos = System.nanoTime();
  // Event loops: decoded requests whose data block is still in readBuf (see Lent data above).
  private boolean lendsData;
  private final ArrayDeque<Request> lent = new ArrayDeque<>();
  private boolean deferredRead;

  // Guarded by this.
  private final ArrayDeque<Request> inFlight = new ArrayDeque<>();
  private final ArrayDeque<Request> pool = new ArrayDeque<>();
  private final ArrayDeque<Request> waiting = new ArrayDeque<>();
  private final int window;
  private boolean forwardedBusy;
  private int chainOutstanding; // requests of the chain with the workers, not yet completed
  // The chain the net thread is still building in round openRound (staged, not yet published).
  private Request openHead;
  private Request openTail;
  private long openRound;
  private volatile long scratchReservedBytes; // written under this; read without it (fast path)
  private ByteBuffer pendingOut = ByteBuffer.allocate(0);
  private boolean closeWhenDrained;
  private boolean closed;
  private long pendingReservedBytes;
  private long admittedBytes;
  private boolean readingPausedForBacklog;
  private boolean nextStalled;

  /** What {@link #admitForwarded} did with a request. */
  enum Admission {
    /** Starts a chain: the caller stages it now. */
    HEAD,
    /** Joined the chain staged in this round: the caller counts it in the queue. */
    JOINED,
    /** Waits for the chain with the workers (its completion queues it). */
    WAITING
  }

  /**
   * @param window forwarded requests of this connection that may be with the workers at once (in
   *     one chain), 1 or more
   */
  ClientConnection(
      ClientChannel channel,
      ConnectionEvents net,
      BufferBudget budget,
      RequestDecoder parser,
      int window) {
    this.channel = channel;
    this.net = net;
    this.budget = budget;
    this.parser = parser;
    this.window = Math.max(1, window);
  }

  /**
   * Net thread, before the first read: whether decoded data blocks stay in the read buffer until
   * the end of the round (an event loop forwards them from there; see Lent data above).
   */
  void lendData(boolean lends) {
    this.lendsData = lends;
  }

  /** Net thread: {@code request}, just decoded, left its data block in the read buffer. */
  void noteLent(Request request) {
    lent.addLast(request);
  }

  /** Net thread: whether a data block in the read buffer has not been forwarded or copied yet. */
  private boolean lentInBuffer() {
    if (lent.isEmpty()) {
      return false;
    }
    lent.removeIf(r -> !r.dataLent());
    return !lent.isEmpty();
  }

  /** Net thread: copies the data blocks still in the read buffer into their requests. */
  private void ownLent() {
    Request r;
    while ((r = lent.pollFirst()) != null) {
      r.ownData();
    }
  }

  // ---- net thread -------------------------------------------------------------------------------

  /**
   * Reads once from the socket; grows the buffer for a request larger than it.
   *
   * @return bytes read, -1 at end of stream, or {@link #OVER_BUDGET}
   */
  int read() throws IOException {
    if (readBuf.length == 0) {
      readBuf = new byte[BASE_READ_BYTES];
      readView = ByteBuffer.wrap(readBuf);
    } else if (readEnd == readBuf.length) {
      if (lentInBuffer()) {
        if (parseStart == readEnd && !deferredRead) {
          deferredRead = true; // read into it once the loop has forwarded its data blocks
          lastReadFilled = false;
          return 0;
        }
        ownLent();
      }
      if (parseStart > 0) {
        compact();
      } else {
        int wanted = Math.max(readBuf.length * 2, parser.pendingRequestBytes());
        int length = Math.min(wanted, parser.maxRequestBytes());
        if (length > readBuf.length) {
          if (!budget.reserve(length - readBuf.length)) {
            return OVER_BUDGET;
          }
          readReservedBytes.addAndGet(length - readBuf.length);
          readBuf = Arrays.copyOf(readBuf, length);
          readView = ByteBuffer.wrap(readBuf);
        }
      }
    }
    deferredRead = false;
    readView.limit(readBuf.length).position(readEnd);
    int n = channel.read(readView);
    if (n > 0) {
      readEnd += n;
    }
    lastReadFilled = n > 0 && !readView.hasRemaining();
    return n;
  }

  /** Whether a partial request sits in a read buffer grown past its base size (budget held). */
  boolean grownWithPartialRequest() {
    return readBuf.length > BASE_READ_BYTES && readEnd > parseStart;
  }

  /** Moves unparsed bytes to the front of the buffer. */
  void compact() {
    if (parseStart == readEnd) {
      if (lentInBuffer()) {
        return; // the bytes before parseStart stay until the loop forwards them
      }
      parseStart = 0;
      readEnd = 0;
      if (readBuf.length > BASE_READ_BYTES && !keepsGrownBuffer()) {
        // Done with a large request: give the buffer back.
        readBuf = new byte[BASE_READ_BYTES];
        readView = ByteBuffer.wrap(readBuf);
        budget.release(readReservedBytes.getAndSet(0));
      }
    } else if (parseStart > 0) {
      ownLent(); // the move overwrites the bytes before parseStart
      System.arraycopy(readBuf, parseStart, readBuf, 0, readEnd - parseStart);
      readEnd -= parseStart;
      parseStart = 0;
    }
  }

  /** Whether a grown read buffer, now empty, stays for the next large request. */
  private boolean keepsGrownBuffer() {
    return readBuf.length <= KEEP_READ_BYTES && budget.usedBytes() <= budget.limitBytes() / 2;
  }

  /** A reset request from the pool, or a new one. */
  Request acquire() {
    Request request;
    synchronized (this) {
      request = pool.pollFirst();
    }
    if (request == null) {
      request = new Request();
    }
    request.connection = this;
    request.lendData(lendsData);
    return request;
  }

  /**
   * Net thread, before a decoded request is admitted: reserves from the budget what a large one
   * holds ({@link #LARGE_REQUEST_BYTES}); false if the budget cannot take it (the caller closes the
   * connection with the out-of-memory error). Released when the request completes or is dropped
   * with the connection.
   */
  boolean reserveDecoded(Request request) {
    long held = request.heldBytes();
    if (held < LARGE_REQUEST_BYTES) {
      return true; // the common case: no lock, no shared write
    }
    synchronized (this) {
      if (!budget.reserve(held)) {
        return false;
      }
      request.reservedBytes = held;
      return true;
    }
  }

  /**
   * Net thread, after decoding: keeps the budget reservation for the parser's scratch (the offsets
   * of a large request arriving in parts: an MGET of 290,000 one-byte keys holds 4 MB of them for 2
   * MB of buffered bytes) equal to what it holds now; false if the budget cannot take it.
   */
  boolean reserveScratch() {
    if (scratchReservedBytes == 0 && parser.scratchBytes() == 0) {
      return true; // the common case: no lock
    }
    synchronized (this) {
      return reserveScratchLocked();
    }
  }

  private boolean reserveScratchLocked() {
    long held = closed ? 0 : parser.scratchBytes();
    long delta = held - scratchReservedBytes;
    if (delta > 0 && !budget.reserve(delta)) {
      return false;
    }
    if (delta < 0) {
      budget.release(-delta);
    }
    scratchReservedBytes = held;
    return true;
  }

  private void releaseDecoded(Request request) {
    if (request.reservedBytes > 0) {
      budget.release(request.reservedBytes);
      request.reservedBytes = 0;
    }
  }

  /** Appends a request to the ordered in-flight list; call before completing it here. */
  synchronized void registerInFlight(Request request) {
    inFlight.addLast(request);
  }

  /**
   * Net thread: appends a forwarded request to the in-flight list and to a chain. A request starts
   * a chain when none is with the workers; it joins the chain started in the same round ({@code
   * round}: the net thread's selector round, whose staged requests are published together at its
   * end) while that chain is shorter than the window; otherwise it waits.
   */
  synchronized Admission admitForwarded(Request request, long round) {
    inFlight.addLast(request);
    admittedBytes += request.wireLength() + REQUEST_OVERHEAD_BYTES;
    updateBacklog();
    request.chainNext = null;
    request.chainLength = 1;
    request.chained = false;
    if (!forwardedBusy) {
      forwardedBusy = true;
      chainOutstanding = 1;
      openHead = request;
      openTail = request;
      openRound = round;
      return Admission.HEAD;
    }
    if (openHead != null
        && openRound == round
        && chainOutstanding < window
        && waiting.isEmpty()
        && !closed) {
      openTail.chainNext = request;
      openTail = request;
      openHead.chainLength++;
      openHead.chained = true;
      request.chained = true;
      chainOutstanding++;
      return Admission.JOINED;
    }
    request.ownData(); // a completion queues it, on a worker's thread or in a later round
    waiting.addLast(request);
    return Admission.WAITING;
  }

  /** Stops reading and closes once every in-flight reply is written (quit, lost framing). */
  void closeAfterReplies() {
    inputClosed = true;
    synchronized (this) {
      closeWhenDrained = true;
      if (!closed) {
        channel.setReadInterest(false);
      }
      closeIfDrained();
    }
  }

  /** Selector reported the socket writable. */
  synchronized void onWritable() {
    flushPending();
    afterBacklogChange();
    closeIfDrained();
  }

  /** Net thread: whether the backlog has reached the high-water mark (no lock; a hint). */
  boolean backlogged() {
    return backlogBytes >= HIGH_WATER_BYTES;
  }

  /**
   * Net thread: stops reading while the backlog is above the low-water mark; false if it has
   * already fallen below (keep reading). A worker or the writable socket resumes it ({@link
   * NetThread#resumeReading}).
   */
  synchronized boolean pauseForBacklog() {
    if (closed) {
      return true;
    }
    if (backlogBytes < LOW_WATER_BYTES) {
      return false;
    }
    readingPausedForBacklog = true;
    channel.setReadInterest(false);
    return true;
  }

  /**
   * Net thread: whether the connection may be read again in this round (its last read filled the
   * buffer, and it is neither closed nor paused).
   */
  boolean readsOn() {
    if (!lastReadFilled || inputClosed || paused) {
      return false;
    }
    synchronized (this) {
      return !closed && !readingPausedForBacklog;
    }
  }

  /** Whether nothing is in flight or unsent (for the idle timeout). */
  synchronized boolean isIdle() {
    return inFlight.isEmpty() && !pendingOut.hasRemaining();
  }

  /** Net thread: answers {@code reply} if the socket takes it at once, then closes. */
  synchronized void closeWithError(byte[] reply) {
    if (!closed && !pendingOut.hasRemaining()) {
      try {
        channel.write(ByteBuffer.wrap(reply));
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    close();
  }

  // Guarded by this: the backlog after a change; resumes reading or the stalled next request.
  private void updateBacklog() {
    backlogBytes = pendingOut.remaining() + admittedBytes;
  }

  private void afterBacklogChange() {
    updateBacklog();
    if (closed) {
      return;
    }
    if (nextStalled && pendingOut.remaining() < LOW_WATER_BYTES) {
      nextStalled = false;
      queueNextWaiting();
    }
    if (readingPausedForBacklog && backlogBytes < LOW_WATER_BYTES) {
      readingPausedForBacklog = false;
      net.resumeReading(this);
    }
  }

  /** Queues the next chain, up to the window, from the waiting requests (or marks none busy). */
  private void queueNextWaiting() {
    openHead = null;
    openTail = null;
    Request head = waiting.pollFirst();
    if (head == null) {
      forwardedBusy = false;
      return;
    }
    head.chainNext = null;
    head.chainLength = 1;
    Request tail = head;
    Request next;
    while (head.chainLength < window && (next = waiting.pollFirst()) != null) {
      tail.chainNext = next;
      next.chainNext = null;
      next.chained = true;
      tail = next;
      head.chainLength++;
    }
    head.chained = head.chainLength > 1;
    chainOutstanding = head.chainLength;
    net.enqueueWaiting(head);
  }

  void setReading(boolean reading) {
    synchronized (this) {
      if (closed) {
        return;
      }
      channel.setReadInterest(reading);
    }
  }

  synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    inputClosed = true;
    pendingOut = ByteBuffer.allocate(0);
    budget.release(pendingReservedBytes);
    pendingReservedBytes = 0;
    budget.release(readReservedBytes.getAndSet(0));
    budget.release(scratchReservedBytes);
    scratchReservedBytes = 0;
    for (Request r : waiting) {
      inFlight.remove(r);
      releaseDecoded(r);
    }
    waiting.clear();
    // In-flight requests are still with workers; they are dropped when they complete.
    channel.close();
    net.connectionClosed();
  }

  synchronized boolean isClosed() {
    return closed;
  }

  /**
   * Net thread, once this connection is closed and not on the net thread's stack: lets the read
   * buffer go with the budget bytes {@link #close} gave back. Until the next select deregisters its
   * cancelled key the connection is still reachable, and a round that closes many connections
   * holding grown buffers (stalled 1 MB requests evicted one after another) would otherwise keep
   * every buffer the budget already counts as free.
   */
  void dropReadBuffer() {
    ownLent();
    readBuf = NO_BYTES;
    readView = ByteBuffer.wrap(NO_BYTES);
    readEnd = 0;
    parseStart = 0;
  }

  // ---- any thread -------------------------------------------------------------------------------

  @Override
  public long complete(Request request, ByteBuffer reply) {
    synchronized (this) {
      boolean forwarded = request.status() == Request.Status.FORWARD;
      request.completed = true;
      request.dropLentData(); // answered without being forwarded (its server was down)
      releaseDecoded(request);
      if (closed) {
        dropCompletedHeads();
        return System.nanoTime();
      }
      if (forwarded) {
        admittedBytes -= request.wireLength() + REQUEST_OVERHEAD_BYTES;
      }
      // A chain's replies leave together, in one write, when its last request completes.
      boolean corked = forwarded && chainOutstanding > 1;
      boolean appended = false;
      if (inFlight.peekFirst() == request) {
        inFlight.pollFirst();
        Request next = inFlight.peekFirst();
        if (corked || pendingOut.hasRemaining() || (next != null && next.completed)) {
          appendPending(reply);
          appended = true;
        } else {
          writeDirect(reply);
        }
        recycle(request);
      } else {
        keepReply(request, reply);
      }
      appended |= appendCompletedHeads();
      if (appended && !corked) {
        flushPending();
      }
      if (forwarded && !closed && --chainOutstanding == 0) {
        if (pendingOut.remaining() >= HIGH_WATER_BYTES) {
          nextStalled = true; // the client is not reading: queue its next request once it has
        } else {
          queueNextWaiting();
        }
      }
      afterBacklogChange();
      closeIfDrained();
      return System.nanoTime();
    }
  }

  private void writeDirect(ByteBuffer reply) {
    if (!reply.hasRemaining()) {
      return;
    }
    try {
      channel.write(reply);
    } catch (IOException e) {
      closeLater();
      return;
    }
    if (reply.hasRemaining()) {
      appendPending(reply);
      flushPending();
    }
  }

  private void keepReply(Request request, ByteBuffer reply) {
    int length = reply.remaining();
    if (request.pendingReply.length < length) {
      request.pendingReply = new byte[Math.max(length, 64)];
    }
    reply.get(request.pendingReply, 0, length);
    request.pendingReplyLength = length;
  }

  /** Appends the replies of the completed requests at the head; returns whether there were any. */
  private boolean appendCompletedHeads() {
    boolean appended = false;
    Request head;
    while ((head = inFlight.peekFirst()) != null && head.completed) {
      inFlight.pollFirst();
      appendPending(head.pendingReply, 0, head.pendingReplyLength);
      recycle(head);
      appended = true;
    }
    return appended;
  }

  private void dropCompletedHeads() {
    Request head;
    while ((head = inFlight.peekFirst()) != null && head.completed) {
      inFlight.pollFirst();
    }
  }

  /** Appends the reply's remaining bytes (a heap or a direct buffer; its position is kept). */
  private void appendPending(ByteBuffer reply) {
    if (reply.hasArray()) {
      appendPending(reply.array(), reply.arrayOffset() + reply.position(), reply.remaining());
      return;
    }
    int length = reply.remaining(); // a direct reply (an event loop's): copied once, straight in
    if (length == 0 || !roomForPending(length)) {
      return;
    }
    int end = pendingOut.limit();
    pendingOut.limit(end + length);
    pendingOut.put(end, reply, reply.position(), length); // the reply's position is kept
  }

  private void appendPending(byte[] bytes, int from, int length) {
    if (length == 0 || !roomForPending(length)) {
      return;
    }
    int position = pendingOut.position();
    pendingOut.position(pendingOut.limit()).limit(pendingOut.limit() + length);
    pendingOut.put(bytes, from, length);
    pendingOut.position(position);
  }

  /** Makes room for {@code length} more unsent bytes; false if closed (or closed now: budget). */
  private boolean roomForPending(int length) {
    if (closed) {
      return false;
    }
    if (pendingOut.capacity() - pendingOut.limit() < length) {
      int capacity = Math.max(pendingOut.remaining() + length, pendingOut.capacity() * 2);
      if (!budget.reserve(capacity - pendingOut.capacity())) {
        // Past the budget with replies the client does not take: this connection goes.
        close();
        return false;
      }
      pendingReservedBytes += capacity - pendingOut.capacity();
      ByteBuffer bigger = ByteBuffer.allocate(capacity);
      bigger.put(pendingOut);
      bigger.flip();
      pendingOut = bigger;
    }
    return true;
  }

  /** Writes what the socket takes; asks the selector for writability if bytes remain. */
  private void flushPending() {
    if (closed) {
      return;
    }
    if (pendingOut.hasRemaining()) {
      try {
        channel.write(pendingOut);
      } catch (IOException e) {
        closeLater();
        return;
      }
    }
    if (pendingOut.hasRemaining()) {
      channel.setWriteInterest(true);
    } else {
      if (pendingOut.capacity() > KEEP_PENDING_BYTES) {
        budget.release(pendingReservedBytes);
        pendingReservedBytes = 0;
        pendingOut = ByteBuffer.allocate(0);
      }
      pendingOut.clear().limit(0);
      channel.setWriteInterest(false);
    }
  }

  private void closeIfDrained() {
    if (closeWhenDrained && !closed && inFlight.isEmpty() && !pendingOut.hasRemaining()) {
      close();
    }
  }

  private void closeLater() {
    // A write failed: the client is gone. Close now; the net thread sees the cancelled key.
    close();
  }

  private void recycle(Request request) {
    request.connection = null;
    request.chainNext = null;
    if (pool.size() < POOL_LIMIT && request.heldBytes() < LARGE_REQUEST_BYTES) {
      pool.addLast(request); // a large one is left to the collector, not kept for small ones
    }
  }
}
