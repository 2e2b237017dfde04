package dev.cachelab.middleware.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every reply reader, fed pipelined replies split at every byte (two reads, the first ending at
 * each offset) and one byte a read: what it reads is the same as from one read of the whole.
 */
class ReplyReaderTest {

  /** One reply kind: which reader reads it. */
  private enum Kind {
    LINE,
    RETRIEVAL,
    META,
    STATS,
    RESP
  }

  private record Reply(Kind kind, String wire) {}

  private static final List<Reply> MEMCACHED =
      List.of(
          new Reply(Kind.LINE, "STORED\r\n"),
          new Reply(Kind.RETRIEVAL, "VALUE a 0 3\r\nabc\r\nVALUE bb 1 2 77\r\nx\n\r\nEND\r\n"),
          new Reply(Kind.RETRIEVAL, "END\r\n"),
          new Reply(Kind.LINE, "SERVER_ERROR out of memory storing object\r\n"),
          new Reply(Kind.META, "VA 3 f1 t-1\r\nEND\r\n"),
          new Reply(Kind.META, "HD\r\n"),
          new Reply(Kind.META, "EN\r\n"),
          new Reply(Kind.STATS, "STAT items:1:number 5\r\nSTAT items:1:age 9\r\nEND\r\n"),
          new Reply(Kind.RETRIEVAL, "CLIENT_ERROR bad command line format\r\n"),
          new Reply(Kind.LINE, "42\r\n"));

  private static final List<Reply> REDIS =
      List.of(
          new Reply(Kind.RESP, "+OK\r\n"),
          new Reply(Kind.RESP, "$5\r\nhel\r\n\r\n"),
          new Reply(Kind.RESP, "$-1\r\n"),
          new Reply(Kind.RESP, "*4\r\n$1\r\na\r\n$-1\r\n*2\r\n:1\r\n+x\r\n$0\r\n\r\n"),
          new Reply(Kind.RESP, "-ERR wrong number of arguments\r\n"),
          new Reply(Kind.RESP, ":-42\r\n"),
          new Reply(Kind.RESP, "*0\r\n"));

  @Test
  void memcachedRepliesSplitAtEveryByteReadAsWhole() throws IOException {
    assertSameForEverySplit(MEMCACHED);
  }

  @Test
  void respRepliesSplitAtEveryByteReadAsWhole() throws IOException {
    assertSameForEverySplit(REDIS);
  }

  @Test
  void whatARetrievalReplyIndexes() throws IOException {
    ReplyReader reader = new ReplyReader();
    reader.reset(stream(wireOf(MEMCACHED.subList(1, 2)), 1_000));
    reader.readRetrievalReply();
    assertThat(reader.valueCount()).isEqualTo(2);
    assertThat(block(reader, 1)).isEqualTo("VALUE bb 1 2 77\r\nx\n\r\n");
    assertThat(reader.blockKeyEquals(1, "bb".getBytes(StandardCharsets.US_ASCII), 0, 2)).isTrue();
    assertThat(reader.replyIsError()).isFalse();
  }

  @Test
  void whatARespArrayIndexes() throws IOException {
    ReplyReader reader = new ReplyReader();
    reader.reset(stream(wireOf(REDIS.subList(3, 4)), 1_000));
    reader.readRespReply();
    assertThat(reader.valueCount()).isEqualTo(4);
    assertThat(reader.hitCount()).as("non-nil bulk strings").isEqualTo(2);
    assertThat(block(reader, 2)).isEqualTo("*2\r\n:1\r\n+x\r\n");
  }

  @Test
  void aServerThatClosesMidReplyFailsTheRead() {
    ReplyReader reader = new ReplyReader();
    reader.reset(stream("VALUE a 0 3\r\nab".getBytes(StandardCharsets.US_ASCII), 1));
    assertThatThrownBy(reader::readRetrievalReply).isInstanceOf(EOFException.class);
  }

  @Test
  void aBadLengthFromTheServerFailsTheRead() {
    ReplyReader reader = new ReplyReader();
    reader.reset(stream("VALUE a 0 x\r\n".getBytes(StandardCharsets.US_ASCII), 1_000));
    assertThatThrownBy(reader::readRetrievalReply).hasMessageContaining("bad value length");
  }

  private static void assertSameForEverySplit(List<Reply> replies) throws IOException {
    byte[] wire = wireOf(replies);
    List<String> whole = readAll(replies, stream(wire, wire.length));
    assertThat(whole).hasSize(replies.size());
    for (int split = 1; split < wire.length; split++) {
      assertThat(readAll(replies, twoReads(wire, split))).as("split at %d", split).isEqualTo(whole);
    }
    assertThat(readAll(replies, stream(wire, 1))).as("one byte a read").isEqualTo(whole);
  }

  private static List<String> readAll(List<Reply> replies, InputStream in) throws IOException {
    ReplyReader reader = new ReplyReader();
    reader.reset(in);
    List<String> read = new ArrayList<>();
    for (Reply reply : replies) {
      switch (reply.kind()) {
        case LINE -> reader.readLineReply();
        case RETRIEVAL -> reader.readRetrievalReply();
        case META -> reader.readMetaReply();
        case STATS -> reader.readStatsReply();
        case RESP -> reader.readRespReply();
      }
      read.add(describe(reader, reply.kind() == Kind.RETRIEVAL || reply.kind() == Kind.RESP));
    }
    assertThat(reader.hasUnreadBytes()).isFalse();
    return read;
  }

  /** The reply, what it was read as and, if {@code indexed}, its value blocks. */
  private static String describe(ReplyReader reader, boolean indexed) {
    StringBuilder text =
        new StringBuilder(
            new String(reader.buffer(), 0, reader.replyLength(), StandardCharsets.ISO_8859_1));
    text.append(" error=").append(reader.replyIsError());
    text.append(" values=").append(reader.valueCount());
    text.append(" hits=").append(reader.hitCount());
    for (int i = 0; indexed && i < reader.valueCount(); i++) {
      text.append(" [").append(block(reader, i)).append(']');
    }
    return text.toString();
  }

  private static String block(ReplyReader reader, int i) {
    return new String(
        reader.buffer(),
        reader.blockStart(i),
        reader.blockEnd(i) - reader.blockStart(i),
        StandardCharsets.ISO_8859_1);
  }

  private static byte[] wireOf(List<Reply> replies) {
    StringBuilder all = new StringBuilder();
    replies.forEach(r -> all.append(r.wire()));
    return all.toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  /** A stream that returns at most {@code chunk} bytes a read. */
  private static InputStream stream(byte[] bytes, int chunk) {
    return new ByteArrayInputStream(bytes) {
      @Override
      public synchronized int read(byte[] b, int off, int len) {
        return super.read(b, off, Math.min(len, chunk));
      }
    };
  }

  /** A stream whose first read ends at {@code split}, the second returns the rest. */
  private static InputStream twoReads(byte[] bytes, int split) {
    return new ByteArrayInputStream(bytes) {
      private boolean first = true;

      @Override
      public synchronized int read(byte[] b, int off, int len) {
        int n = super.read(b, off, first ? Math.min(len, split) : len);
        first = false;
        return n;
      }
    };
  }
}
