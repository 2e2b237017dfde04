package dev.cachelab.loadgen.protocol;

import java.nio.ByteBuffer;

/**
 * memcached text protocol, as memtier's {@code memcache_text}: {@code set <key> 0 <exp>
 * <bytes>\r\n<data>\r\n}, and {@code get <k1> [<k2> ...]\r\n} answered by {@code VALUE <key>
 * <flags> <bytes>\r\n<data>\r\n} per hit and {@code END\r\n}.
 */
public final class MemcacheText implements WireProtocol {
  private static final byte[] SET = Ascii.bytes("set ");
  private static final byte[] GET = Ascii.bytes("get");
  private static final byte[] CRLF = Ascii.bytes("\r\n");

  @Override
  public int maxSetBytes(int prefixLength, int maxValueBytes) {
    return 4 + prefixLength + 20 + 3 + 11 + 1 + 11 + 2 + maxValueBytes + 2;
  }

  @Override
  public int maxGetBytes(int prefixLength, int keys) {
    return 3 + keys * (1 + prefixLength + 20) + 2;
  }

  @Override
  public void encodeSet(
      ByteBuffer out,
      byte[] prefix,
      long keyNumber,
      byte[] value,
      int offset,
      int length,
      int expirySeconds) {
    out.put(SET);
    Ascii.putKey(out, prefix, keyNumber);
    out.put((byte) ' ').put((byte) '0').put((byte) ' ');
    Ascii.putDecimal(out, expirySeconds);
    out.put((byte) ' ');
    Ascii.putDecimal(out, length);
    out.put(CRLF);
    out.put(value, offset, length);
    out.put(CRLF);
  }

  @Override
  public void encodeGet(ByteBuffer out, byte[] prefix, long[] keyNumbers, int count) {
    out.put(GET);
    for (int i = 0; i < count; i++) {
      out.put((byte) ' ');
      Ascii.putKey(out, prefix, keyNumbers[i]);
    }
    out.put(CRLF);
  }

  @Override
  public ReplyParser newParser() {
    return new Parser();
  }

  /** State machine over reply lines and data blocks. */
  static final class Parser extends LineReplyParser {
    private static final byte[] VALUE = Ascii.bytes("VALUE ");
    private static final byte[] END = Ascii.bytes("END\r");
    private static final byte[] STORED = Ascii.bytes("STORED\r");
    private static final byte[] NOT_STORED = Ascii.bytes("NOT_STORED\r");
    private static final byte[] EXISTS = Ascii.bytes("EXISTS\r");
    private static final byte[] NOT_FOUND = Ascii.bytes("NOT_FOUND\r");
    private static final byte[] ERROR = Ascii.bytes("ERROR");
    private static final byte[] CLIENT_ERROR = Ascii.bytes("CLIENT_ERROR");
    private static final byte[] SERVER_ERROR = Ascii.bytes("SERVER_ERROR");

    @Override
    protected void checkLine(ByteBuffer in, int start, int nl) throws ProtocolException {
      byte[] a = Ascii.array(in);
      if (nl == start || a[nl - 1] != '\r') {
        throw new ProtocolException(
            "reply line not terminated by \\r\\n: "
                + ProtocolException.quote(in, start, nl - start + 1));
      }
    }

    @Override
    protected boolean onPayloadEnd() {
      return false;
    }

    @Override
    protected String payloadName() {
      return "data block";
    }

    @Override
    protected boolean onLine(ByteBuffer in, int start, int nl) throws ProtocolException {
      byte[] a = Ascii.array(in);
      int end = nl + 1;
      if (Ascii.startsWith(a, start, end, SERVER_ERROR)
          || Ascii.startsWith(a, start, end, CLIENT_ERROR)
          || Ascii.startsWith(a, start, end, ERROR)) {
        error = true;
        return true;
      }
      if (expectedKeys > 0) {
        if (Ascii.startsWith(a, start, end, END) && nl - start == 4) {
          return true;
        }
        if (Ascii.startsWith(a, start, end, VALUE)) {
          if (++hits > expectedKeys) {
            throw new ProtocolException(
                "more VALUE lines than the "
                    + expectedKeys
                    + " keys requested: "
                    + ProtocolException.quote(in, start, end - start));
          }
          expectPayload(valueBytes(in, start, nl));
          return false;
        }
        throw new ProtocolException(
            "unexpected reply to a get: " + ProtocolException.quote(in, start, end - start));
      }
      if (isLine(in, start, nl, STORED)
          || isLine(in, start, nl, NOT_STORED)
          || isLine(in, start, nl, EXISTS)
          || isLine(in, start, nl, NOT_FOUND)) {
        return true;
      }
      throw new ProtocolException(
          "unexpected reply to a set: " + ProtocolException.quote(in, start, end - start));
    }

    private static boolean isLine(ByteBuffer in, int start, int nl, byte[] word) {
      byte[] a = Ascii.array(in);
      return nl - start == word.length && Ascii.startsWith(a, start, nl + 1, word);
    }

    // VALUE <key> <flags> <bytes>[ <cas unique>]\r\n
    private static long valueBytes(ByteBuffer in, int start, int nl) throws ProtocolException {
      byte[] a = Ascii.array(in);
      int cr = nl - 1;
      int field = 0;
      int i = start;
      while (i < cr && field < 3) {
        if (a[i] == ' ') {
          field++;
          while (i < cr && a[i] == ' ') {
            i++;
          }
        } else {
          i++;
        }
      }
      long value = 0;
      int digits = 0;
      while (i < cr && a[i] != ' ') {
        byte b = a[i++];
        if (b < '0' || b > '9' || digits > 10) {
          digits = -1;
          break;
        }
        value = value * 10 + (b - '0');
        digits++;
      }
      if (field < 3 || digits <= 0) {
        throw new ProtocolException(
            "malformed VALUE line (expected: VALUE <key> <flags> <bytes>): "
                + ProtocolException.quote(in, start, nl - start + 1));
      }
      return value;
    }
  }
}
