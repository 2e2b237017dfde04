package dev.cachelab.loadgen.protocol;

import static dev.cachelab.loadgen.protocol.ParserHarness.assertParsesInAnySplit;
import static dev.cachelab.loadgen.protocol.ParserHarness.encode;
import static dev.cachelab.loadgen.protocol.ParserHarness.feed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cachelab.loadgen.protocol.ParserHarness.Reply;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MemcacheTextTest {
  private static final byte[] PREFIX = "memtier-".getBytes(StandardCharsets.US_ASCII);
  private final MemcacheText protocol = new MemcacheText();

  @Test
  void encodesSetAsMemtierDoes() {
    byte[] value = "abcdef".getBytes(StandardCharsets.US_ASCII);
    assertThat(encode(out -> protocol.encodeSet(out, PREFIX, 42, value, 1, 3, 0)))
        .isEqualTo("set memtier-42 0 0 3\r\nbcd\r\n");
    assertThat(encode(out -> protocol.encodeSet(out, PREFIX, 7, value, 0, 1, 100)))
        .isEqualTo("set memtier-7 0 100 1\r\na\r\n");
  }

  @Test
  void encodesSingleAndMultiGet() {
    assertThat(encode(out -> protocol.encodeGet(out, PREFIX, new long[] {0}, 1)))
        .isEqualTo("get memtier-0\r\n");
    assertThat(encode(out -> protocol.encodeGet(out, PREFIX, new long[] {1, 22, 333, 9}, 3)))
        .isEqualTo("get memtier-1 memtier-22 memtier-333\r\n");
  }

  @Test
  void parsesRepliesInAnySplit() throws ProtocolException {
    String wire =
        "STORED\r\n"
            + "VALUE memtier-1 0 3\r\nabc\r\nEND\r\n"
            + "END\r\n"
            + "VALUE memtier-1 0 2\r\nxy\r\nVALUE memtier-3 5 4 99\r\n\r\n\r\n\r\nEND\r\n"
            + "SERVER_ERROR out of memory storing object\r\n"
            + "NOT_STORED\r\n";
    int[] expected = {0, 1, 1, 3, 0, 0};
    assertParsesInAnySplit(
        protocol,
        expected,
        wire,
        new Reply(0, false),
        new Reply(1, false),
        new Reply(0, false),
        new Reply(2, false),
        new Reply(0, true),
        new Reply(0, false));
  }

  @Test
  void valueLargerThanTheBufferIsStreamed() throws ProtocolException {
    String data = "z".repeat(5000);
    String wire = "VALUE memtier-9 0 5000\r\n" + data + "\r\nEND\r\n";
    assertThat(feed(protocol.newParser(), new int[] {1}, wire, 100))
        .containsExactly(new Reply(1, false));
  }

  @Test
  void rejectsMalformedReplies() {
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {1}, "HIPPO\r\n", 64))
        .isInstanceOf(ProtocolException.class)
        .hasMessage("unexpected reply to a get: 'HIPPO\\r\\n'");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {0}, "END\r\n", 64))
        .hasMessage("unexpected reply to a set: 'END\\r\\n'");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {1}, "VALUE k 0 1a3\r\n", 64))
        .hasMessageStartingWith("malformed VALUE line");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {1}, "VALUE k 0 2\r\nabXY", 64))
        .hasMessage("data block not terminated by \\r\\n: 'XY'");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {1}, "STORED\n", 64))
        .hasMessage("reply line not terminated by \\r\\n: 'STORED\\n'");
    assertThatThrownBy(
            () ->
                feed(
                    protocol.newParser(),
                    new int[] {1},
                    "VALUE a 0 1\r\nx\r\nVALUE b 0 1\r\ny\r\nEND\r\n",
                    64))
        .hasMessageStartingWith("more VALUE lines than the 1 keys requested");
  }
}
