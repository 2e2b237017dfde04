package dev.cachelab.middleware.protocol;

import static dev.cachelab.middleware.protocol.RequestParser.reply;

import dev.cachelab.middleware.protocol.Request.Status;

/**
 * Checks a tokenized command line against memcached's grammar and sets the request's status: to
 * forward, answered locally, or rejected with the reply to send. Net thread only; stateless.
 *
 * <p>Wrong token counts and unknown commands get {@code ERROR}, as memcached does; bad arguments
 * get {@code CLIENT_ERROR <what>: <value> (expected: <range>)}. A storage command whose data block
 * length cannot be read loses framing and is rejected with {@link Status#REJECT_AND_CLOSE}.
 */
final class CommandValidator {
  static final byte[] ERROR = reply("ERROR");
  static final byte[] END = reply("END");
  static final byte[] MN_REPLY = reply("MN");
  static final byte[] META_FORMAT = reply("CLIENT_ERROR bad command line format");
  private static final byte[] NO_REPLY = {};
  private static final java.util.List<String> UNSUPPORTED_STATS_GROUPS =
      java.util.List.of("reset", "detail", "cachedump", "extstore", "proxy");
  private static final java.util.List<String> FORWARDED_STATS_GROUPS =
      java.util.List.of("items", "slabs", "settings", "sizes", "conns");
  static final byte[] TOO_LARGE = reply("SERVER_ERROR object too large for cache");
  static final byte[] BAD_DELTA = reply("CLIENT_ERROR invalid numeric delta argument");
  static final byte[] DELETE_USAGE =
      reply("CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]");
  private static final byte[] NOREPLY = {'n', 'o', 'r', 'e', 'p', 'l', 'y'};

  /** The longest line memcached takes whatever the reads (get and gets lines aside). */
  static final int MAX_FORWARDED_LINE_BYTES = 2048;

  /**
   * Spaces memcached skips before the {@code get} or {@code gets} of a line longer than {@link
   * #MAX_FORWARDED_LINE_BYTES} (it closes the connection after more, {@code proto_text.c}).
   */
  private static final int MAX_SPACES_BEFORE_LONG_GET = 100;

  static final byte[] LINE_TOO_LONG =
      reply(
          "CLIENT_ERROR line too long (expected: <= "
              + MAX_FORWARDED_LINE_BYTES
              + " bytes but for get and gets after at most 100 spaces; memcached closes the"
              + " connection)");
  static final byte[] FLUSH_ALL_REFUSED =
      reply(
          "CLIENT_ERROR flush_all not allowed: it empties every server for every client"
              + " (--admin-commands true allows it)");
  static final byte[] VERBOSITY_REFUSED =
      reply(
          "CLIENT_ERROR verbosity not allowed: it changes every server's logging for every client"
              + " (--admin-commands true allows it)");

  // Meta flags (see checkMetaFlags). memcached counts the line's end as a token and refuses more
  // than 20 (MFLAG_MAX_OPT_LENGTH), with mg's wording and ms/md/ma's.
  private static final int MAX_META_TOKENS = 19;
  static final byte[] META_FLAGS_ARE_TOO_LONG = reply("CLIENT_ERROR options flags are too long");
  static final byte[] META_FLAGS_TOO_LONG = reply("CLIENT_ERROR options flags too long");
  static final byte[] META_DUPLICATE_FLAG = reply("CLIENT_ERROR duplicate flag");
  static final byte[] META_INVALID_FLAG = reply("CLIENT_ERROR invalid flag");

  /** md and ma answer any flag error so. */
  static final byte[] META_BAD_FLAG = reply("CLIENT_ERROR invalid or duplicate flag");

  /** The flags memcached knows: 1.6.18's, and x and E of later versions (1.6.18 refuses those). */
  private static final boolean[] KNOWN_META_FLAGS = new boolean[128];

  static {
    for (char flag : "bNTRlOPLkstcfvhuqxFCEMJDI".toCharArray()) {
      KNOWN_META_FLAGS[flag] = true;
    }
  }

  private static final long UINT32_MAX = 0xFFFF_FFFFL;

  private CommandValidator() {}

  /**
   * @param adminCommands whether {@code flush_all} and {@code verbosity} are forwarded; refused
   *     when false ({@code --admin-commands})
   */
  static void validate(Request r, int maxValueBytes, boolean adminCommands) {
    validateCommand(r, maxValueBytes, adminCommands);
    if (r.status() == Status.FORWARD
        && r.lineLength() > MAX_FORWARDED_LINE_BYTES
        && (r.command() != Command.GET && r.command() != Command.GETS
            || r.tokenStart(0) > MAX_SPACES_BEFORE_LONG_GET)) {
      // memcached closes a connection whose line has no newline in its first 2048 bytes, unless it
      // is a get or gets after at most 100 spaces: forwarded, a longer line could close a shared
      // server connection (a failure counted against a healthy server; three ejected it).
      // memcached's answer: closed.
      r.setRejected(Status.REJECT_AND_CLOSE, LINE_TOO_LONG);
      return;
    }
    if (r.noreply() && r.status() == Status.REJECT && r.immediateReply() != ERROR) {
      // memcached reads noreply before it checks the arguments: their error is not sent either.
      r.setRejected(Status.REJECT, NO_REPLY);
    }
  }

  private static void validateCommand(Request r, int maxValueBytes, boolean adminCommands) {
    if (r.tokenCount() == 0) {
      r.setRejected(Status.REJECT, ERROR);
      return;
    }
    Command command = Command.lookup(r.bytes(), r.tokenStart(0), r.tokenEnd(0));
    if (command == null) {
      r.setRejected(Status.REJECT, ERROR);
      return;
    }
    switch (command) {
      case GET, GETS -> validateRetrieval(r, command, 1);
      case GAT, GATS -> validateRetrieval(r, command, 2);
      case SET, ADD, REPLACE, APPEND, PREPEND, CAS -> validateStorage(r, command, maxValueBytes);
      case DELETE -> validateDelete(r);
      case INCR, DECR, TOUCH -> validateKeyedWithArgument(r, command);
      case FLUSH_ALL -> validateFlushAll(r, adminCommands);
      case VERBOSITY -> validateVerbosity(r, adminCommands);
      // memcached 1.6 ignores arguments of version and quit (memccapable relies on it).
      case VERSION -> r.setParsed(Status.FORWARD, command, 1, 0, false);
      case STATS -> validateStats(r);
      case QUIT -> r.setParsed(Status.QUIT, command, 1, 0, false);
      case STATS_GROUP -> throw new IllegalStateException("never looked up");
      case MG, MD, MA, ME -> validateMeta(r, command, 2, maxValueBytes);
      case MS -> validateMeta(r, command, 3, maxValueBytes);
      case MN -> r.setRejected(Status.LOCAL, MN_REPLY);
    }
  }

  // get <key>*  |  gat <exptime> <key>*
  private static void validateRetrieval(Request r, Command command, int firstKey) {
    int n = r.tokenCount();
    r.setParsed(Status.FORWARD, command, firstKey, n - firstKey, false);
    if (n < firstKey || n == 1) {
      r.setRejected(Status.REJECT, ERROR);
      return;
    }
    if (firstKey == 2 && !isInt32(r, 1)) {
      reject(r, "invalid exptime argument", 1, "an integer");
      return;
    }
    if (n == firstKey) {
      // gat <exptime> without a key: memcached answers END.
      r.setRejected(Status.LOCAL, END);
      return;
    }
    for (int t = firstKey; t < n; t++) {
      if (!checkKey(r, t)) {
        return;
      }
    }
  }

  // set <key> <flags> <exptime> <bytes> [noreply]\r\n  |  cas ... <bytes> <cas unique> [noreply]
  private static void validateStorage(Request r, Command command, int maxValueBytes) {
    int n = r.tokenCount();
    int base = command == Command.CAS ? 6 : 5;
    boolean noreply = n == base + 1 && isNoreply(r, n - 1);
    r.setParsed(Status.FORWARD, command, 1, 1, noreply);
    if (n != base && n != base + 1) {
      r.setRejected(Status.REJECT, ERROR);
      return;
    }
    if (!checkDataLength(r, 4, maxValueBytes) || !checkKey(r, 1)) {
      return;
    }
    // Flags as memcached 1.6.18 takes them: any unsigned 64-bit number (it keeps the low 32 bits).
    // A last token other than "noreply" is ignored, as memcached does (the reply is sent).
    if (!isUint64(r, 2)) {
      reject(r, "bad flags", 2, "0..18446744073709551615");
    } else if (!isInt32(r, 3)) {
      reject(r, "bad exptime", 3, "an integer");
    } else if (command == Command.CAS && !isUint64(r, 5)) {
      reject(r, "bad cas unique", 5, "0..18446744073709551615");
    }
  }

  // delete <key> [0] [noreply]
  private static void validateDelete(Request r) {
    int n = r.tokenCount();
    boolean noreply = n >= 3 && isNoreply(r, n - 1);
    r.setParsed(Status.FORWARD, Command.DELETE, 1, 1, noreply);
    int plain = n - (noreply ? 1 : 0);
    if (n < 2 || n > 4) {
      r.setRejected(Status.REJECT, ERROR); // memcached takes 2 to 4 tokens
      return;
    }
    if (plain > 3 || (plain == 3 && !isZero(r, 2))) {
      r.setRejected(Status.REJECT, DELETE_USAGE);
      return;
    }
    checkKey(r, 1);
  }

  // incr <key> <delta> [noreply]  |  touch <key> <exptime> [noreply]
  private static void validateKeyedWithArgument(Request r, Command command) {
    int n = r.tokenCount();
    boolean noreply = n == 4 && isNoreply(r, 3);
    r.setParsed(Status.FORWARD, command, 1, 1, noreply);
    if (n != 3 && n != 4) {
      r.setRejected(Status.REJECT, ERROR);
      return;
    }
    if (!checkKey(r, 1)) {
      return;
    }
    if (command == Command.TOUCH) {
      if (!isInt32(r, 2)) {
        reject(r, "invalid exptime argument", 2, "an integer");
        return;
      }
    } else if (!isUint64(r, 2)) {
      r.setRejected(Status.REJECT, BAD_DELTA);
    }
    // A last token other than "noreply" is ignored, as memcached does.
  }

  // flush_all [delay] [noreply]: as memcached 1.6, 1 to 3 tokens, any 32-bit delay (a negative one
  // flushes now) and a third token other than noreply ignored.
  private static void validateFlushAll(Request r, boolean adminCommands) {
    int n = r.tokenCount();
    boolean noreply = n >= 2 && isNoreply(r, n - 1);
    r.setParsed(Status.FORWARD, Command.FLUSH_ALL, 1, 0, noreply);
    int plain = n - (noreply ? 1 : 0);
    if (n > 3) {
      r.setRejected(Status.REJECT, ERROR);
    } else if (!adminCommands) {
      r.setRejected(Status.REJECT, FLUSH_ALL_REFUSED);
    } else if (plain >= 2 && !isInt32(r, 1)) {
      reject(r, "invalid exptime argument", 1, "a delay in seconds, an integer");
    }
  }

  // verbosity <level> [noreply]
  private static void validateVerbosity(Request r, boolean adminCommands) {
    int n = r.tokenCount();
    boolean noreply = n >= 2 && isNoreply(r, n - 1);
    r.setParsed(Status.FORWARD, Command.VERBOSITY, 1, 0, noreply);
    if (n != 2 && n != 3) {
      r.setRejected(Status.REJECT, ERROR);
    } else if (!adminCommands) {
      r.setRejected(Status.REJECT, VERBOSITY_REFUSED);
    } else if (n == 2 && noreply) {
      r.setRejected(Status.LOCAL, NO_REPLY); // memcached: no level, no reply
    } else if (parseUnsigned(r, 1, UINT32_MAX) < 0) {
      reject(r, "bad verbosity level", 1, "0..4294967295");
    }
    // As memcached, a third token other than "noreply" is ignored.
  }

  // stats: the middleware's own; stats <group>: server 0's, for the groups below.
  private static void validateStats(Request r) {
    r.setParsed(Status.LOCAL, Command.STATS, 1, 0, false);
    if (r.tokenCount() == 1) {
      return;
    }
    if (r.tokenCount() == 2) {
      String group =
          new String(
              r.bytes(),
              r.tokenStart(1),
              r.tokenEnd(1) - r.tokenStart(1),
              java.nio.charset.StandardCharsets.ISO_8859_1);
      if (FORWARDED_STATS_GROUPS.contains(group)) {
        r.setParsed(Status.FORWARD, Command.STATS_GROUP, 1, 0, false);
        return;
      }
      if (!UNSUPPORTED_STATS_GROUPS.contains(group)) {
        r.setRejected(Status.REJECT, ERROR); // an unknown group: memcached's reply
        return;
      }
    }
    reject(r, "unsupported stats group", 1, "none, " + String.join(", ", FORWARDED_STATS_GROUPS));
  }

  private static boolean checkKey(Request r, int token) {
    int length = r.tokenEnd(token) - r.tokenStart(token);
    if (length > RequestParser.MAX_KEY_BYTES) {
      r.setRejected(
          Status.REJECT,
          reply(
              "CLIENT_ERROR key too long: "
                  + length
                  + " bytes (expected: <= "
                  + RequestParser.MAX_KEY_BYTES
                  + ")"));
      return false;
    }
    return true;
  }

  private static void reject(Request r, String what, int token, String expected) {
    r.setRejected(
        Status.REJECT,
        reply("CLIENT_ERROR " + what + ": " + quote(r, token) + " (expected: " + expected + ")"));
  }

  /** Data block length of a validated storage command. */
  static int dataBytes(Request r) {
    return (int) parseUnsigned(r, r.command().dataLengthToken(), Integer.MAX_VALUE);
  }

  /** Bytes to skip after a rejected storage line ({@code <bytes>\r\n}), or 0. */
  static long dataBytesToSkip(Request r) {
    int token = r.command().dataLengthToken();
    if (!r.command().hasDataBlock() || r.tokenCount() <= token) {
      return 0;
    }
    long bytes = parseUnsigned(r, token, Integer.MAX_VALUE);
    return bytes < 0 ? 0 : bytes + 2;
  }

  // mg|md|ma|me <key> <flag>*  |  ms <key> <datalen> <flag>*: the flags are read as memcached reads
  // them (see checkMetaFlags); the q flag is taken out of the forwarded line (see Request).
  private static void validateMeta(Request r, Command command, int minTokens, int maxValueBytes) {
    int n = r.tokenCount();
    r.setParsed(Status.FORWARD, command, 1, 1, false);
    if (n < minTokens) {
      // memcached: a bare mg/ms/md/ma is an unknown command, a bare me a format error
      r.setRejected(Status.REJECT, n == 1 && command != Command.ME ? ERROR : META_FORMAT);
      return;
    }
    if (command == Command.MS && !checkDataLength(r, 2, maxValueBytes)) {
      return;
    }
    if (!checkKey(r, 1)) {
      return;
    }
    if (command == Command.ME) {
      // me takes no flags (memcached answers EN or ME whatever follows the key), but a third token
      // that is exactly "b" says the key is base64
      if (n > 2 && r.tokenEnd(2) - r.tokenStart(2) == 1 && r.bytes()[r.tokenStart(2)] == 'b') {
        r.setBase64Key();
      }
      return;
    }
    checkMetaFlags(r, command, minTokens);
  }

  /**
   * Reads the flags of {@code mg ms md ma} as memcached 1.6 does ({@code proto_text.c}, {@code
   * _meta_flag_preparse}): each token after the key (after the data length of {@code ms}) is one
   * flag, named by its first byte; the rest of the token is the flag's argument ({@code O<opaque>},
   * {@code T<ttl>}), so {@code q}, {@code qx}, {@code q1} and {@code qq} are all the quiet flag.
   * The quiet flag is taken out of the forwarded line (the middleware always waits for a reply),
   * which is only safe if the server sees no second one: what memcached refuses before it looks at
   * any item (more than 19 tokens, a flag given twice, a first byte over 126, a flag it does not
   * know) is refused here with memcached's reply and never forwarded. A refused {@code ms} has its
   * data block skipped.
   */
  private static void checkMetaFlags(Request r, Command command, int firstFlag) {
    int n = r.tokenCount();
    boolean mg = command == Command.MG;
    boolean wholeError = command == Command.MD || command == Command.MA;
    if (n > MAX_META_TOKENS) {
      r.setRejected(Status.REJECT, mg ? META_FLAGS_ARE_TOO_LONG : META_FLAGS_TOO_LONG);
      return;
    }
    long seenLow = 0; // flags 0..63 seen
    long seenHigh = 0; // flags 64..126 seen
    int quietToken = -1;
    byte[] b = r.bytes();
    for (int t = firstFlag; t < n; t++) {
      int flag = b[r.tokenStart(t)] & 0xff;
      long bit = 1L << (flag & 63);
      boolean seen = flag >= 127 || ((flag < 64 ? seenLow : seenHigh) & bit) != 0;
      if (seen) {
        r.setRejected(Status.REJECT, wholeError ? META_BAD_FLAG : META_DUPLICATE_FLAG);
        return;
      }
      if (flag < 64) {
        seenLow |= bit;
      } else {
        seenHigh |= bit;
      }
      if (!KNOWN_META_FLAGS[flag]) {
        r.setRejected(Status.REJECT, wholeError ? META_BAD_FLAG : META_INVALID_FLAG);
        return;
      }
      if (flag == 'q') {
        quietToken = t;
      } else if (flag == 'b') {
        r.setBase64Key(); // the server looks up the decoded key
      } else if (flag == 'C' && !mg) {
        r.setMetaCompareAndSwap();
      } else if (flag == 'N' || flag == 'T' || flag == 'R' || flag == 'E') {
        r.setMetaSideEffects(); // creates the item, or changes its ttl or cas
      }
    }
    if (quietToken >= 0) {
      r.setMetaQuiet(r.tokenEnd(quietToken - 1), r.tokenEnd(quietToken));
    }
  }

  /**
   * Checks the data block length in {@code token}: a malformed one rejects the request and closes
   * the connection (memcached cannot find the end of the data), a too large one rejects it.
   */
  private static boolean checkDataLength(Request r, int token, int maxValueBytes) {
    long bytes = parseUnsigned(r, token, Integer.MAX_VALUE);
    if (bytes < 0) {
      r.setRejected(
          Status.REJECT_AND_CLOSE,
          reply(
              "CLIENT_ERROR bad data block length: "
                  + quote(r, token)
                  + " (expected: 0.."
                  + maxValueBytes
                  + ")"));
      return false;
    }
    if (bytes > maxValueBytes) {
      r.setRejected(Status.REJECT, TOO_LARGE);
      return false;
    }
    return true;
  }

  private static boolean isNoreply(Request r, int token) {
    int s = r.tokenStart(token);
    int e = r.tokenEnd(token);
    if (e - s != NOREPLY.length) {
      return false;
    }
    for (int i = 0; i < NOREPLY.length; i++) {
      if (r.bytes()[s + i] != NOREPLY[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean isZero(Request r, int token) {
    return parseUnsigned(r, token, 0) == 0;
  }

  /** Decimal digits only, value <= max; -1 if not. No allocation. */
  static long parseUnsigned(Request r, int token, long max) {
    int s = r.tokenStart(token);
    int e = r.tokenEnd(token);
    if (e == s || e - s > 19) {
      return -1;
    }
    long value = 0;
    byte[] b = r.bytes();
    for (int i = s; i < e; i++) {
      int digit = b[i] - '0';
      if (digit < 0 || digit > 9) {
        return -1;
      }
      value = value * 10 + digit;
    }
    return value <= max ? value : -1;
  }

  private static boolean isInt32(Request r, int token) {
    int s = r.tokenStart(token);
    int e = r.tokenEnd(token);
    byte[] b = r.bytes();
    boolean negative = e > s && b[s] == '-';
    int digitsStart = negative ? s + 1 : s;
    if (e == digitsStart || e - digitsStart > 10) {
      return false;
    }
    long value = 0;
    for (int i = digitsStart; i < e; i++) {
      int digit = b[i] - '0';
      if (digit < 0 || digit > 9) {
        return false;
      }
      value = value * 10 + digit;
    }
    return negative ? -value >= Integer.MIN_VALUE : value <= Integer.MAX_VALUE;
  }

  private static boolean isUint64(Request r, int token) {
    int s = r.tokenStart(token);
    int e = r.tokenEnd(token);
    if (e == s || e - s > 20) {
      return false;
    }
    long value = 0;
    byte[] b = r.bytes();
    for (int i = s; i < e; i++) {
      int digit = b[i] - '0';
      if (digit < 0 || digit > 9) {
        return false;
      }
      long next = value * 10 + digit;
      // Unsigned overflow: the new value must not wrap below the old one times ten.
      if (Long.compareUnsigned(value, 0x1999_9999_9999_9999L) > 0
          || Long.compareUnsigned(next, value * 10) < 0) {
        return false;
      }
      value = next;
    }
    return true;
  }

  /** The token as printable text, at most 32 characters, for error messages. */
  static String quote(Request r, int token) {
    int s = r.tokenStart(token);
    int e = Math.min(r.tokenEnd(token), s + 32);
    StringBuilder text = new StringBuilder(e - s + 3);
    for (int i = s; i < e; i++) {
      int c = r.bytes()[i] & 0xff;
      text.append(c >= 0x21 && c < 0x7f ? (char) c : '?');
    }
    if (r.tokenEnd(token) > e) {
      text.append("...");
    }
    return text.toString();
  }
}
