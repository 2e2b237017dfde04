package dev.cachelab.loadgen.protocol;

import java.nio.ByteBuffer;

/**
 * The part of a reply parser that text protocols share: reply lines ending in {@code \r\n}, each of
 * which may announce a payload of known length followed by {@code \r\n}, plus the hit and error
 * counts of the current reply. Used by one connection's thread only.
 */
abstract class LineReplyParser implements ReplyParser {
  private enum State {
    LINE,
    PAYLOAD,
    PAYLOAD_END
  }

  private State state = State.LINE;
  private long payloadRemaining;

  /** Keys of the GET being answered, 0 for a SET. */
  protected int expectedKeys;

  /** Values found so far in the current reply. */
  protected int hits;

  /** Whether the current reply holds an error. */
  protected boolean error;

  @Override
  public void expect(int getKeys) {
    expectedKeys = getKeys;
    hits = 0;
    error = false;
    state = State.LINE;
  }

  @Override
  public int hits() {
    return hits;
  }

  @Override
  public boolean errorReply() {
    return error;
  }

  @Override
  public boolean parse(ByteBuffer in) throws ProtocolException {
    byte[] a = Ascii.array(in);
    while (true) {
      switch (state) {
        case LINE -> {
          int start = in.position();
          int nl = Ascii.findLineEnd(a, start, in.limit());
          if (nl < 0) {
            return false;
          }
          checkLine(in, start, nl);
          in.position(nl + 1);
          if (onLine(in, start, nl)) {
            return true;
          }
        }
        case PAYLOAD -> {
          int n = (int) Math.min(in.remaining(), payloadRemaining);
          in.position(in.position() + n);
          payloadRemaining -= n;
          if (payloadRemaining > 0) {
            return false;
          }
          state = State.PAYLOAD_END;
        }
        case PAYLOAD_END -> {
          if (in.remaining() < 2) {
            return false;
          }
          int p = in.position();
          if (a[p] != '\r' || a[p + 1] != '\n') {
            throw new ProtocolException(
                payloadName() + " not terminated by \\r\\n: " + ProtocolException.quote(in, p, 2));
          }
          in.position(p + 2);
          state = State.LINE;
          if (onPayloadEnd()) {
            return true;
          }
        }
      }
    }
  }

  /** Reads a payload of {@code bytes} bytes and its {@code \r\n} after the current line. */
  protected final void expectPayload(long bytes) {
    payloadRemaining = bytes;
    state = State.PAYLOAD;
  }

  /** Throws when the line {@code [start, nl]} ({@code a[nl]} is {@code \n}) is malformed. */
  protected abstract void checkLine(ByteBuffer in, int start, int nl) throws ProtocolException;

  /** Handles one line {@code [start, nl]}; returns true when the reply is complete. */
  protected abstract boolean onLine(ByteBuffer in, int start, int nl) throws ProtocolException;

  /** Called after a payload's {@code \r\n}; returns true when the reply is complete. */
  protected abstract boolean onPayloadEnd();

  /** What a payload is called in error messages ("data block", "bulk string"). */
  protected abstract String payloadName();
}
