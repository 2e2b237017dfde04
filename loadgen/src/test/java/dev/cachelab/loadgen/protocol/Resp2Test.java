package dev.cachelab.loadgen.protocol;

import static dev.cachelab.loadgen.protocol.ParserHarness.assertParsesInAnySplit;
import static dev.cachelab.loadgen.protocol.ParserHarness.encode;
import static dev.cachelab.loadgen.protocol.ParserHarness.feed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cachelab.loadgen.protocol.ParserHarness.Reply;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class Resp2Test {
  private static final byte[] PREFIX = "k".getBytes(StandardCharsets.US_ASCII);
  private final Resp2 protocol = new Resp2();

  @Test
  void encodesSetWithAndWithoutExpiry() {
    byte[] value = "hello".getBytes(StandardCharsets.US_ASCII);
    assertThat(encode(out -> protocol.encodeSet(out, PREFIX, 12, value, 0, 5, 0)))
        .isEqualTo("*3\r\n$3\r\nSET\r\n$3\r\nk12\r\n$5\r\nhello\r\n");
    assertThat(encode(out -> protocol.encodeSet(out, PREFIX, 3, value, 1, 2, 3600)))
        .isEqualTo("*5\r\n$3\r\nSET\r\n$2\r\nk3\r\n$2\r\nel\r\n$2\r\nEX\r\n$4\r\n3600\r\n");
  }

  @Test
  void encodesGetAndMget() {
    assertThat(encode(out -> protocol.encodeGet(out, PREFIX, new long[] {5}, 1)))
        .isEqualTo("*2\r\n$3\r\nGET\r\n$2\r\nk5\r\n");
    assertThat(encode(out -> protocol.encodeGet(out, PREFIX, new long[] {1, 10}, 2)))
        .isEqualTo("*3\r\n$4\r\nMGET\r\n$2\r\nk1\r\n$3\r\nk10\r\n");
  }

  @Test
  void parsesRepliesInAnySplit() throws ProtocolException {
    String wire =
        "+OK\r\n"
            + "$3\r\nabc\r\n"
            + "$-1\r\n"
            + "*3\r\n$1\r\nx\r\n$-1\r\n$0\r\n\r\n"
            + "-ERR wrong number of arguments\r\n"
            + "+OK\r\n";
    int[] expected = {0, 1, 1, 3, 1, 0};
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
  void rejectsMalformedReplies() {
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {1}, "+OK\r\n", 64))
        .isInstanceOf(ProtocolException.class)
        .hasMessage("unexpected reply to GET: '+OK\\r\\n'");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {0}, ":1\r\n", 64))
        .hasMessage("unexpected reply to SET: ':1\\r\\n'");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {2}, "*3\r\n", 64))
        .hasMessage("MGET of 2 keys answered with 3 elements: '*3\\r\\n'");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {1}, "$x1\r\n", 64))
        .hasMessage("malformed RESP length: '$x1\\r\\n'");
    assertThatThrownBy(() -> feed(protocol.newParser(), new int[] {1}, "$1\r\naXY", 64))
        .hasMessage("bulk string not terminated by \\r\\n: 'XY'");
  }
}
