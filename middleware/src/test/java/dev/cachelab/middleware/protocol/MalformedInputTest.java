package dev.cachelab.middleware.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A table of malformed inputs with the reply each gets. Unless framing is lost ({@code close}), a
 * following {@code get ok} must still decode: the connection recovers.
 */
class MalformedInputTest {
  private static final String OK = "FORWARD GET key=ok fwd=get ok";
  private static final String USAGE =
      "REJECT CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]";
  private static final String LONG_KEY = "k".repeat(251);

  static Stream<Arguments> malformed() {
    return Stream.of(
        // unknown commands and wrong token counts: ERROR
        row("\r\n", "REJECT ERROR"),
        row("   \r\n", "REJECT ERROR"),
        row("bogus\r\n", "REJECT ERROR"),
        row("GET foo\r\n", "REJECT ERROR"),
        row("get\r\n", "REJECT ERROR"),
        row("gets\r\n", "REJECT ERROR"),
        row("gat\r\n", "REJECT ERROR"),
        row("gats\r\n", "REJECT ERROR"),
        row("set k 0 0\r\n", "REJECT ERROR"),
        row("set\r\n", "REJECT ERROR"),
        row("add k 0\r\n", "REJECT ERROR"),
        row("cas k 0 0 1\r\nx\r\n", "REJECT ERROR"),
        row("incr k\r\n", "REJECT ERROR"),
        row("decr\r\n", "REJECT ERROR"),
        row("touch k\r\n", "REJECT ERROR"),
        row("incr k 1 noreply extra\r\n", "REJECT ERROR"),
        row("delete\r\n", "REJECT ERROR"),
        row("verbosity\r\n", "REJECT ERROR"),
        row("verbosity 1 2 3\r\n", "REJECT ERROR"),
        row("\0\1\2\r\n", "REJECT ERROR"),
        // a NUL ends the line for memcached (a C string): the rest is neither parsed nor forwarded
        row("set k\0junk 0 0 1\r\nx\r\n", "REJECT ERROR", "REJECT ERROR"),
        row("get a\0 b\r\n", "FORWARD GET key=a fwd=get a"),
        row("set k 0 0 1\0 junk\r\nx\r\n", "FORWARD SET key=k fwd=set k 0 0 1 data=x"),
        row("mg k\0 v\r\n", "FORWARD MG key=k fwd=mg k"),
        // meta: a bare me is a format error, a bare mg an unknown command (as in memcached)
        row("me\r\n", "REJECT CLIENT_ERROR bad command line format"),
        row("mg\r\n", "REJECT ERROR"),
        // meta flags as memcached reads them: a token's first byte is the flag, so every token
        // starting with q is the quiet flag (taken out of the forwarded line); what memcached
        // refuses before it looks at the item is refused here, never forwarded
        row("mg k v qx\r\n", "FORWARD MG key=k quiet fwd=mg k v"),
        row("mg k qx v\r\n", "FORWARD MG key=k quiet fwd=mg k v"),
        row("ms k 1 q1 T5\r\nx\r\n", "FORWARD MS key=k quiet fwd=ms k 1 T5 data=x"),
        row("md k qq\r\n", "FORWARD MD key=k quiet fwd=md k"),
        row("ma k q\r\n", "FORWARD MA key=k quiet fwd=ma k"),
        row("me k q\r\n", "FORWARD ME key=k fwd=me k q"),
        row("ms k 1 q q\r\nx\r\n", "REJECT CLIENT_ERROR duplicate flag"),
        row("mg k v q k q\r\n", "REJECT CLIENT_ERROR duplicate flag"),
        row("mg k O1 O2\r\n", "REJECT CLIENT_ERROR duplicate flag"),
        row("mg k \u00ff\r\n", "REJECT CLIENT_ERROR duplicate flag"),
        row("mg k Z q q\r\n", "REJECT CLIENT_ERROR invalid flag"),
        row("md k qq q\r\n", "REJECT CLIENT_ERROR invalid or duplicate flag"),
        row("ma k Z\r\n", "REJECT CLIENT_ERROR invalid or duplicate flag"),
        row("mg k" + " v".repeat(18) + "\r\n", "REJECT CLIENT_ERROR options flags are too long"),
        row(
            "ms k 1" + " T1".repeat(17) + "\r\nx\r\n",
            "REJECT CLIENT_ERROR options flags too long"),
        row("mg k" + " v".repeat(17) + "\r\n", "REJECT CLIENT_ERROR duplicate flag"),
        // bad keys
        row(
            "get " + LONG_KEY + "\r\n",
            "REJECT CLIENT_ERROR key too long: 251 bytes (expected: <= 250)"),
        row(
            "get a " + LONG_KEY + " b\r\n",
            "REJECT CLIENT_ERROR key too long: 251 bytes (expected: <= 250)"),
        row(
            "delete " + LONG_KEY + "\r\n",
            "REJECT CLIENT_ERROR key too long: 251 bytes (expected: <= 250)"),
        row(
            "set " + LONG_KEY + " 0 0 1\r\nx\r\n",
            "REJECT CLIENT_ERROR key too long: 251 bytes (expected: <= 250)"),
        // bad numbers in recoverable positions: the data block is skipped
        row(
            "set k x 0 1\r\nx\r\n",
            "REJECT CLIENT_ERROR bad flags: x (expected: 0..18446744073709551615)"),
        row(
            "set k -1 0 1\r\nx\r\n",
            "REJECT CLIENT_ERROR bad flags: -1 (expected: 0..18446744073709551615)"),
        row(
            "set k 18446744073709551616 0 1\r\nx\r\n",
            "REJECT CLIENT_ERROR bad flags: 18446744073709551616"
                + " (expected: 0..18446744073709551615)"),
        row("set k 0 x 1\r\nx\r\n", "REJECT CLIENT_ERROR bad exptime: x (expected: an integer)"),
        row(
            "set k 0 99999999999 1\r\nx\r\n",
            "REJECT CLIENT_ERROR bad exptime: 99999999999 (expected: an integer)"),
        row("add k 0 - 1\r\nx\r\n", "REJECT CLIENT_ERROR bad exptime: - (expected: an integer)"),
        row(
            "cas k 0 0 1 abc\r\nx\r\n",
            "REJECT CLIENT_ERROR bad cas unique: abc (expected: 0..18446744073709551615)"),
        row(
            "cas k 0 0 1 18446744073709551616\r\nx\r\n",
            "REJECT CLIENT_ERROR bad cas unique: 18446744073709551616"
                + " (expected: 0..18446744073709551615)"),
        row(
            "set k 0 0 1025\r\n" + "x".repeat(1025) + "\r\n",
            "REJECT SERVER_ERROR object too large for cache"),
        row(
            "append k 0 0 99999\r\n" + "x".repeat(99999) + "\r\n",
            "REJECT SERVER_ERROR object too large for cache"),
        row("incr k x\r\n", "REJECT CLIENT_ERROR invalid numeric delta argument"),
        row("incr k -1\r\n", "REJECT CLIENT_ERROR invalid numeric delta argument"),
        row(
            "decr k 18446744073709551616\r\n",
            "REJECT CLIENT_ERROR invalid numeric delta argument"),
        row(
            "touch k soon\r\n",
            "REJECT CLIENT_ERROR invalid exptime argument: soon (expected: an integer)"),
        row(
            "gat soon k\r\n",
            "REJECT CLIENT_ERROR invalid exptime argument: soon (expected: an integer)"),
        row("delete k 5\r\n", USAGE),
        row("delete k x y\r\n", USAGE),
        row("delete k 0 0 noreply\r\n", "REJECT ERROR"),
        // noreply is read before the arguments are checked (as memcached does): no error sent
        row("delete k junk noreply\r\n", "REJECT "),
        row("incr k x noreply\r\n", "REJECT "),
        row("flush_all 0 junk noreply\r\n", "REJECT ERROR"),
        row("set k x 0 1 noreply\r\nx\r\n", "REJECT "),
        row(
            "flush_all soon\r\n",
            "REJECT CLIENT_ERROR invalid exptime argument: soon"
                + " (expected: a delay in seconds, an integer)"),
        row(
            "verbosity loud\r\n",
            "REJECT CLIENT_ERROR bad verbosity level: loud (expected: 0..4294967295)"),
        row(
            "stats reset\r\n",
            "REJECT CLIENT_ERROR unsupported stats group: reset"
                + " (expected: none, items, slabs, settings, sizes, conns)"),
        row("stats nonsense\r\n", "REJECT ERROR"),
        row("get a\r\nflags\r\n", "FORWARD GET key=a fwd=get a", "REJECT ERROR"),
        // framing lost: reply, then close
        close(
            "set k 0 0 -1\r\n",
            "REJECT_AND_CLOSE CLIENT_ERROR bad data block length: -1 (expected: 0..1024)"),
        close(
            "set k 0 0 x\r\n",
            "REJECT_AND_CLOSE CLIENT_ERROR bad data block length: x (expected: 0..1024)"),
        close(
            "set k 0 0 99999999999999999999\r\n",
            "REJECT_AND_CLOSE CLIENT_ERROR bad data block length: 99999999999999999999"
                + " (expected: 0..1024)"),
        close(
            "cas k 0 0 1.5 1\r\n",
            "REJECT_AND_CLOSE CLIENT_ERROR bad data block length: 1.5 (expected: 0..1024)"),
        close("set k 0 0 1\r\nxyz\r\n", "REJECT_AND_CLOSE CLIENT_ERROR bad data chunk"),
        // the binary protocol's request magic: refused at its first byte, not waited on for a
        // newline
        close(
            "\u0080\0\0\5\0\0\0\0\0\0\0\5",
            "REJECT_AND_CLOSE CLIENT_ERROR binary protocol is not supported"),
        close(
            "get a\r\n\u0080\0\0\5",
            "FORWARD GET key=a fwd=get a",
            "REJECT_AND_CLOSE CLIENT_ERROR binary protocol is not supported"),
        close("set k 0 0 3\r\nabcd\r\n", "REJECT_AND_CLOSE CLIENT_ERROR bad data chunk"),
        close("prepend k 0 0 2\r\nab\n\n", "REJECT_AND_CLOSE CLIENT_ERROR bad data chunk"),
        close("touch k 1 " + "x".repeat(2040) + "\r\n", LINE_OVER_2048),
        close("gat 1" + " k".repeat(1030) + "\r\n", LINE_OVER_2048),
        row(
            "get" + " k".repeat(1030) + "\r\n",
            "FORWARD GET" + " key=k".repeat(1030) + " fwd=get" + " k".repeat(1030)),
        // memcached closes a connection whose line over 2048 bytes has more than 100 spaces
        // before its get (it would close a shared server connection)
        close(" ".repeat(101) + "get" + " k".repeat(1030) + "\r\n", LINE_OVER_2048),
        close(" ".repeat(101) + "gets" + " k".repeat(1030) + "\r\n", LINE_OVER_2048),
        row(
            " ".repeat(100) + "get" + " k".repeat(1030) + "\r\n",
            "FORWARD GET"
                + " key=k".repeat(1030)
                + " fwd="
                + " ".repeat(100)
                + "get"
                + " k".repeat(1030)),
        close(
            "set " + "k ".repeat(40_000),
            "REJECT_AND_CLOSE CLIENT_ERROR line too long (expected: <= 65536 bytes)"),
        close(
            "get " + "k ".repeat(40_000),
            "REJECT_AND_CLOSE CLIENT_ERROR line too long (expected: <= 66560 bytes)"));
  }

  private static final String LINE_OVER_2048 =
      "REJECT_AND_CLOSE CLIENT_ERROR line too long (expected: <= 2048 bytes but for get and gets"
          + " after at most 100 spaces; memcached closes the connection)";

  private static Arguments row(String input, String... expected) {
    List<String> all = new ArrayList<>(List.of(expected));
    all.add(OK);
    return Arguments.of(input + "get ok\r\n", all, false);
  }

  private static Arguments close(String input, String... expected) {
    return Arguments.of(input + "get ok\r\n", List.of(expected), true);
  }

  @ParameterizedTest(name = "{index}: {0}")
  @MethodSource("malformed")
  void repliesAndRecoversOrCloses(String input, List<String> expected, boolean closes) {
    assertThat(decode(input, List.of(input.length()))).containsExactlyElementsOf(expected);
    Random random = new Random(input.hashCode());
    for (int round = 0; round < 5; round++) {
      assertThat(decode(input, RequestParserTest.randomSplit(input.length(), random)))
          .containsExactlyElementsOf(expected);
    }
  }

  @Test
  void tableHasAtLeastFiftyRows() {
    assertThat(malformed().count()).isGreaterThanOrEqualTo(50);
  }

  private static List<String> decode(String input, List<Integer> chunks) {
    byte[] bytes = input.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    ParserHarness harness = new ParserHarness(1024);
    int offset = 0;
    for (int size : chunks) {
      harness.feed(java.util.Arrays.copyOfRange(bytes, offset, offset + size));
      offset += size;
    }
    return harness.decoded;
  }
}
