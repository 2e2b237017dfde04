package dev.cachelab.middleware.protocol;

import dev.cachelab.middleware.protocol.Request.Status;
import java.nio.charset.StandardCharsets;

/**
 * Incremental decoder for the memcached text protocol, client side (memcached {@code
 * doc/protocol.txt}). Fed whatever bytes a read returned, it decodes at most one request per call
 * and says "need more" by returning 0; a request may be split across any number of reads and a read
 * may hold several requests. One instance per client connection; net thread only.
 *
 * <p>States: {@code LINE} (looking for the line's {@code \n}), {@code DATA} (line parsed, waiting
 * for {@code <bytes>\r\n} of data block), {@code SWALLOW} (skipping the data block of a rejected
 * storage command so the stream stays in frame).
 */
public final class RequestParser implements RequestDecoder {
  /** Longest key memcached accepts. */
  public static final int MAX_KEY_BYTES = 250;

  /**
   * Longest command line accepted, except retrieval lines: those (multi-gets) may be as long as
   * {@link #maxRequestBytes()}, i.e. about 4,000 keys of 250 bytes with the default 1 MiB values
   * (memcached 1.6 streams multi-get lines of any length; the buffer budget bounds what they cost).
   */
  public static final int MAX_LINE_BYTES = 64 * 1024;

  private static final byte[][] RETRIEVAL_PREFIXES = {
    {'g', 'e', 't', ' '}, {'g', 'e', 't', 's', ' '}, {'g', 'a', 't', ' '}, {'g', 'a', 't', 's', ' '}
  };

  private enum State {
    LINE,
    DATA,
    SWALLOW
  }

  private final int maxValueBytes;
  private final boolean adminCommands;
  private State state = State.LINE;
  private int scannedBytes;
  private int nulOffset = -1; // first NUL of the line being scanned, from its start; -1 if none
  private int lineBytesWithTerminator;
  private int pendingDataBytes;
  private long swallowRemainingBytes;

  /** A parser accepting data blocks up to {@code maxValueBytes}, and every command. */
  public RequestParser(int maxValueBytes) {
    this(maxValueBytes, true);
  }

  /**
   * A parser accepting data blocks up to {@code maxValueBytes}.
   *
   * @param adminCommands whether {@code flush_all} and {@code verbosity}, which act on every server
   *     for every client, are forwarded ({@code --admin-commands}); refused when false
   */
  public RequestParser(int maxValueBytes, boolean adminCommands) {
    this.maxValueBytes = maxValueBytes;
    this.adminCommands = adminCommands;
  }

  /**
   * Decodes at most one request from {@code buf[from, to)} into {@code request}.
   *
   * @return the number of bytes consumed; 0 means "need more bytes" (nothing consumed; call again
   *     with the same start and more bytes). When positive, {@code request.status()} is the result,
   *     or null if the bytes were only skipped (the tail of a rejected data block).
   */
  @Override
  public int decode(byte[] buf, int from, int to, Request request) {
    return switch (state) {
      case LINE -> decodeLine(buf, from, to, request);
      case DATA -> decodeData(buf, from, to, request);
      case SWALLOW -> decodeSwallow(from, to, request);
    };
  }

  /** Bytes the connection must be able to buffer for the largest request this parser accepts. */
  @Override
  public byte[] outOfMemoryReply() {
    return OUT_OF_MEMORY;
  }

  private static final byte[] OUT_OF_MEMORY = reply("SERVER_ERROR out of memory reading request");

  @Override
  public int maxRequestBytes() {
    return MAX_LINE_BYTES + maxValueBytes + 4;
  }

  @Override
  public int pendingRequestBytes() {
    return state == State.DATA ? lineBytesWithTerminator + pendingDataBytes + 2 : 0;
  }

  // <command> <args...>\r\n
  private int decodeLine(byte[] buf, int from, int to, Request request) {
    if (scannedBytes == 0 && buf[from] == BINARY_REQUEST_MAGIC) {
      // A binary-protocol client would wait for a reply while this parser waits for a newline.
      request.reset();
      request.setRejected(Status.REJECT_AND_CLOSE, BINARY_NOT_SUPPORTED);
      return to - from;
    }
    int newline = -1;
    for (int i = from + scannedBytes; i < to; i++) {
      byte b = buf[i];
      if (b == '\n') {
        newline = i;
        break;
      }
      if (b == 0 && nulOffset < 0) {
        nulOffset = i - from;
      }
    }
    if (newline < 0) {
      scannedBytes = to - from;
      if (scannedBytes > maxLineBytes(buf, from)) {
        scannedBytes = 0;
        nulOffset = -1;
        request.reset();
        request.setRejected(
            Status.REJECT_AND_CLOSE,
            reply(
                "CLIENT_ERROR line too long (expected: <= " + maxLineBytes(buf, from) + " bytes)"));
        return to - from;
      }
      return 0;
    }
    scannedBytes = 0;
    int lineEnd = newline > from && buf[newline - 1] == '\r' ? newline - 1 : newline;
    if (nulOffset >= 0) {
      // memcached reads the line as a C string: it ends at a NUL. Parsing or forwarding the rest
      // would make this a different command from the one the server sees (which would then answer
      // twice: a reply another client's request would get).
      lineEnd = Math.min(lineEnd, from + nulOffset);
      nulOffset = -1;
    }
    int consumed = newline + 1 - from;
    if (lineEnd - from > MAX_LINE_BYTES && lineEnd - from > maxLineBytes(buf, from)) {
      request.reset();
      request.setRejected(
          Status.REJECT_AND_CLOSE,
          reply("CLIENT_ERROR line too long (expected: <= " + maxLineBytes(buf, from) + " bytes)"));
      return consumed;
    }
    request.reset();
    request.copyLine(buf, from, lineEnd - from);
    tokenize(request);
    CommandValidator.validate(request, maxValueBytes, adminCommands);
    if (request.status() == Status.FORWARD && request.command().hasDataBlock()) {
      state = State.DATA;
      lineBytesWithTerminator = consumed;
      pendingDataBytes = CommandValidator.dataBytes(request);
      return decodeData(buf, from, to, request);
    }
    if (request.status() == Status.REJECT && request.command() != null) {
      // A storage command rejected for its flags/exptime/size: skip its data block.
      long skip = CommandValidator.dataBytesToSkip(request);
      if (skip > 0) {
        state = State.SWALLOW;
        swallowRemainingBytes = skip;
      }
    }
    return consumed;
  }

  /** The line limit for the line starting at {@code from}: longer for retrieval commands. */
  private int maxLineBytes(byte[] buf, int from) {
    for (byte[] prefix : RETRIEVAL_PREFIXES) {
      if (from + prefix.length <= buf.length
          && java.util.Arrays.equals(buf, from, from + prefix.length, prefix, 0, prefix.length)) {
        return maxRequestBytes() - 4;
      }
    }
    return MAX_LINE_BYTES;
  }

  // <command line>\r\n <here> <data block>\r\n
  private int decodeData(byte[] buf, int from, int to, Request request) {
    int dataStart = from + lineBytesWithTerminator;
    int needed = lineBytesWithTerminator + pendingDataBytes + 2;
    if (to - from < needed) {
      return 0;
    }
    state = State.LINE;
    int dataEnd = dataStart + pendingDataBytes;
    if (buf[dataEnd] != '\r' || buf[dataEnd + 1] != '\n') {
      request.setRejected(Status.REJECT_AND_CLOSE, BAD_DATA_CHUNK);
      return needed;
    }
    request.takeData(buf, dataStart, pendingDataBytes);
    return needed;
  }

  private int decodeSwallow(int from, int to, Request request) {
    int skipped = (int) Math.min(swallowRemainingBytes, to - from);
    swallowRemainingBytes -= skipped;
    if (swallowRemainingBytes == 0) {
      state = State.LINE;
    }
    request.reset();
    return skipped;
  }

  // memcached splits command lines on spaces only.
  private static void tokenize(Request request) {
    byte[] line = request.bytes();
    int length = request.lineLength();
    int i = 0;
    while (i < length) {
      while (i < length && line[i] == ' ') {
        i++;
      }
      if (i == length) {
        break;
      }
      int start = i;
      while (i < length && line[i] != ' ') {
        i++;
      }
      request.addToken(start, i);
    }
  }

  static final byte[] BAD_DATA_CHUNK = reply("CLIENT_ERROR bad data chunk");

  /** The first byte of every binary-protocol request (memcached's {@code PROTOCOL_BINARY_REQ}). */
  private static final byte BINARY_REQUEST_MAGIC = (byte) 0x80;

  private static final byte[] BINARY_NOT_SUPPORTED =
      reply("CLIENT_ERROR binary protocol is not supported");

  /** {@code text + "\r\n"} as bytes. */
  static byte[] reply(String text) {
    return (text + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
  }
}
