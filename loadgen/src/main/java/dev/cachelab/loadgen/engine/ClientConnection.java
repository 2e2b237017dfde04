package dev.cachelab.loadgen.engine;

import dev.cachelab.loadgen.config.LoadgenConfig;
import dev.cachelab.loadgen.protocol.ProtocolException;
import dev.cachelab.loadgen.protocol.ReplyParser;
import dev.cachelab.loadgen.protocol.WireProtocol;
import dev.cachelab.loadgen.stats.OpType;
import dev.cachelab.loadgen.stats.ThreadStats;
import dev.cachelab.loadgen.workload.KeySequence;
import dev.cachelab.loadgen.workload.OperationMix;
import dev.cachelab.loadgen.workload.ValueSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;

/**
 * One client: a connection, its request generator and its FIFO of outstanding requests. Owned and
 * used by one {@link EventLoop} thread only. Buffers are allocated once; the request path writes
 * keys and values straight into the send buffer.
 */
final class ClientConnection {
  /** How requests are timed. */
  enum Mode {
    /** Closed loop: a new request as soon as fewer than --pipeline are outstanding. */
    CLOSED,
    /** Closed loop, at most --rate-limiting requests per second. */
    PACED,
    /** Closed loop with a think time after each reply. */
    THINK,
    /** Open loop: Poisson arrivals, latency from the intended send time. */
    OPEN
  }

  private static final long ONE_SECOND_NANOS = 1_000_000_000L;

  private final String name;
  private final LoadgenConfig config;
  private final Mode mode;
  private final WireProtocol protocol;
  private final ReplyParser parser;
  private final ThreadStats stats;
  private final RunControl control;
  private final SocketChannel channel;
  private final ByteBuffer out;
  private final ByteBuffer in;
  private final int maxRequestBytes;
  private final byte[] prefix;
  private final OperationMix mix;
  private final KeySequence setKeys;
  private final KeySequence getKeys;
  private final ValueSource values;
  private final SplittableRandom random;
  private final long[] getKeyNumbers;
  private final long paceIntervalNanos;
  private final double meanInterArrivalNanos;
  private ArrivalSchedule arrivals; // open loop: set at the start

  // Outstanding requests, oldest first: send (or intended send) time and 0 = SET / k = k-key GET.
  private long[] sentNanos;
  private int[] requestKeys;
  private int head;
  private int outstanding;
  // Open loop: arrival times not yet encoded (backlog while the send buffer is full).
  private long[] backlog = new long[16];
  private int backlogHead;
  private int backlogCount;

  private SelectionKey key;
  private boolean writeInterest;
  private long requestsLeft;
  private long nextSendNanos;
  private long replyBytes;
  private boolean parserArmed;

  ClientConnection(
      String name,
      LoadgenConfig config,
      WireProtocol protocol,
      ThreadStats stats,
      RunControl control,
      SocketChannel channel,
      int clientIndex) {
    this.name = name;
    this.config = config;
    this.protocol = protocol;
    this.parser = protocol.newParser();
    this.stats = stats;
    this.control = control;
    this.channel = channel;
    this.mode = modeOf(config);
    this.prefix = config.keyPrefix().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    long seed = config.seed() + (config.distinctClientSeed() ? clientIndex : 0);
    this.random = new SplittableRandom(seed);
    this.mix = new OperationMix(config.ratio(), config.multiKeyGet());
    long rangeMin =
        KeySequence.parallelRangeStart(
            config.keyMinimum(), config.keyCount(), config.totalClients(), clientIndex);
    long rangeMax =
        KeySequence.parallelRangeEnd(
            config.keyMinimum(), config.keyCount(), config.totalClients(), clientIndex);
    this.setKeys = keys(config.keyPatterns().set(), rangeMin, rangeMax, seed);
    this.getKeys = keys(config.keyPatterns().get(), rangeMin, rangeMax, seed + 0x9E3779B97F4A7C15L);
    this.values = new ValueSource(config.dataSize(), config.randomData(), random.split());
    int maxGetKeys = Math.max(1, config.multiKeyGet());
    this.getKeyNumbers = new long[maxGetKeys];
    this.maxRequestBytes =
        Math.max(
            protocol.maxSetBytes(prefix.length, values.maxSize()),
            protocol.maxGetBytes(prefix.length, maxGetKeys));
    int window = mode == Mode.OPEN ? 16 : config.pipeline();
    this.out =
        ByteBuffer.allocateDirect(Math.max(64 * 1024, maxRequestBytes * Math.min(window, 64)));
    this.in = ByteBuffer.allocate(64 * 1024); // heap: parsers index its array
    this.sentNanos = new long[Math.max(4, window)];
    this.requestKeys = new int[sentNanos.length];
    this.requestsLeft =
        config.timed() ? Long.MAX_VALUE : config.requestsFor(rangeMax - rangeMin + 1);
    this.paceIntervalNanos =
        config.rateLimitPerConnection() > 0
            ? ONE_SECOND_NANOS / config.rateLimitPerConnection()
            : 0;
    this.meanInterArrivalNanos =
        config.openLoop() ? ONE_SECOND_NANOS * config.totalClients() / config.openLoopRate() : 0;
  }

  private KeySequence keys(
      dev.cachelab.loadgen.config.KeyPattern pattern, long rangeMin, long rangeMax, long seed) {
    boolean parallel = pattern == dev.cachelab.loadgen.config.KeyPattern.PARALLEL;
    return new KeySequence(
        pattern,
        parallel ? rangeMin : config.keyMinimum(),
        parallel ? rangeMax : config.keyMaximum(),
        config.keyMedian(),
        config.keyStddev(),
        config.keyZipfExponent(),
        new SplittableRandom(seed));
  }

  static Mode modeOf(LoadgenConfig config) {
    if (config.openLoop()) {
      return Mode.OPEN;
    }
    if (config.thinkTime().enabled()) {
      return Mode.THINK;
    }
    return config.rateLimitPerConnection() > 0 ? Mode.PACED : Mode.CLOSED;
  }

  String name() {
    return name;
  }

  void register(SelectionKey selectionKey) {
    this.key = selectionKey;
  }

  /** The run has started at {@code startNanos}: send the first requests. */
  void start(long startNanos) throws IOException {
    if (mode == Mode.OPEN) {
      double rampNanos = config.openLoopRampSeconds() * ONE_SECOND_NANOS;
      arrivals = new ArrivalSchedule(startNanos, meanInterArrivalNanos, rampNanos);
      nextSendNanos = arrivals.next(unitExponential());
    } else {
      nextSendNanos = startNanos;
    }
    fill(startNanos);
  }

  /** Whether this client has nothing more to send and nothing outstanding. */
  boolean done(long nowNanos) {
    return outstanding == 0 && backlogCount == 0 && !mayIssue(nowNanos);
  }

  int outstanding() {
    return outstanding + backlogCount;
  }

  /**
   * When this client next wants to send because of time (pacing, think time, arrivals), or
   * Long.MAX_VALUE if it waits for a reply or has finished.
   */
  long nextDueNanos(long nowNanos) {
    return switch (mode) {
      case CLOSED -> Long.MAX_VALUE;
      case PACED, THINK ->
          outstanding < config.pipeline() && mayIssue(nowNanos) ? nextSendNanos : Long.MAX_VALUE;
      case OPEN -> mayIssue(nowNanos) ? nextSendNanos : Long.MAX_VALUE;
    };
  }

  private boolean mayIssue(long nowNanos) {
    return requestsLeft > 0 && nowNanos < control.deadlineNanos() && !control.aborted();
  }

  /** Sends whatever is due now. */
  void fill(long nowNanos) throws IOException {
    switch (mode) {
      case CLOSED -> {
        while (outstanding < config.pipeline() && mayIssue(nowNanos) && hasRoom()) {
          encode(nowNanos);
          requestsLeft--;
        }
      }
      case PACED, THINK -> {
        while (outstanding < config.pipeline()
            && nowNanos >= nextSendNanos
            && mayIssue(nowNanos)
            && hasRoom()) {
          encode(nowNanos);
          requestsLeft--;
          if (mode == Mode.PACED) {
            nextSendNanos += paceIntervalNanos;
            if (nextSendNanos < nowNanos - ONE_SECOND_NANOS) {
              nextSendNanos = nowNanos; // far behind: do not burst to catch up
            }
          }
        }
      }
      case OPEN -> {
        // Arrivals strictly by the schedule; each keeps its intended time as its latency origin.
        while (nextSendNanos <= nowNanos && mayIssue(nextSendNanos)) {
          pushBacklog(nextSendNanos);
          requestsLeft--;
          nextSendNanos = arrivals.next(unitExponential());
        }
        while (backlogCount > 0 && hasRoom()) {
          encode(popBacklog());
        }
      }
    }
    flush();
  }

  private boolean hasRoom() {
    return out.remaining() >= maxRequestBytes;
  }

  private void encode(long sendNanos) {
    int start = out.position();
    int op = mix.next();
    if (op == OperationMix.SET) {
      int size = values.nextSize();
      long setKey = setKeys.next();
      stats.recordKey(setKey);
      protocol.encodeSet(out, prefix, setKey, values.bytes(), values.nextOffset(), size, expiry());
      stats.recordSent(OpType.SET, out.position() - start);
    } else {
      for (int i = 0; i < op; i++) {
        getKeyNumbers[i] = getKeys.next();
        stats.recordKey(getKeyNumbers[i]);
      }
      protocol.encodeGet(out, prefix, getKeyNumbers, op);
      stats.recordSent(OpType.GET, out.position() - start);
    }
    pushOutstanding(sendNanos, op);
  }

  private int expiry() {
    int min = config.expiryRange().min();
    int max = config.expiryRange().max();
    return min == max ? min : min + random.nextInt(max - min + 1);
  }

  private void flush() throws IOException {
    if (out.position() == 0) {
      return;
    }
    out.flip();
    channel.write(out);
    if (out.hasRemaining()) {
      out.compact();
      if (!writeInterest) {
        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        writeInterest = true;
      }
    } else {
      out.clear();
      if (writeInterest) {
        key.interestOps(SelectionKey.OP_READ);
        writeInterest = false;
      }
    }
  }

  /** The socket can take more bytes. */
  void onWritable(long nowNanos) throws IOException {
    flush();
    fill(nowNanos);
  }

  /** Bytes arrived: parse every complete reply, record it, then send what is due. */
  void onReadable(long nowNanos) throws IOException {
    int n = channel.read(in);
    if (n < 0) {
      throw new IOException(
          "server closed the connection"
              + (outstanding > 0 ? " with " + outstanding + " requests outstanding" : ""));
    }
    in.flip();
    while (in.hasRemaining()) {
      if (outstanding == 0) {
        throw new ProtocolException(
            "unexpected bytes from the server with no request outstanding: " + preview(in));
      }
      if (!parserArmed) {
        parser.expect(requestKeys[head]);
        parserArmed = true;
      }
      int before = in.position();
      boolean complete = parser.parse(in);
      replyBytes += in.position() - before;
      if (!complete) {
        break;
      }
      complete(nowNanos);
    }
    in.compact();
    if (!in.hasRemaining()) {
      throw new ProtocolException(
          "reply line longer than " + in.capacity() + " bytes without \\r\\n");
    }
    fill(nowNanos);
  }

  private void complete(long nowNanos) {
    int keys = requestKeys[head];
    OpType op = keys == OperationMix.SET ? OpType.SET : OpType.GET;
    stats.recordReply(op, nowNanos - sentNanos[head], replyBytes, nowNanos);
    if (keys > 0) {
      stats.recordGetKeys(keys, parser.hits());
    }
    if (parser.errorReply()) {
      stats.recordErrorReply(op);
    }
    replyBytes = 0;
    parserArmed = false;
    head = (head + 1) % sentNanos.length;
    outstanding--;
    if (mode == Mode.THINK) {
      long think = config.thinkTime().meanNanos();
      nextSendNanos = nowNanos + (config.thinkTime().exponential() ? exponential(think) : think);
    }
  }

  private void pushOutstanding(long sendNanos, int keys) {
    if (outstanding == sentNanos.length) {
      growOutstanding();
    }
    int tail = (head + outstanding) % sentNanos.length;
    sentNanos[tail] = sendNanos;
    requestKeys[tail] = keys;
    outstanding++;
  }

  private void growOutstanding() {
    long[] times = new long[sentNanos.length * 2];
    int[] keys = new int[times.length];
    for (int i = 0; i < outstanding; i++) {
      times[i] = sentNanos[(head + i) % sentNanos.length];
      keys[i] = requestKeys[(head + i) % sentNanos.length];
    }
    sentNanos = times;
    requestKeys = keys;
    head = 0;
  }

  private void pushBacklog(long intendedNanos) {
    if (backlogCount == backlog.length) {
      long[] bigger = new long[backlog.length * 2];
      for (int i = 0; i < backlogCount; i++) {
        bigger[i] = backlog[(backlogHead + i) % backlog.length];
      }
      backlog = bigger;
      backlogHead = 0;
    }
    backlog[(backlogHead + backlogCount) % backlog.length] = intendedNanos;
    backlogCount++;
  }

  private long popBacklog() {
    long t = backlog[backlogHead];
    backlogHead = (backlogHead + 1) % backlog.length;
    backlogCount--;
    return t;
  }

  /** A draw of the exponential distribution with mean 1 (not rounded: the schedule scales it). */
  private double unitExponential() {
    return -Math.log(1.0 - random.nextDouble());
  }

  private long exponential(double meanNanos) {
    return (long) (meanNanos * unitExponential());
  }

  private static String preview(ByteBuffer buffer) {
    StringBuilder sb = new StringBuilder("'");
    for (int i = buffer.position(); i < Math.min(buffer.limit(), buffer.position() + 60); i++) {
      byte b = buffer.get(i);
      sb.append(b >= 32 && b < 127 ? String.valueOf((char) b) : String.format("\\x%02x", b));
    }
    return sb.append('\'').toString();
  }

  void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing at the end of the run; nothing left to report
    }
  }
}
