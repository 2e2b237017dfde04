package dev.cachelab.middleware.protocol;

import dev.cachelab.middleware.servers.ServerGeneration;
import java.util.Arrays;

/**
 * One client request: the command line and data block as received, the parsed token positions, the
 * routing decision and the timestamps. Instances are pooled per client connection and reused; a
 * request is filled by the net thread, handed to exactly one worker through the queue (the queue's
 * happens-before edge publishes it) and given back to its connection's pool.
 *
 * <p>Layout of {@link #bytes()}: the command line at {@code [0, lineLength)} followed by {@code
 * \r\n}, then the data block (storage commands) at {@code [dataOffset, dataOffset + dataLength)}
 * followed by {@code \r\n}. Token {@code i} is {@code [tokenStart(i), tokenEnd(i))}. A redis
 * (RESP2) request is held as the multibulk array it is forwarded as, {@code [0, wireLength())}, its
 * token {@code i} being the payload of bulk string {@code i}.
 */
public final class Request {
  /** What the parser produced. */
  public enum Status {
    /** A well-formed request to route to the servers. */
    FORWARD,
    /** A request the middleware answers itself (stats). */
    LOCAL,
    /** The parser rejected the input; reply {@link #immediateReply()} and carry on. */
    REJECT,
    /** The parser rejected the input and framing is lost; reply, then close the connection. */
    REJECT_AND_CLOSE,
    /** The client asked to quit. */
    QUIT
  }

  private Status status;
  private Command command;
  private RespCommand respCommand;
  private Resp3Shape resp3Shape;
  private int rawLength;
  private int keyStride = 1;
  private byte[] bytes = new byte[512];
  private int lineLength;
  private int dataOffset;
  private int dataLength;
  // A data block left in the client's read buffer (see lendData): that buffer and the block's
  // offset in it, until it is forwarded (then dataForwarded) or copied in (ownData).
  private byte[] lentFrom;
  private int lentOffset;
  private boolean dataForwarded;
  private boolean lendsData;
  private int[] tokenStart = new int[8];
  private int[] tokenEnd = new int[8];
  private int tokenCount;
  private int firstKeyToken;
  private int keyCount;
  private boolean noreply;
  private int quietSkipStart = -1;
  private int quietSkipEnd;
  private boolean metaSideEffects;
  private boolean base64Key;
  private boolean metaCompareAndSwap;
  private byte[] immediateReply;

  // Routing (net thread): target servers, and for split multi-gets the server of each key.
  private int[] servers = new int[4];
  private int serverCount;
  private int[] keyServers = new int[8];
  private int[] keyFallbacks = new int[8];
  private boolean keyFallbacksSet;
  private boolean split;
  private int fallbackServer = -1;
  private boolean fallbackToAny;

  // Timestamps, System.nanoTime(); the written time is what ReplySink.complete returns.
  public long receivedNanos;
  public long enqueuedNanos;
  public long publishedNanos; // visible to the workers (end of the net thread's round)
  public long dequeuedNanos;
  public long sentNanos;
  public long repliedNanos;

  // Ordered completion, owned by the client connection (guarded by its lock).
  public ReplySink connection;

  /** The server list the request was routed with (net thread sets it; the worker serves it so). */
  public ServerGeneration generation;

  /** Bytes reserved from the buffer budget for this request's decoded form (large ones only). */
  public long reservedBytes;

  public boolean completed;

  /**
   * A connection's forwarded requests that go to the workers together (one worker takes them all,
   * in order; see {@code net.ClientConnection}): the next one, set on every member but the last.
   */
  public Request chainNext;

  /** On the first request of a chain: how many it holds (1 when it is alone). */
  public int chainLength = 1;

  /** Whether the request was queued with others of its connection (a chain longer than one). */
  public boolean chained;

  public byte[] pendingReply = new byte[0];
  public int pendingReplyLength;

  /** Clears everything the parser sets. Called before the parser fills the request. */
  public void reset() {
    status = null;
    command = null;
    respCommand = null;
    resp3Shape = null;
    rawLength = 0;
    keyStride = 1;
    lineLength = 0;
    dataOffset = 0;
    dataLength = 0;
    lentFrom = null;
    dataForwarded = false;
    tokenCount = 0;
    firstKeyToken = 0;
    keyCount = 0;
    noreply = false;
    quietSkipStart = -1;
    metaSideEffects = false;
    base64Key = false;
    metaCompareAndSwap = false;
    immediateReply = null;
    serverCount = 0;
    split = false;
    completed = false;
    pendingReplyLength = 0;
  }

  // ---- parser side -------------------------------------------------------------------------

  void copyLine(byte[] source, int from, int length) {
    ensureCapacity(length + 2);
    System.arraycopy(source, from, bytes, 0, length);
    bytes[length] = '\r';
    bytes[length + 1] = '\n';
    lineLength = length;
  }

  /**
   * The data block at {@code source[from, from + length)}, followed there by its {@code \r\n}: left
   * where it is if this request {@linkplain #lendsData lends}, else copied in.
   */
  void takeData(byte[] source, int from, int length) {
    if (!lendsData || length >= LEND_LIMIT_BYTES) {
      copyData(source, from, length);
      return;
    }
    dataOffset = lineLength + 2;
    dataLength = length;
    lentFrom = source;
    lentOffset = from;
  }

  void copyData(byte[] source, int from, int length) {
    int offset = lineLength + 2;
    ensureCapacity(offset + length + 2);
    System.arraycopy(source, from, bytes, offset, length);
    bytes[offset + length] = '\r';
    bytes[offset + length + 1] = '\n';
    dataOffset = offset;
    dataLength = length;
  }

  private void ensureCapacity(int capacity) {
    if (bytes.length < capacity) {
      bytes = Arrays.copyOf(bytes, Math.max(capacity, bytes.length * 2));
    }
  }

  /** RESP: the whole request, a multibulk array as forwarded to the servers. */
  void copyRaw(byte[] source, int from, int length) {
    lentFrom = null;
    ensureCapacity(length);
    System.arraycopy(source, from, bytes, 0, length);
    rawLength = length;
    lineLength = length;
  }

  /**
   * RESP: a parsed command whose keys start at token {@code firstKeyToken}, {@code
   * command.keyStride()} apart.
   */
  void setParsedResp(Status status, RespCommand command, int keyCount, int firstKeyToken) {
    this.status = status;
    this.respCommand = command;
    this.firstKeyToken = firstKeyToken;
    this.keyCount = keyCount;
    this.keyStride = command.keyStride();
  }

  /** RESP: the reply is rewritten for a RESP3 client ({@code HELLO 3}), in this shape. */
  void setResp3Shape(Resp3Shape shape) {
    this.resp3Shape = shape;
  }

  /** How the server's reply is rewritten for a RESP3 client; null for a RESP2 client. */
  public Resp3Shape resp3Shape() {
    return resp3Shape;
  }

  /** RESP: a command the front end answers itself ({@code PING}, {@code QUIT}). */
  void setLocalResp(Status status, RespCommand command, byte[] reply) {
    this.status = status;
    this.respCommand = command;
    this.immediateReply = reply;
  }

  /**
   * Heap this request holds beyond its object: its copy of the wire bytes (a data block still lent
   * by the read buffer counted as if copied in), its token and key arrays, a kept reply. Net
   * thread, or the connection's owner under its lock.
   */
  public long heldBytes() {
    long wire =
        lentFrom != null ? Math.max(bytes.length, dataOffset + dataLength + 2L) : bytes.length;
    return wire
        + pendingReply.length
        + 4L
            * (tokenStart.length
                + tokenEnd.length
                + servers.length
                + keyServers.length
                + keyFallbacks.length);
  }

  void addToken(int start, int end) {
    if (tokenCount == tokenStart.length) {
      tokenStart = Arrays.copyOf(tokenStart, tokenCount * 2);
      tokenEnd = Arrays.copyOf(tokenEnd, tokenCount * 2);
    }
    tokenStart[tokenCount] = start;
    tokenEnd[tokenCount] = end;
    tokenCount++;
  }

  /**
   * A meta command with the quiet flag (a token starting with {@code q}): the flag (bytes {@code
   * [skipStart, skipEnd)} of the line) is not forwarded, since the middleware always waits for a
   * reply; the reply memcached would have left out ({@code EN} of a read, {@code HD} of a write) is
   * then dropped.
   */
  void setMetaQuiet(int skipStart, int skipEnd) {
    quietSkipStart = skipStart;
    quietSkipEnd = skipEnd;
  }

  /**
   * An {@code mg} with a flag that changes the item ({@code N}, {@code T}, {@code R}, {@code E}).
   */
  void setMetaSideEffects() {
    metaSideEffects = true;
  }

  /** A meta command whose key is base64 ({@code b} flag): the server decodes it before use. */
  void setBase64Key() {
    base64Key = true;
  }

  /**
   * A meta write with the {@code C} flag: applied only if the item's cas unique is the one given.
   */
  void setMetaCompareAndSwap() {
    metaCompareAndSwap = true;
  }

  /**
   * Whether this is an {@code ms}, {@code md} or {@code ma} with the {@code C<cas>} flag: each
   * server numbers its cas uniques itself, so the unique one server gave matches on that server
   * only, and sent to several servers the write would be applied on some and refused on others.
   */
  public boolean metaCompareAndSwap() {
    return metaCompareAndSwap;
  }

  /**
   * Whether the key is sent in base64 ({@code b} flag of a meta command): the item memcached stores
   * or looks up is the decoded key, so the key is placed by its decoded bytes.
   */
  public boolean base64Key() {
    return base64Key;
  }

  /**
   * Whether sending the request twice does what sending it once does: a read that changes nothing
   * ({@code get}, {@code gets}, {@code me}, an {@code mg} without {@code N}, {@code T}, {@code R}
   * or {@code E}, {@code version}, a {@code stats} group, a redis read). Only such a request is
   * sent again after its connection broke before the reply; any other may have been applied.
   */
  public boolean idempotent() {
    if (respCommand != null) {
      return !respCommand.isWrite();
    }
    if (command == null) {
      return false;
    }
    return switch (command) {
      case GET, GETS, ME, VERSION, STATS_GROUP -> true;
      case MG -> !metaSideEffects;
      default -> false;
    };
  }

  /**
   * Whether the request may take long however healthy its server ({@link RespCommand#isSlow}): it
   * is neither hedged nor tried on another replica after a timeout.
   */
  public boolean slow() {
    return respCommand != null && respCommand.isSlow();
  }

  /** Whether the request is a meta command with the {@code q} flag. */
  public boolean metaQuiet() {
    return quietSkipStart >= 0;
  }

  /** Whether the forwarded request differs from the received one (noreply or q left out). */
  public boolean rewrittenForServer() {
    return noreply || quietSkipStart >= 0;
  }

  /** Start of the line bytes not forwarded ({@code noreply} or a meta {@code q}). */
  public int forwardSkipStart() {
    return quietSkipStart >= 0 ? quietSkipStart : forwardLineLength();
  }

  /** End of the line bytes not forwarded. */
  public int forwardSkipEnd() {
    return quietSkipStart >= 0 ? quietSkipEnd : lineLength;
  }

  void setParsed(Status status, Command command, int firstKeyToken, int keyCount, boolean noreply) {
    this.status = status;
    this.command = command;
    this.firstKeyToken = firstKeyToken;
    this.keyCount = keyCount;
    this.noreply = noreply;
  }

  void setRejected(Status status, byte[] reply) {
    this.status = status;
    this.immediateReply = reply;
  }

  /**
   * Refuses a request the parser would forward, for what only the routing knows (a meta
   * compare-and-swap while writes go to several servers): answered {@code reply}, kept open.
   */
  public void refuse(byte[] reply) {
    setRejected(Status.REJECT, reply);
  }

  // ---- readers ------------------------------------------------------------------------------

  public Status status() {
    return status;
  }

  /** The memcached command, or null for a redis request. */
  public Command command() {
    return command;
  }

  /** The redis command, or null for a memcached request. */
  public RespCommand respCommand() {
    return respCommand;
  }

  /** How the request is routed, for either protocol; null if it was rejected. */
  public Command.Family family() {
    if (command != null) {
      return command.family();
    }
    return respCommand == null ? null : respCommand.family();
  }

  public byte[] bytes() {
    return bytes;
  }

  // ---- a data block left in the client's read buffer --------------------------------------------

  /**
   * Largest data block left in the read buffer; a larger one is copied (it is reserved from the
   * buffer budget as the request's own, see {@code ClientConnection.LARGE_REQUEST_BYTES}).
   */
  public static final int LEND_LIMIT_BYTES = 64 * 1024;

  /**
   * Net thread, before the parser fills the request: whether its data block may stay in the
   * client's read buffer (an event loop forwards it from there in the round it was read); the
   * connection then calls {@link #ownData} before the buffer's bytes change or the request leaves
   * the net thread.
   */
  public void lendData(boolean lends) {
    this.lendsData = lends;
  }

  /** Whether the data block is still in the client's read buffer (not copied, not forwarded). */
  public boolean dataLent() {
    return lentFrom != null;
  }

  /** Net thread: copies a data block still in the client's read buffer into {@link #bytes()}. */
  public void ownData() {
    byte[] source = lentFrom;
    if (source != null) {
      lentFrom = null;
      int wire = dataOffset + dataLength + 2;
      if (bytes.length < wire) {
        bytes = Arrays.copyOf(bytes, wire); // no more than heldBytes() counted while lent
      }
      copyData(source, lentOffset, dataLength);
    }
  }

  /**
   * The array holding the data block (then its {@code \r\n}) at {@link #dataArrayOffset()}: the
   * client's read buffer while {@linkplain #dataLent lent}, else {@link #bytes()}.
   *
   * @throws IllegalStateException if the lent block was already forwarded ({@link #dataForwarded})
   */
  public byte[] dataArray() {
    if (dataForwarded) {
      throw new IllegalStateException("the data block was forwarded from the read buffer already");
    }
    return lentFrom != null ? lentFrom : bytes;
  }

  public int dataArrayOffset() {
    return lentFrom != null ? lentOffset : dataOffset;
  }

  /** The request was answered: a data block still lent is not needed any more. */
  public void dropLentData() {
    if (lentFrom != null) { // only the net thread's requests are lent: no write from a worker
      lentFrom = null;
    }
  }

  /**
   * The event loop has copied the lent data block to the server's send buffer: the request lets the
   * client's read buffer go (it is not sent again: only reads are retried elsewhere).
   */
  public void dataForwarded() {
    if (lentFrom != null) {
      lentFrom = null;
      dataForwarded = true;
    }
  }

  public int lineLength() {
    return lineLength;
  }

  /**
   * Length of the request as it goes on the wire, from offset 0 of {@link #bytes()}: the line, its
   * {@code \r\n}, and for storage commands the data block and its {@code \r\n}.
   */
  public int wireLength() {
    if (rawLength > 0) {
      return rawLength;
    }
    return dataOffset > 0 ? dataOffset + dataLength + 2 : lineLength + 2;
  }

  public int dataOffset() {
    return dataOffset;
  }

  public int dataLength() {
    return dataLength;
  }

  public int tokenCount() {
    return tokenCount;
  }

  public int tokenStart(int token) {
    return tokenStart[token];
  }

  public int tokenEnd(int token) {
    return tokenEnd[token];
  }

  public int keyCount() {
    return keyCount;
  }

  /** Token index of key {@code k} (0-based). */
  public int keyToken(int k) {
    return firstKeyToken + k * keyStride;
  }

  public int keyStart(int k) {
    return tokenStart[keyToken(k)];
  }

  public int keyEnd(int k) {
    return tokenEnd[keyToken(k)];
  }

  /** Tokens from one key to the next: 2 for redis' key/value pairs ({@code MSET}), else 1. */
  public int keyStride() {
    return keyStride;
  }

  public boolean noreply() {
    return noreply;
  }

  /**
   * Length of the line to forward to a server: the whole line, or without its trailing {@code
   * noreply} token (the middleware always waits for the server's reply; see README).
   */
  public int forwardLineLength() {
    if (!noreply) {
      return lineLength;
    }
    return tokenEnd[tokenCount - 2];
  }

  public byte[] immediateReply() {
    return immediateReply;
  }

  /** The operation type this request is counted as. */
  public OpType opType() {
    if (respCommand != null) {
      return respCommand.opType(keyCount);
    }
    if (command == null) {
      return OpType.OTHER;
    }
    return switch (command.family()) {
      case RETRIEVAL -> keyCount > 1 ? OpType.MULTIGET : OpType.GET;
      case STORAGE -> OpType.SET;
      default -> OpType.OTHER;
    };
  }

  /** The line (and data block) as text, for tests and diagnostics. Allocates. */
  @Override
  public String toString() {
    String line = new String(bytes, 0, lineLength, java.nio.charset.StandardCharsets.ISO_8859_1);
    return status + " " + line + (dataLength > 0 ? " <" + dataLength + " bytes>" : "");
  }

  // ---- routing (net thread) -------------------------------------------------------------------

  /** Sets the target servers (replicas, or every server of a split multi-get). */
  public void clearServers() {
    serverCount = 0;
    split = false;
    keyFallbacksSet = false;
    fallbackServer = -1;
    fallbackToAny = false;
  }

  /**
   * The server a single-server read may be retried on once if its own server is down or ejected (a
   * replica holding the same data), or -1.
   */
  public int fallbackServer() {
    return fallbackServer;
  }

  /**
   * Whether every server holds the read's data (round-robin routing: writes go to all), so its
   * retry may go to any server in rotation, from {@link #fallbackServer()} on.
   */
  public boolean fallbackToAny() {
    return fallbackToAny;
  }

  /**
   * @param anyServer every server holds the data: the retry may go to the first server in rotation
   *     from {@code server} on
   */
  public void setFallbackServer(int server, boolean anyServer) {
    fallbackServer = server;
    fallbackToAny = anyServer;
  }

  public void addServer(int server) {
    if (serverCount == servers.length) {
      servers = Arrays.copyOf(servers, serverCount * 2);
    }
    servers[serverCount++] = server;
  }

  public int serverCount() {
    return serverCount;
  }

  public int server(int i) {
    return servers[i];
  }

  /** Marks a multi-get split by key; {@link #keyServer(int)} gives each key's server. */
  public void setKeyServer(int k, int server) {
    if (k >= keyServers.length) {
      keyServers = Arrays.copyOf(keyServers, Math.max(k + 1, keyServers.length * 2));
    }
    keyServers[k] = server;
    split = true;
  }

  public boolean isSplit() {
    return split;
  }

  /**
   * A split read's replica of key {@code k} to read it from if its server ({@link #keyServer}) is
   * down, or -1 (set after {@link #setKeyServer} for that key).
   */
  public void setKeyFallback(int k, int server) {
    if (!keyFallbacksSet) {
      if (keyFallbacks.length < keyCount) {
        keyFallbacks = new int[Math.max(keyCount, keyFallbacks.length * 2)];
      }
      Arrays.fill(keyFallbacks, -1);
      keyFallbacksSet = true;
    }
    keyFallbacks[k] = server;
  }

  /** Key {@code k}'s fallback replica, or -1. */
  public int keyFallback(int k) {
    return keyFallbacksSet ? keyFallbacks[k] : -1;
  }

  /**
   * A worker re-reads key {@code k} from its fallback: that becomes its server, and it has no
   * fallback left. Call {@link #serversFromKeys} after the last key moved.
   */
  public void moveKeyToFallback(int k) {
    keyServers[k] = keyFallbacks[k];
    keyFallbacks[k] = -1;
  }

  /**
   * Makes the request's servers those of its keys (after keys moved), in key order.
   *
   * @param seen scratch, one entry per server; overwritten
   */
  public void serversFromKeys(boolean[] seen) {
    Arrays.fill(seen, false);
    serverCount = 0;
    for (int k = 0; k < keyCount; k++) {
      int server = keyServers[k];
      if (!seen[server]) {
        seen[server] = true;
        addServer(server);
      }
    }
  }

  public int keyServer(int k) {
    return keyServers[k];
  }
}
