package dev.cachelab.middleware.protocol;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Feeds a parser chunks the way a connection does, and records what it decoded. */
final class ParserHarness {
  private final RequestDecoder parser;
  private byte[] buffer = new byte[64];
  private int start;
  private int end;
  private boolean closed;
  private Request request = new Request();
  final List<String> decoded = new ArrayList<>();

  ParserHarness(int maxValueBytes) {
    this(new RequestParser(maxValueBytes));
  }

  ParserHarness(RequestDecoder decoder) {
    parser = decoder;
  }

  void feed(byte[] chunk) {
    if (closed) {
      return;
    }
    if (buffer.length - end < chunk.length) {
      System.arraycopy(buffer, start, buffer, 0, end - start);
      end -= start;
      start = 0;
      if (buffer.length - end < chunk.length) {
        buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, end + chunk.length));
      }
    }
    System.arraycopy(chunk, 0, buffer, end, chunk.length);
    end += chunk.length;
    while (start < end && !closed) {
      int consumed = parser.decode(buffer, start, end, request);
      if (consumed == 0) {
        break;
      }
      start += consumed;
      if (request.status() != null) {
        decoded.add(describe(request));
        closed = request.status() == Request.Status.REJECT_AND_CLOSE;
        request = new Request();
      }
    }
  }

  boolean closed() {
    return closed;
  }

  int buffered() {
    return end - start;
  }

  static String describe(Request r) {
    StringBuilder s = new StringBuilder(r.status().name());
    if (r.immediateReply() != null) {
      s.append(' ').append(new String(r.immediateReply(), StandardCharsets.ISO_8859_1).strip());
      return s.toString();
    }
    if (r.respCommand() != null) {
      return describeResp(r, s);
    }
    s.append(' ').append(r.command());
    for (int k = 0; k < r.keyCount(); k++) {
      s.append(" key=")
          .append(
              new String(
                  r.bytes(),
                  r.keyStart(k),
                  r.keyEnd(k) - r.keyStart(k),
                  StandardCharsets.ISO_8859_1));
    }
    if (r.noreply()) {
      s.append(" noreply");
    }
    if (r.metaQuiet()) {
      s.append(" quiet");
    }
    s.append(" fwd=")
        .append(new String(r.bytes(), 0, r.forwardSkipStart(), StandardCharsets.ISO_8859_1))
        .append(
            new String(
                r.bytes(),
                r.forwardSkipEnd(),
                r.lineLength() - r.forwardSkipEnd(),
                StandardCharsets.ISO_8859_1));
    if (r.dataLength() > 0 || r.command() != null && r.command().hasDataBlock()) {
      s.append(" data=")
          .append(
              new String(r.bytes(), r.dataOffset(), r.dataLength(), StandardCharsets.ISO_8859_1));
    }
    return s.toString();
  }

  private static String describeResp(Request r, StringBuilder s) {
    s.append(' ').append(r.respCommand());
    for (int k = 0; k < r.keyCount(); k++) {
      s.append(" key=").append(text(r, r.keyStart(k), r.keyEnd(k)));
    }
    s.append(" args=");
    for (int t = 0; t < r.tokenCount(); t++) {
      s.append(t == 0 ? "" : ",").append(text(r, r.tokenStart(t), r.tokenEnd(t)));
    }
    return s.toString();
  }

  private static String text(Request r, int from, int to) {
    return new String(r.bytes(), from, to - from, StandardCharsets.ISO_8859_1);
  }
}
