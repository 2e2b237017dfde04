package dev.cachelab.middleware.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.cachelab.middleware.backend.ReplyFramer.Kind;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Every reply kind framed whole, at every split (each prefix is incomplete), in a direct and a heap
 * buffer, with the next reply's bytes behind it (never taken), and with the hits and error that
 * {@link ReplyReader} reports for the same bytes.
 */
class ReplyFramerTest {
  private static final String NEXT = "STORED\r\n";

  /** A reply of a kind, with the hits and error it counts as. */
  private record Case(Kind kind, String reply, int hits, boolean error) {}

  private static final Case[] CASES = {
    new Case(Kind.LINE, "STORED\r\n", 0, false),
    new Case(Kind.LINE, "42\r\n", 0, false),
    new Case(Kind.LINE, "SERVER_ERROR out of memory storing object\r\n", 0, true),
    new Case(Kind.LINE, "CLIENT_ERROR bad data chunk\r\n", 0, true),
    new Case(Kind.LINE, "ERROR\r\n", 0, true),
    new Case(Kind.RETRIEVAL, "END\r\n", 0, false),
    new Case(Kind.RETRIEVAL, "VALUE k 0 5\r\nhello\r\nEND\r\n", 1, false),
    new Case(Kind.RETRIEVAL, "VALUE k 7 5 99\r\nhe\r\nl\r\nEND\r\n", 1, false),
    new Case(Kind.RETRIEVAL, "VALUE a 0 1\r\nx\r\nVALUE bb 1 3\r\nEND\r\nEND\r\n", 2, false),
    new Case(Kind.RETRIEVAL, "VALUE big 0 20000\r\n" + "v".repeat(20000) + "\r\nEND\r\n", 1, false),
    new Case(Kind.RETRIEVAL, "SERVER_ERROR object too large for cache\r\n", 0, true),
    new Case(Kind.STATS, "STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n", 0, false),
    new Case(Kind.STATS, "END\r\n", 0, false),
    new Case(Kind.STATS, "ERROR\r\n", 0, true),
    new Case(Kind.META, "VA 5 f0 s5\r\nhello\r\n", 1, false),
    new Case(Kind.META, "VA 2\r\n\r\n\r\n", 1, false),
    new Case(Kind.META, "HD c3\r\n", 1, false),
    new Case(Kind.META, "EN\r\n", 0, false),
    new Case(Kind.META, "NS\r\n", 0, false),
    new Case(Kind.META, "MN\r\n", 0, false),
    new Case(Kind.META, "CLIENT_ERROR bad command line format\r\n", 0, true),
    new Case(Kind.RESP, "+OK\r\n", 0, false),
    new Case(Kind.RESP, "-ERR wrong type\r\n", 0, true),
    new Case(Kind.RESP, ":42\r\n", 0, false),
    new Case(Kind.RESP, "$5\r\nhello\r\n", 1, false),
    new Case(Kind.RESP, "$0\r\n\r\n", 1, false),
    new Case(Kind.RESP, "$-1\r\n", 0, false),
    new Case(Kind.RESP, "*3\r\n$1\r\na\r\n$-1\r\n$2\r\n\r\n\r\n", 2, false),
    new Case(Kind.RESP, "*2\r\n*2\r\n:1\r\n+x\r\n$3\r\nabc\r\n", 1, false),
    new Case(Kind.RESP, "*0\r\n", 0, false),
    new Case(Kind.RESP, "*-1\r\n", 0, false),
    new Case(Kind.RESP, "$4\r\n\r\n\r\n\r\n", 1, false)
  };

  @Test
  void everyReplyKindIsFramedAtEverySplit() throws IOException {
    for (Case c : CASES) {
      check(c.kind(), c.reply(), c.hits(), c.error());
    }
  }

  @Test
  void malformedRepliesThrow() {
    ReplyFramer framer = new ReplyFramer();
    assertThrows(IOException.class, () -> frame(framer, Kind.RESP, "?what\r\n"));
    assertThrows(IOException.class, () -> frame(framer, Kind.RESP, "$x\r\n"));
    assertThrows(IOException.class, () -> frame(framer, Kind.RETRIEVAL, "VALUE k\r\n"));
    assertThrows(IOException.class, () -> frame(framer, Kind.RETRIEVAL, "VALUE k 0 -1\r\n"));
    assertThrows(IOException.class, () -> frame(framer, Kind.META, "VA 99999999999\r\n"));
  }

  private static int frame(ReplyFramer framer, Kind kind, String reply) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(reply.getBytes(StandardCharsets.ISO_8859_1));
    return framer.frame(buf, 0, buf.capacity(), kind);
  }

  private static void check(Kind kind, String reply, int hits, boolean error) throws IOException {
    byte[] bytes = (reply + NEXT).getBytes(StandardCharsets.ISO_8859_1);
    int length = reply.length();
    for (boolean direct : new boolean[] {true, false}) {
      // At an offset, as a reply after others in a connection's buffer.
      int offset = 3;
      ByteBuffer buf =
          direct
              ? ByteBuffer.allocateDirect(offset + bytes.length)
              : ByteBuffer.allocate(offset + bytes.length);
      buf.position(offset);
      buf.put(bytes);
      ReplyFramer framer = new ReplyFramer();
      for (int split = 0; split < length; split++) {
        assertEquals(
            ReplyFramer.INCOMPLETE,
            framer.frame(buf, offset, offset + split, kind),
            kind + " " + reply.substring(0, Math.min(40, reply.length())) + " cut at " + split);
      }
      assertEquals(offset + length, framer.frame(buf, offset, offset + length, kind), "whole");
      assertEquals(
          offset + length, framer.frame(buf, offset, offset + bytes.length, kind), "with the next");
      assertEquals(hits, framer.hits(), "hits");
      assertEquals(error, framer.error(), "error");
    }
    assertSameAsTheReader(kind, reply, hits, error);
  }

  /** The blocking reader reads the same length and reports the same hits and error. */
  private static void assertSameAsTheReader(Kind kind, String reply, int hits, boolean error)
      throws IOException {
    ReplyReader reader = new ReplyReader();
    reader.reset(
        new java.io.ByteArrayInputStream((reply + NEXT).getBytes(StandardCharsets.ISO_8859_1)));
    int length =
        switch (kind) {
          case LINE -> reader.readLineReply();
          case RETRIEVAL -> reader.readRetrievalReply();
          case STATS -> reader.readStatsReply();
          case META -> reader.readMetaReply();
          case RESP -> reader.readRespReply();
        };
    assertEquals(reply.length(), length, "the reader's length");
    assertEquals(error, reader.replyIsError(), "the reader's error");
    int readerHits = kind == Kind.RESP ? reader.hitCount() : reader.valueCount();
    if (kind != Kind.STATS && kind != Kind.LINE) {
      assertEquals(hits, readerHits, "the reader's hits");
    }
  }
}
