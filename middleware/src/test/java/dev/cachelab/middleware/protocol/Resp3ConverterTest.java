package dev.cachelab.middleware.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class Resp3ConverterTest {
  static Stream<Arguments> replies() {
    return Stream.of(
        Arguments.of(
            new String[] {"HGETALL", "h"},
            "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
            "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"),
        Arguments.of(new String[] {"HGETALL", "h"}, "*0\r\n", "%0\r\n"),
        Arguments.of(
            new String[] {"SMEMBERS", "s"},
            "*2\r\n$1\r\nx\r\n$1\r\ny\r\n",
            "~2\r\n$1\r\nx\r\n$1\r\ny\r\n"),
        Arguments.of(new String[] {"ZSCORE", "z", "m"}, "$3\r\n1.5\r\n", ",1.5\r\n"),
        Arguments.of(new String[] {"ZSCORE", "z", "m"}, "$-1\r\n", "_\r\n"),
        Arguments.of(new String[] {"GET", "k"}, "$-1\r\n", "_\r\n"),
        Arguments.of(new String[] {"GET", "k"}, "$1\r\nv\r\n", "$1\r\nv\r\n"),
        Arguments.of(
            new String[] {"MGET", "a", "b"}, "*2\r\n$-1\r\n$1\r\nv\r\n", "*2\r\n_\r\n$1\r\nv\r\n"),
        Arguments.of(new String[] {"LMPOP", "1", "l", "LEFT"}, "*-1\r\n", "_\r\n"),
        Arguments.of(
            new String[] {"HGETALL", "h"}, "*2\r\n$1\r\na\r\n$-1\r\n", "%1\r\n$1\r\na\r\n_\r\n"),
        Arguments.of(new String[] {"SMEMBERS", "s"}, ":1\r\n", ":1\r\n"),
        Arguments.of(
            new String[] {"ZMSCORE", "z", "m", "n"},
            "*2\r\n$1\r\n2\r\n$-1\r\n",
            "*2\r\n,2\r\n_\r\n"),
        Arguments.of(
            new String[] {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
            "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\ninf\r\n",
            "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,inf\r\n"),
        Arguments.of(
            new String[] {"ZRANGE", "z", "0", "-1"},
            "*2\r\n$1\r\na\r\n$1\r\nb\r\n",
            "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
        Arguments.of(
            new String[] {"ZPOPMIN", "z"},
            "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            "*2\r\n$1\r\na\r\n,1\r\n"),
        Arguments.of(new String[] {"ZPOPMIN", "z"}, "*0\r\n", "*0\r\n"),
        Arguments.of(
            new String[] {"ZPOPMIN", "z", "1"},
            "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            "*1\r\n*2\r\n$1\r\na\r\n,1\r\n"),
        Arguments.of(
            new String[] {"HRANDFIELD", "h", "1", "WITHVALUES"},
            "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            "*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        Arguments.of(
            new String[] {"ZRANK", "z", "a", "WITHSCORE"},
            "*2\r\n:0\r\n$1\r\n1\r\n",
            "*2\r\n:0\r\n,1\r\n"),
        Arguments.of(
            new String[] {"ZMPOP", "1", "z", "MIN"},
            "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n,1\r\n"),
        Arguments.of(new String[] {"ZADD", "z", "INCR", "1", "a"}, "$1\r\n3\r\n", ",3\r\n"),
        Arguments.of(new String[] {"ZADD", "z", "1", "a"}, ":1\r\n", ":1\r\n"),
        Arguments.of(
            new String[] {"HGETALL", "h"},
            "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
            "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"));
  }

  @ParameterizedTest
  @MethodSource("replies")
  void rewritesTheReplyAsRedisAnswersARespThreeClient(
      String[] command, String resp2, String resp3) {
    RespParser parser = new RespParser(1024, KeyPlacement.EVERY_SERVER);
    Request request = new Request();
    byte[] hello = RespReplies.command("HELLO", "3");
    parser.decode(hello, 0, hello.length, request);
    byte[] bytes = RespReplies.command(command);
    parser.decode(bytes, 0, bytes.length, request);

    ByteBuffer reply = ByteBuffer.wrap(resp2.getBytes(StandardCharsets.ISO_8859_1));
    ByteBuffer converted = new Resp3Converter().convert(request, reply);

    byte[] out = new byte[converted.remaining()];
    converted.get(out);
    assertThat(new String(out, StandardCharsets.ISO_8859_1)).isEqualTo(resp3);
  }
}
