package dev.cachelab.middleware.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RequestParserTest {
  private static final int MAX_VALUE = 1024;

  static Stream<Arguments> wellFormed() {
    return Stream.of(
        Arguments.of("get foo\r\n", "FORWARD GET key=foo fwd=get foo"),
        Arguments.of("get a b c\r\n", "FORWARD GET key=a key=b key=c fwd=get a b c"),
        Arguments.of("gets k1 k2\r\n", "FORWARD GETS key=k1 key=k2 fwd=gets k1 k2"),
        Arguments.of("gat 100 k\r\n", "FORWARD GAT key=k fwd=gat 100 k"),
        Arguments.of("gats -1 x y\r\n", "FORWARD GATS key=x key=y fwd=gats -1 x y"),
        Arguments.of("set k 1 0 5\r\nhello\r\n", "FORWARD SET key=k fwd=set k 1 0 5 data=hello"),
        Arguments.of(
            "set k 1 0 5 noreply\r\nhello\r\n",
            "FORWARD SET key=k noreply fwd=set k 1 0 5 data=hello"),
        Arguments.of("set e 0 0 0\r\n\r\n", "FORWARD SET key=e fwd=set e 0 0 0 data="),
        Arguments.of(
            "set bin 0 0 4\r\n\r\n\0\n\r\n", "FORWARD SET key=bin fwd=set bin 0 0 4 data=\r\n\0\n"),
        Arguments.of("add k 0 60 2\r\nab\r\n", "FORWARD ADD key=k fwd=add k 0 60 2 data=ab"),
        Arguments.of(
            "replace k 0 0 1\r\nz\r\n", "FORWARD REPLACE key=k fwd=replace k 0 0 1 data=z"),
        Arguments.of("append k 0 0 1\r\nz\r\n", "FORWARD APPEND key=k fwd=append k 0 0 1 data=z"),
        Arguments.of(
            "prepend k 0 0 1\r\nz\r\n", "FORWARD PREPEND key=k fwd=prepend k 0 0 1 data=z"),
        Arguments.of("cas k 0 0 1 77\r\nz\r\n", "FORWARD CAS key=k fwd=cas k 0 0 1 77 data=z"),
        Arguments.of(
            "cas k 0 0 1 77 noreply\r\nz\r\n",
            "FORWARD CAS key=k noreply fwd=cas k 0 0 1 77 data=z"),
        Arguments.of("delete k\r\n", "FORWARD DELETE key=k fwd=delete k"),
        Arguments.of("delete k noreply\r\n", "FORWARD DELETE key=k noreply fwd=delete k"),
        Arguments.of("delete k 0\r\n", "FORWARD DELETE key=k fwd=delete k 0"),
        Arguments.of("incr n 5\r\n", "FORWARD INCR key=n fwd=incr n 5"),
        Arguments.of(
            "decr n 18446744073709551615 noreply\r\n",
            "FORWARD DECR key=n noreply fwd=decr n 18446744073709551615"),
        Arguments.of("touch k 10\r\n", "FORWARD TOUCH key=k fwd=touch k 10"),
        Arguments.of("flush_all\r\n", "FORWARD FLUSH_ALL fwd=flush_all"),
        Arguments.of("flush_all 10 noreply\r\n", "FORWARD FLUSH_ALL noreply fwd=flush_all 10"),
        Arguments.of("version\r\n", "FORWARD VERSION fwd=version"),
        Arguments.of("verbosity 1\r\n", "FORWARD VERBOSITY fwd=verbosity 1"),
        Arguments.of("verbosity 0 noreply\r\n", "FORWARD VERBOSITY noreply fwd=verbosity 0"),
        Arguments.of("stats\r\n", "LOCAL STATS fwd=stats"),
        Arguments.of("quit\r\n", "QUIT QUIT fwd=quit"),
        // Accepted as memcached 1.6.18 accepts them (compared with a real one in
        // MemcachedParityIT).
        Arguments.of("version foo bar\r\n", "FORWARD VERSION fwd=version foo bar"),
        Arguments.of("quit extra\r\n", "QUIT QUIT fwd=quit extra"),
        Arguments.of("flush_all -1\r\n", "FORWARD FLUSH_ALL fwd=flush_all -1"),
        Arguments.of(
            "set k 4294967296 0 1\r\nx\r\n", "FORWARD SET key=k fwd=set k 4294967296 0 1 data=x"),
        Arguments.of("set k 0 -1 1\r\nx\r\n", "FORWARD SET key=k fwd=set k 0 -1 1 data=x"),
        Arguments.of(
            "set k 0 0 1 norepl\r\nx\r\n", "FORWARD SET key=k fwd=set k 0 0 1 norepl data=x"),
        Arguments.of("gat 0\r\n", "LOCAL END"),
        Arguments.of("verbosity noreply\r\n", "LOCAL "),
        Arguments.of("stats items\r\n", "FORWARD STATS_GROUP fwd=stats items"),
        Arguments.of(
            "get  spaced   keys \r\n", "FORWARD GET key=spaced key=keys fwd=get  spaced   keys "),
        Arguments.of("get bare-newline\n", "FORWARD GET key=bare-newline fwd=get bare-newline"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("wellFormed")
  void decodesWholeInput(String input, String expected) {
    assertThat(decodeInChunks(input, List.of(input.length()))).containsExactly(expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("wellFormed")
  void decodesInputFedOneByteAtATime(String input, String expected) {
    List<Integer> ones = new ArrayList<>();
    for (int i = 0; i < input.length(); i++) {
      ones.add(1);
    }
    assertThat(decodeInChunks(input, ones)).containsExactly(expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("wellFormed")
  void decodesInputInRandomSplits(String input, String expected) {
    Random random = new Random(input.hashCode());
    for (int round = 0; round < 20; round++) {
      assertThat(decodeInChunks(input, randomSplit(input.length(), random)))
          .as("round %d", round)
          .containsExactly(expected);
    }
  }

  @Test
  void decodesEveryCommandPipelinedInOneReadAndInRandomSplits() {
    StringBuilder all = new StringBuilder();
    List<String> expected = new ArrayList<>();
    wellFormed()
        .forEach(
            a -> {
              all.append((String) a.get()[0]);
              expected.add((String) a.get()[1]);
            });
    String input = all.toString();
    assertThat(decodeInChunks(input, List.of(input.length()))).containsExactlyElementsOf(expected);
    Random random = new Random(42);
    for (int round = 0; round < 50; round++) {
      assertThat(decodeInChunks(input, randomSplit(input.length(), random)))
          .containsExactlyElementsOf(expected);
    }
  }

  @Test
  void refusesTheAdminCommandsUnlessTheyAreAllowed() {
    ParserHarness harness = new ParserHarness(new RequestParser(MAX_VALUE, false));
    harness.feed(
        "flush_all\r\nflush_all 0 noreply\r\nverbosity 1\r\nflush_all 0 junk noreply\r\nget k\r\n"
            .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    assertThat(harness.decoded)
        .containsExactly(
            "REJECT CLIENT_ERROR flush_all not allowed: it empties every server for every client"
                + " (--admin-commands true allows it)",
            "REJECT ", // noreply: as memcached started with flush_all disabled, nothing
            "REJECT CLIENT_ERROR verbosity not allowed: it changes every server's logging for every"
                + " client (--admin-commands true allows it)",
            "REJECT ERROR",
            "FORWARD GET key=k fwd=get k");
  }

  @Test
  void decodesLargestValueAndRejectsOneByteMore() {
    byte[] value = new byte[MAX_VALUE];
    Arrays.fill(value, (byte) 'v');
    ByteArrayOutputStream in = new ByteArrayOutputStream();
    in.writeBytes(("set big 0 0 " + MAX_VALUE + "\r\n").getBytes(StandardCharsets.US_ASCII));
    in.writeBytes(value);
    in.writeBytes("\r\nset bigger 0 0 1025\r\n".getBytes(StandardCharsets.US_ASCII));
    in.writeBytes(new byte[1025]);
    in.writeBytes("\r\nget after\r\n".getBytes(StandardCharsets.US_ASCII));
    ParserHarness harness = new ParserHarness(MAX_VALUE);
    byte[] bytes = in.toByteArray();
    for (int i = 0; i < bytes.length; i += 100) {
      harness.feed(Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + 100)));
    }
    assertThat(harness.decoded)
        .containsExactly(
            "FORWARD SET key=big fwd=set big 0 0 1024 data=" + "v".repeat(MAX_VALUE),
            "REJECT SERVER_ERROR object too large for cache",
            "FORWARD GET key=after fwd=get after");
    assertThat(harness.buffered()).isZero();
  }

  @Test
  void keepsIncompleteRequestBuffered() {
    ParserHarness harness = new ParserHarness(MAX_VALUE);
    harness.feed("set k 0 0 5\r\nhel".getBytes(StandardCharsets.US_ASCII));
    assertThat(harness.decoded).isEmpty();
    assertThat(harness.buffered()).isEqualTo(16);
    harness.feed("lo\r\n".getBytes(StandardCharsets.US_ASCII));
    assertThat(harness.decoded).containsExactly("FORWARD SET key=k fwd=set k 0 0 5 data=hello");
    assertThat(harness.buffered()).isZero();
  }

  @Test
  void classifiesOperationTypes() {
    assertThat(opType("get a\r\n")).isEqualTo(OpType.GET);
    assertThat(opType("gets a b\r\n")).isEqualTo(OpType.MULTIGET);
    assertThat(opType("set a 0 0 1\r\nx\r\n")).isEqualTo(OpType.SET);
    assertThat(opType("cas a 0 0 1 1\r\nx\r\n")).isEqualTo(OpType.SET);
    assertThat(opType("delete a\r\n")).isEqualTo(OpType.OTHER);
    assertThat(opType("bogus\r\n")).isEqualTo(OpType.OTHER);
  }

  private static OpType opType(String input) {
    byte[] bytes = input.getBytes(StandardCharsets.ISO_8859_1);
    Request request = new Request();
    new RequestParser(MAX_VALUE).decode(bytes, 0, bytes.length, request);
    return request.opType();
  }

  static List<String> decodeInChunks(String input, List<Integer> chunkSizes) {
    byte[] bytes = input.getBytes(StandardCharsets.ISO_8859_1);
    ParserHarness harness = new ParserHarness(MAX_VALUE);
    int offset = 0;
    for (int size : chunkSizes) {
      harness.feed(Arrays.copyOfRange(bytes, offset, offset + size));
      offset += size;
    }
    assertThat(offset).isEqualTo(bytes.length);
    assertThat(harness.buffered()).as("bytes left over").isZero();
    return harness.decoded;
  }

  static List<Integer> randomSplit(int length, Random random) {
    List<Integer> sizes = new ArrayList<>();
    int left = length;
    while (left > 0) {
      int size = 1 + random.nextInt(Math.min(left, 1 + random.nextInt(16)));
      sizes.add(size);
      left -= size;
    }
    return sizes;
  }
}
