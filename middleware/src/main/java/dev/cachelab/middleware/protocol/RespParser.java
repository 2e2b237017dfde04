package dev.cachelab.middleware.protocol;

import dev.cachelab.middleware.protocol.Request.Status;
import java.util.Arrays;

/**
 * Incremental decoder for redis' RESP requests, client side (redis {@code RESP protocol spec}):
 * multibulk arrays of bulk strings ({@code *2\r\n$3\r\nGET\r\n$1\r\nk\r\n}) and inline commands
 * ({@code SET k "a b"\r\n}, split and unquoted as redis does). Fed whatever bytes a read returned,
 * it decodes at most one request per call and says "need more" by returning 0; requests may be
 * split anywhere. Every request is held in the {@link Request} as the multibulk array it is
 * forwarded as (an inline command is rewritten into one). It frames requests, names their command
 * and places their keys; the commands about the connection itself ({@code HELLO}, {@code CLIENT},
 * {@code SELECT}...) are answered by the connection's {@link RespConnectionState}. One instance per
 * client connection; net thread only.
 *
 * <p>Errors follow redis: an unknown command or a wrong argument count gets {@code -ERR ...} and
 * the connection goes on in order; a framing error ({@code Protocol error: ...}) gets its error and
 * the connection is closed after the replies before it, since the stream cannot be resynchronised.
 */
public final class RespParser implements RequestDecoder {
  /**
   * Longest inline command, and longest {@code *<count>} or {@code $<length>} line (redis' 64 KiB).
   */
  public static final int MAX_INLINE_BYTES = 64 * 1024;

  /** Most arguments in one request (redis 7's limit on multibulk length is higher). */
  public static final int MAX_ARGS = 1024 * 1024;

  /** Request bytes allowed beyond one value of {@code maxValueBytes} (keys, other arguments). */
  private static final int EXTRA_REQUEST_BYTES = 1 << 20;

  /** redis' {@code proto-max-bulk-len} default: a longer {@code $<length>} is a framing error. */
  private static final long PROTO_MAX_BULK_BYTES = 512L * 1024 * 1024;

  /**
   * How much of the arguments together an unknown-command error quotes (of the name: {@link
   * RespTokens#IN_ERROR_BYTES}).
   */
  private static final int ARGS_IN_ERROR_BYTES = 128;

  /** Argument offsets kept between requests; a larger request's are given back after it. */
  private static final int KEEP_ARGS = 4096;

  private final int maxValueBytes;
  private final KeyPlacement placement;
  private final RespConnectionState connection = new RespConnectionState();
  private int scannedBytes;
  // A multibulk request decoded in part: its element count (0: none) and where to resume.
  private long pendingCount;
  private int pendingOffset;
  private long argsDecoded;
  private int[] argStart = new int[8];
  private int[] argEnd = new int[8];
  private int argCount;
  private byte[] scratch = new byte[256];
  private byte[] inlineArgs = new byte[256];
  private final boolean adminCommands;

  /**
   * @param maxValueBytes longest bulk string accepted
   * @param placement where keys live: a command naming several keys that is not split by key
   *     ({@code MSET}, {@code SINTER}, {@code RENAME}) is accepted only if they are all on the same
   *     servers
   */
  public RespParser(int maxValueBytes, KeyPlacement placement) {
    this(maxValueBytes, placement, true);
  }

  /**
   * @param adminCommands whether {@code FLUSHALL} and {@code FLUSHDB}, which empty every server for
   *     every client, are forwarded ({@code --admin-commands}); refused when false
   */
  public RespParser(int maxValueBytes, KeyPlacement placement, boolean adminCommands) {
    this.maxValueBytes = maxValueBytes;
    this.placement = placement;
    this.adminCommands = adminCommands;
  }

  private static byte[] adminRefused(RespCommand command) {
    String name = command.label().toUpperCase(java.util.Locale.ROOT);
    return RespReplies.error(
        name
            + " is not allowed by the middleware: it empties every server for every client"
            + " (--admin-commands true allows it)");
  }

  @Override
  public byte[] outOfMemoryReply() {
    return OUT_OF_MEMORY;
  }

  private static final byte[] OUT_OF_MEMORY = RespReplies.error("out of memory reading request");

  @Override
  public long scratchBytes() {
    return argStart.length > KEEP_ARGS ? 4L * (argStart.length + argEnd.length) : 0;
  }

  @Override
  public int maxRequestBytes() {
    return maxValueBytes + EXTRA_REQUEST_BYTES;
  }

  @Override
  public int decode(byte[] buf, int from, int to, Request request) {
    if (from >= to) {
      return 0;
    }
    return buf[from] == '*'
        ? decodeMultibulk(buf, from, to, request)
        : decodeInline(buf, from, to, request);
  }

  // *<count>\r\n then <count> times $<length>\r\n<bytes>\r\n. Resumable: the elements decoded
  // before a "need more" are kept (argCount, and pendingOffset past them, relative to from), so a
  // request that arrives in many reads is scanned once, not once per read.
  private int decodeMultibulk(byte[] buf, int from, int to, Request request) {
    int pos;
    long count;
    if (pendingCount > 0) {
      count = pendingCount;
      pos = from + pendingOffset;
    } else {
      int countEnd = findCr(buf, from + 1, to);
      if (countEnd < 0) {
        return to - from > MAX_INLINE_BYTES
            ? protocolError(request, "too big mbulk count string", to - from)
            : 0;
      }
      if (buf[countEnd + 1] != '\n') {
        return protocolError(request, "CR not followed by LF", to - from);
      }
      count = RespTokens.number(buf, from + 1, countEnd);
      pos = countEnd + 2;
      if (count == Long.MIN_VALUE || count > MAX_ARGS) {
        return protocolError(request, "invalid multibulk length", pos - from);
      }
      if (count <= 0) {
        request.reset(); // redis ignores *0 and *-1
        return pos - from;
      }
      argCount = 0;
    }
    while (argCount < count) {
      if (pos >= to) {
        return needMore(request, from, pos, count, to);
      }
      if (buf[pos] != '$') {
        char got = (char) (buf[pos] & 0xff);
        return protocolError(request, "expected '$', got '" + printable(got) + "'", to - from);
      }
      int lengthEnd = findCr(buf, pos + 1, to);
      if (lengthEnd < 0) {
        return to - pos > MAX_INLINE_BYTES
            ? protocolError(request, "too big bulk count string", to - from)
            : needMore(request, from, pos, count, to);
      }
      if (buf[lengthEnd + 1] != '\n') {
        return protocolError(request, "CR not followed by LF", to - from);
      }
      long length = RespTokens.number(buf, pos + 1, lengthEnd);
      if (length < 0 || length > PROTO_MAX_BULK_BYTES) {
        return protocolError(request, "invalid bulk length", to - from);
      }
      if (length > maxValueBytes) {
        return protocolError(
            request,
            "invalid bulk length (expected: 0.." + maxValueBytes + " bytes, see --max-value-bytes)",
            to - from);
      }
      int dataStart = lengthEnd + 2;
      long dataEnd = dataStart + length;
      if (dataEnd + 2 - from > maxRequestBytes()) {
        return tooLarge(request, to - from);
      }
      if (dataEnd + 2 > to) {
        return needMore(request, from, pos, count, to);
      }
      int end = (int) dataEnd;
      if (buf[end] != '\r' || buf[end + 1] != '\n') {
        return protocolError(request, "bulk string not followed by CRLF", to - from);
      }
      addArg(dataStart - from, end - from);
      argsDecoded++;
      pos = end + 2;
    }
    pendingCount = 0;
    request.reset();
    request.copyRaw(buf, from, pos - from);
    for (int i = 0; i < argCount; i++) {
      request.addToken(argStart[i], argEnd[i]);
    }
    if (argStart.length > KEEP_ARGS) {
      argStart = new int[8]; // a very large request's offsets: not kept for the next ones
      argEnd = new int[8];
    }
    resolve(request);
    return pos - from;
  }

  // <name> <arg>...\r\n (or \n), rewritten as a multibulk array.
  private int decodeInline(byte[] buf, int from, int to, Request request) {
    int newline = -1;
    for (int i = from + scannedBytes; i < to; i++) {
      if (buf[i] == '\n') {
        newline = i;
        break;
      }
    }
    if (newline < 0) {
      scannedBytes = to - from;
      if (scannedBytes > MAX_INLINE_BYTES) {
        scannedBytes = 0;
        return protocolError(request, "too big inline request", to - from);
      }
      return 0;
    }
    scannedBytes = 0;
    int consumed = newline + 1 - from;
    int lineEnd = newline > from && buf[newline - 1] == '\r' ? newline - 1 : newline;
    if (lineEnd - from > MAX_INLINE_BYTES) {
      return protocolError(request, "too big inline request", consumed);
    }
    if (!splitInline(buf, from, lineEnd)) {
      return protocolError(request, "unbalanced quotes in request", consumed);
    }
    request.reset();
    if (argCount == 0) {
      return consumed; // an empty line is skipped, as redis does
    }
    int length = composeMultibulk(inlineArgs);
    request.copyRaw(scratch, 0, length);
    for (int a = 0; a < argCount; a++) {
      request.addToken(argStart[a], argEnd[a]);
    }
    resolve(request);
    return consumed;
  }

  /**
   * Splits an inline line into arguments the way redis' {@code sdssplitargs} does: separated by
   * blanks; {@code "..."} with the escapes {@code \\n \\r \\t \\b \\a \\xHH} and {@code \\<char>},
   * and {@code '...'} with {@code \\'}, anywhere in an argument; a closing quote must be followed
   * by a blank or the end of the line. The arguments are written to {@code inlineArgs}.
   *
   * @return false for unbalanced quotes
   */
  private boolean splitInline(byte[] buf, int from, int to) {
    if (inlineArgs.length < to - from) {
      inlineArgs = new byte[Math.max(to - from, inlineArgs.length * 2)];
    }
    argCount = 0;
    int out = 0;
    int i = from;
    while (true) {
      while (i < to && isBlank(buf[i])) {
        i++;
      }
      if (i == to) {
        return true;
      }
      int start = out;
      byte quote = 0;
      while (i < to) {
        byte b = buf[i];
        if (quote == 0) {
          if (isBlank(b)) {
            break;
          }
          if (b == '"' || b == '\'') {
            quote = b;
          } else {
            inlineArgs[out++] = b;
          }
          i++;
          continue;
        }
        if (b == quote) {
          if (i + 1 < to && !isBlank(buf[i + 1])) {
            return false;
          }
          quote = 0;
          i++;
          break;
        }
        if (b == '\\' && i + 1 < to) {
          int escaped = unescape(buf, i + 1, to, quote);
          if (escaped >= 0) {
            inlineArgs[out++] = (byte) (escaped & 0xff);
            i += 1 + (escaped >>> 8);
            continue;
          }
        }
        inlineArgs[out++] = b;
        i++;
      }
      if (quote != 0) {
        return false;
      }
      addArg(start, out);
    }
  }

  /**
   * The byte of the escape after a backslash at {@code buf[at]}, plus (bytes consumed) << 8; -1 if
   * the backslash stands for itself.
   */
  private static int unescape(byte[] buf, int at, int to, byte quote) {
    byte c = buf[at];
    if (quote == '\'') {
      return c == '\'' ? c | 1 << 8 : -1;
    }
    if (c == 'x' && at + 2 < to && hex(buf[at + 1]) >= 0 && hex(buf[at + 2]) >= 0) {
      return (hex(buf[at + 1]) << 4 | hex(buf[at + 2])) | 3 << 8;
    }
    int b =
        switch (c) {
          case 'n' -> '\n';
          case 'r' -> '\r';
          case 't' -> '\t';
          case 'b' -> '\b';
          case 'a' -> 7;
          default -> c & 0xff;
        };
    return b | 1 << 8;
  }

  private static int hex(byte b) {
    return Character.digit(b, 16);
  }

  /**
   * Writes the inline arguments as a multibulk array into {@code scratch}; args now point there.
   */
  private int composeMultibulk(byte[] buf) {
    int needed = 16;
    for (int a = 0; a < argCount; a++) {
      needed += 16 + argEnd[a] - argStart[a];
    }
    if (scratch.length < needed) {
      scratch = new byte[Math.max(needed, scratch.length * 2)];
    }
    int at = 0;
    scratch[at++] = '*';
    at = RespReplies.writeDecimal(argCount, scratch, at);
    scratch[at++] = '\r';
    scratch[at++] = '\n';
    for (int a = 0; a < argCount; a++) {
      int length = argEnd[a] - argStart[a];
      scratch[at++] = '$';
      at = RespReplies.writeDecimal(length, scratch, at);
      scratch[at++] = '\r';
      scratch[at++] = '\n';
      System.arraycopy(buf, argStart[a], scratch, at, length);
      argStart[a] = at;
      argEnd[a] = at + length;
      at += length;
      scratch[at++] = '\r';
      scratch[at++] = '\n';
    }
    return at;
  }

  /** Names the command, checks its arguments and sets the request's status. */
  private void resolve(Request request) {
    byte[] bytes = request.bytes();
    RespCommand command = RespCommand.lookup(bytes, request.tokenStart(0), request.tokenEnd(0));
    int args = request.tokenCount();
    if (command == null) {
      if (isToken(request, 0, MULTI)) {
        // The transaction's commands would run at once, outside it: the connection is closed
        // after this error (as twemproxy closes it).
        request.setRejected(
            Status.REJECT_AND_CLOSE,
            RespReplies.error(
                "MULTI is not supported by the middleware (closing the connection so that the"
                    + " transaction's commands do not run outside it)"));
        return;
      }
      request.setRejected(Status.REJECT, RespReplies.error(unknownCommand(request)));
      return;
    }
    if (!command.acceptsArgs(args)) {
      request.setRejected(
          Status.REJECT,
          RespReplies.error("wrong number of arguments for '" + command.label() + "' command"));
      return;
    }
    if (connection.answer(command, request)) {
      return;
    }
    switch (command) {
      case INFO -> request.setLocalResp(Status.LOCAL, command, null);
      case CONFIG -> {
        if (RespCommand.lookup(bytes, request.tokenStart(1), request.tokenEnd(1))
            != RespCommand.GET) {
          request.setRejected(
              Status.REJECT,
              RespReplies.error(
                  "CONFIG "
                      + RespTokens.text(request, 1)
                      + " is not supported by the middleware (only CONFIG GET, answered by the"
                      + " first server)"));
          return;
        }
        request.setParsedResp(Status.FORWARD, command, 0, 1);
        if (connection.resp3()) {
          request.setResp3Shape(command.resp3Shape());
        }
      }
      case SETRANGE, SETBIT, BITFIELD -> {
        if (grownValueBytes(request, command) > maxValueBytes) {
          request.setRejected(Status.REJECT, valueTooLarge());
          return;
        }
        forward(request, command, args);
      }
      case FLUSHALL, FLUSHDB -> {
        if (!adminCommands) {
          request.setRejected(Status.REJECT, adminRefused(command));
          return;
        }
        forward(request, command, args);
      }
      default -> forward(request, command, args);
    }
  }

  /**
   * The length the string at {@code SETRANGE}'s, {@code SETBIT}'s or {@code BITFIELD}'s key may
   * grow to (offset plus value, or the byte of the bit); 0 for an offset that is no number or
   * negative, which the server refuses itself. A few bytes of request could otherwise make every
   * server hold a value of up to 512 MB, far past {@code --max-value-bytes}.
   */
  private static long grownValueBytes(Request request, RespCommand command) {
    if (command == RespCommand.BITFIELD) {
      return bitfieldGrownBytes(request);
    }
    long offset = RespTokens.number(request, 2);
    if (offset < 0) {
      return 0;
    }
    if (command == RespCommand.SETBIT) {
      return offset / 8 + 1;
    }
    int value = RespTokens.length(request, 3);
    return value == 0 ? 0 : offset + value; // an empty value does not grow the string
  }

  private static final byte[] BITFIELD_GET = {'G', 'E', 'T'};
  private static final byte[] BITFIELD_SET = {'S', 'E', 'T'};
  private static final byte[] BITFIELD_INCRBY = {'I', 'N', 'C', 'R', 'B', 'Y'};
  private static final byte[] BITFIELD_OVERFLOW = {'O', 'V', 'E', 'R', 'F', 'L', 'O', 'W'};

  /**
   * The end, in bytes, of the furthest field {@code BITFIELD}'s {@code SET} and {@code INCRBY}
   * write; the arguments from the first the server would refuse on are not looked at.
   */
  private static long bitfieldGrownBytes(Request request) {
    long furthest = 0;
    int n = request.tokenCount();
    int t = 2;
    while (t < n) {
      if (isToken(request, t, BITFIELD_GET)) {
        t += 3;
      } else if (isToken(request, t, BITFIELD_OVERFLOW)) {
        t += 2;
      } else if ((isToken(request, t, BITFIELD_SET) || isToken(request, t, BITFIELD_INCRBY))
          && t + 3 < n) {
        furthest = Math.max(furthest, bitfieldEndBytes(request, t + 1, t + 2));
        t += 4;
      } else {
        return furthest;
      }
    }
    return furthest;
  }

  /** The end in bytes of a field of type {@code i<bits>}/{@code u<bits>} at offset {@code [#]n}. */
  private static long bitfieldEndBytes(Request request, int typeToken, int offsetToken) {
    byte[] b = request.bytes();
    int typeStart = request.tokenStart(typeToken);
    int typeEnd = request.tokenEnd(typeToken);
    if (typeEnd - typeStart < 2 || (b[typeStart] != 'i' && b[typeStart] != 'u')) {
      return 0;
    }
    long bits = RespTokens.number(b, typeStart + 1, typeEnd);
    int offsetStart = request.tokenStart(offsetToken);
    int offsetEnd = request.tokenEnd(offsetToken);
    boolean inFields = offsetEnd > offsetStart && b[offsetStart] == '#';
    long offset = RespTokens.number(b, inFields ? offsetStart + 1 : offsetStart, offsetEnd);
    if (bits < 1 || bits > 64 || offset < 0 || offset > Long.MAX_VALUE / 128) {
      return 0;
    }
    long bitOffset = inFields ? offset * bits : offset;
    return (bitOffset + bits + 7) / 8;
  }

  private byte[] valueTooLarge() {
    return RespReplies.error(
        "string exceeds maximum allowed size (--max-value-bytes: " + maxValueBytes + " bytes)");
  }

  /**
   * A keyed command to forward: refused if it names several keys that are not on the same servers
   * or picks at random while writes are replicated; its reply shape under RESP3 noted.
   */
  private void forward(Request request, RespCommand command, int args) {
    int keys = command.keyCount(args);
    int firstKey = 1;
    RespCommand.KeyGroup group = command.group();
    if (group != null) {
      firstKey = group.first();
      if (!groupOnSameServers(request, group, args)) {
        request.setRejected(Status.REJECT, RespReplies.error(differentServers(command)));
        return;
      }
    } else if (keys > 1 && command.isWrite() && !keysOnSameServers(request, command, keys)) {
      request.setRejected(Status.REJECT, RespReplies.error(differentServers(command)));
      return;
    }
    if (command.isRandom() && placement.replicatesWrites()) {
      request.setRejected(
          Status.REJECT,
          RespReplies.error(
              "'"
                  + command.label()
                  + "' picks at random, so replicas given it would differ: not supported while"
                  + " writes go to several servers"));
      return;
    }
    request.setParsedResp(Status.FORWARD, command, keys, firstKey);
    if (connection.resp3()) {
      byte[] option = command.resp3Option();
      boolean shaped =
          option == null || hasOption(request, option, command.firstOptionArgument(request, args));
      request.setResp3Shape(shaped ? command.resp3Shape() : Resp3Shape.SAME);
    }
  }

  private static String differentServers(RespCommand command) {
    return "the keys of '"
        + command.label()
        + "' are on different servers (--routing hash): give it keys that hash to the same"
        + " servers, or one key per command";
  }

  /** Whether keys {@code 1..keys-1} of a split-or-write command are on key 0's servers. */
  private boolean keysOnSameServers(Request request, RespCommand command, int keys) {
    byte[] bytes = request.bytes();
    int stride = command.keyStride();
    for (int k = 1; k < keys; k++) {
      int t = 1 + k * stride;
      if (!placement.sameServers(
          bytes,
          request.tokenStart(1),
          request.tokenEnd(1),
          request.tokenStart(t),
          request.tokenEnd(t))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether every key of a {@link RespCommand.KeyGroup} is on the servers of its first key. A
   * {@code numkeys} that is no number, or names more keys than there are arguments, is left for the
   * server to refuse.
   */
  private boolean groupOnSameServers(Request request, RespCommand.KeyGroup group, int args) {
    int first = group.first();
    int last;
    int step = group.step();
    if (group.numkeysAt() >= 0) {
      int at = group.numkeysAt();
      long count = RespTokens.number(request, at);
      if (count < 1 || at + count >= args) {
        return true;
      }
      last = (int) (at + count);
      if (at == 2 && !samePlace(request, first, at + 1)) {
        return false; // the destination, then the keys after numkeys
      }
      first = at + 1;
    } else {
      last = group.count() < 0 ? args - 1 : Math.min(args - 1, first + group.count() - 1);
    }
    for (int t = first + step; t <= last; t += step) {
      if (!samePlace(request, group.first(), t)) {
        return false;
      }
    }
    return true;
  }

  private boolean samePlace(Request request, int a, int b) {
    return placement.sameServers(
        request.bytes(),
        request.tokenStart(a),
        request.tokenEnd(a),
        request.tokenStart(b),
        request.tokenEnd(b));
  }

  /** Whether a token from {@code from} on is {@code option}, in any case. */
  private static boolean hasOption(Request request, byte[] option, int from) {
    for (int t = from; t < request.tokenCount(); t++) {
      if (RespTokens.length(request, t) == option.length
          && RespCommand.equalsIgnoreCase(option, request.bytes(), request.tokenStart(t))) {
        return true;
      }
    }
    return false;
  }

  private static final byte[] MULTI = {'M', 'U', 'L', 'T', 'I'};

  /** Whether token {@code t} is {@code name} (upper case), ignoring case. */
  private static boolean isToken(Request request, int t, byte[] name) {
    byte[] bytes = request.bytes();
    int start = request.tokenStart(t);
    if (request.tokenEnd(t) - start != name.length) {
      return false;
    }
    for (int i = 0; i < name.length; i++) {
      if ((bytes[start + i] & 0xdf) != name[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * redis 7's text: {@code unknown command '<name>', with args beginning with: '<arg>' ...}, the
   * name cut at 128 bytes, the arguments until they take 128 bytes (each cut to what is left), all
   * cut at a NUL byte (redis formats them as C strings).
   */
  private static String unknownCommand(Request request) {
    StringBuilder text = new StringBuilder("unknown command '");
    appendCString(text, request, 0, RespTokens.IN_ERROR_BYTES);
    text.append("', with args beginning with: ");
    int argsStart = text.length();
    for (int t = 1; t < request.tokenCount(); t++) {
      int used = text.length() - argsStart;
      if (used >= ARGS_IN_ERROR_BYTES) {
        break;
      }
      text.append('\'');
      appendCString(text, request, t, ARGS_IN_ERROR_BYTES - used);
      text.append("' ");
    }
    return text.toString();
  }

  /** Appends token {@code t} as ISO-8859-1 characters, at most {@code max}, up to a NUL byte. */
  private static void appendCString(StringBuilder text, Request request, int t, int max) {
    byte[] bytes = request.bytes();
    int end = Math.min(request.tokenEnd(t), request.tokenStart(t) + max);
    for (int i = request.tokenStart(t); i < end && bytes[i] != 0; i++) {
      text.append((char) (bytes[i] & 0xff));
    }
  }

  /**
   * "Need more bytes" for a multibulk request decoded up to {@code pos}: remembers where to resume.
   * A request that already fills the largest buffer a connection gets can never be completed: it is
   * refused (before, the connection waited for bytes it had no room to read, for ever).
   */
  private int needMore(Request request, int from, int pos, long count, int to) {
    if (to - from >= maxRequestBytes()) {
      return tooLarge(request, to - from);
    }
    pendingCount = count;
    pendingOffset = pos - from;
    return 0;
  }

  private int tooLarge(Request request, int consumed) {
    return protocolError(
        request, "request too large (expected: <= " + maxRequestBytes() + " bytes)", consumed);
  }

  /** Bulk strings decoded so far, over all requests (tests: each is decoded once). */
  long argsDecoded() {
    return argsDecoded;
  }

  private int protocolError(Request request, String text, int consumed) {
    scannedBytes = 0;
    pendingCount = 0;
    if (argStart.length > KEEP_ARGS) {
      argStart = new int[8];
      argEnd = new int[8];
    }
    request.reset();
    request.setRejected(Status.REJECT_AND_CLOSE, RespReplies.error("Protocol error: " + text));
    return consumed;
  }

  private void addArg(int start, int end) {
    if (argCount == argStart.length) {
      argStart = Arrays.copyOf(argStart, argCount * 2);
      argEnd = Arrays.copyOf(argEnd, argCount * 2);
    }
    argStart[argCount] = start;
    argEnd[argCount] = end;
    argCount++;
  }

  /**
   * Offset of the first {@code \r} in {@code buf[from, to)} that has a byte after it, or -1 (need
   * more bytes).
   */
  private static int findCr(byte[] buf, int from, int to) {
    for (int i = from; i + 1 < to; i++) {
      if (buf[i] == '\r') {
        return i;
      }
    }
    return -1;
  }

  private static boolean isBlank(byte b) {
    return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == 0x0b || b == '\f';
  }

  private static char printable(char c) {
    return c >= ' ' && c < 127 ? c : '?';
  }
}
