package dev.cachelab.loadgen.protocol;

import java.nio.ByteBuffer;

/**
 * Redis RESP2: {@code SET key value [EX secs]} answered by {@code +OK}, {@code GET key} by a bulk
 * string or {@code $-1}, and {@code MGET k1 .. kN} (multi-key gets) by an array of N bulk strings.
 */
public final class Resp2 implements WireProtocol {
  private static final byte[] SET = Ascii.bytes("$3\r\nSET\r\n");
  private static final byte[] GET = Ascii.bytes("*2\r\n$3\r\nGET\r\n");
  private static final byte[] MGET = Ascii.bytes("$4\r\nMGET\r\n");
  private static final byte[] EX = Ascii.bytes("$2\r\nEX\r\n");
  private static final byte[] CRLF = Ascii.bytes("\r\n");

  @Override
  public int maxSetBytes(int prefixLength, int maxValueBytes) {
    return 4
        + SET.length
        + (1 + 11 + 2 + prefixLength + 20 + 2)
        + (1 + 11 + 2 + maxValueBytes + 2)
        + EX.length
        + (1 + 11 + 2 + 11 + 2);
  }

  @Override
  public int maxGetBytes(int prefixLength, int keys) {
    return 1 + 11 + 2 + MGET.length + GET.length + keys * (1 + 11 + 2 + prefixLength + 20 + 2);
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
    out.put((byte) '*').put((byte) (expirySeconds > 0 ? '5' : '3')).put(CRLF);
    out.put(SET);
    putKey(out, prefix, keyNumber);
    out.put((byte) '$');
    Ascii.putDecimal(out, length);
    out.put(CRLF).put(value, offset, length).put(CRLF);
    if (expirySeconds > 0) {
      out.put(EX).put((byte) '$');
      Ascii.putDecimal(out, Ascii.digits(expirySeconds));
      out.put(CRLF);
      Ascii.putDecimal(out, expirySeconds);
      out.put(CRLF);
    }
  }

  @Override
  public void encodeGet(ByteBuffer out, byte[] prefix, long[] keyNumbers, int count) {
    if (count == 1) {
      out.put(GET);
      putKey(out, prefix, keyNumbers[0]);
      return;
    }
    out.put((byte) '*');
    Ascii.putDecimal(out, count + 1);
    out.put(CRLF).put(MGET);
    for (int i = 0; i < count; i++) {
      putKey(out, prefix, keyNumbers[i]);
    }
  }

  private static void putKey(ByteBuffer out, byte[] prefix, long keyNumber) {
    out.put((byte) '$');
    Ascii.putDecimal(out, prefix.length + Ascii.digits(keyNumber));
    out.put(CRLF);
    Ascii.putKey(out, prefix, keyNumber);
    out.put(CRLF);
  }

  @Override
  public ReplyParser newParser() {
    return new Parser();
  }

  /** State machine over RESP type lines and bulk payloads. */
  static final class Parser extends LineReplyParser {
    private boolean inArray;
    private int elementsLeft;

    @Override
    public void expect(int getKeys) {
      super.expect(getKeys);
      inArray = false;
    }

    @Override
    protected void checkLine(ByteBuffer in, int start, int nl) throws ProtocolException {
      byte[] a = Ascii.array(in);
      if (nl - start < 3 || a[nl - 1] != '\r') {
        throw new ProtocolException(
            "malformed RESP line: " + ProtocolException.quote(in, start, nl - start + 1));
      }
    }

    @Override
    protected boolean onPayloadEnd() {
      return elementDone();
    }

    @Override
    protected String payloadName() {
      return "bulk string";
    }

    /** Handles one type line; returns true when the whole reply is complete. */
    @Override
    protected boolean onLine(ByteBuffer in, int start, int nl) throws ProtocolException {
      byte[] a = Ascii.array(in);
      byte type = a[start];
      switch (type) {
        case '-' -> {
          error = true;
          return !inArray || elementDone();
        }
        case '+' -> {
          if (expectedKeys == 0 && !inArray) {
            return true;
          }
          throw unexpected(in, start, nl);
        }
        case '$' -> {
          if (expectedKeys == 0) {
            throw unexpected(in, start, nl);
          }
          if (expectedKeys > 1 && !inArray) {
            throw unexpected(in, start, nl);
          }
          long length = number(in, start, nl);
          if (length < 0) {
            return elementDone();
          }
          hits++;
          expectPayload(length);
          return false;
        }
        case '*' -> {
          if (expectedKeys <= 1 || inArray) {
            throw unexpected(in, start, nl);
          }
          long count = number(in, start, nl);
          if (count != expectedKeys) {
            throw new ProtocolException(
                "MGET of "
                    + expectedKeys
                    + " keys answered with "
                    + count
                    + " elements: "
                    + ProtocolException.quote(in, start, nl - start + 1));
          }
          inArray = true;
          elementsLeft = (int) count;
          return false;
        }
        default -> throw unexpected(in, start, nl);
      }
    }

    private boolean elementDone() {
      if (!inArray) {
        return true;
      }
      return --elementsLeft == 0;
    }

    private ProtocolException unexpected(ByteBuffer in, int start, int nl) {
      String request = expectedKeys == 0 ? "SET" : expectedKeys == 1 ? "GET" : "MGET";
      return new ProtocolException(
          "unexpected reply to "
              + request
              + ": "
              + ProtocolException.quote(in, start, nl - start + 1));
    }

    private static long number(ByteBuffer in, int start, int nl) throws ProtocolException {
      byte[] a = Ascii.array(in);
      int i = start + 1;
      int cr = nl - 1;
      boolean negative = i < cr && a[i] == '-';
      if (negative) {
        i++;
      }
      if (i >= cr || cr - i > 18) {
        throw new ProtocolException(
            "malformed RESP length: " + ProtocolException.quote(in, start, nl - start + 1));
      }
      long value = 0;
      for (; i < cr; i++) {
        byte b = a[i];
        if (b < '0' || b > '9') {
          throw new ProtocolException(
              "malformed RESP length: " + ProtocolException.quote(in, start, nl - start + 1));
        }
        value = value * 10 + (b - '0');
      }
      return negative ? -value : value;
    }
  }
}
