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

class RespParserTest {
  private static final int MAX_VALUE = 1024;

  private static byte[] bytesUtf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static String mb(String... parts) {
    return new String(RespReplies.command(parts), StandardCharsets.ISO_8859_1);
  }

  static Stream<Arguments> wellFormed() {
    return Stream.of(
        Arguments.of(mb("GET", "k"), "FORWARD GET key=k args=GET,k"),
        Arguments.of(mb("get", "k"), "FORWARD GET key=k args=get,k"),
        Arguments.of(mb("SET", "k", "v"), "FORWARD SET key=k args=SET,k,v"),
        Arguments.of(
            mb("SET", "k", "v", "EX", "10", "NX"), "FORWARD SET key=k args=SET,k,v,EX,10,NX"),
        Arguments.of(
            mb("SET", "k", "v", "PX", "5", "XX"), "FORWARD SET key=k args=SET,k,v,PX,5,XX"),
        Arguments.of(mb("SET", "bin", "a\r\nb\0"), "FORWARD SET key=bin args=SET,bin,a\r\nb\0"),
        Arguments.of(mb("SET", "e", ""), "FORWARD SET key=e args=SET,e,"),
        Arguments.of(mb("MGET", "a", "b", "c"), "FORWARD MGET key=a key=b key=c args=MGET,a,b,c"),
        Arguments.of(mb("MSET", "a", "1", "b", "2"), "FORWARD MSET key=a key=b args=MSET,a,1,b,2"),
        Arguments.of(mb("DEL", "a", "b"), "FORWARD DEL key=a key=b args=DEL,a,b"),
        Arguments.of(mb("EXISTS", "a"), "FORWARD EXISTS key=a args=EXISTS,a"),
        Arguments.of(mb("INCR", "n"), "FORWARD INCR key=n args=INCR,n"),
        Arguments.of(mb("DECR", "n"), "FORWARD DECR key=n args=DECR,n"),
        Arguments.of(mb("INCRBY", "n", "5"), "FORWARD INCRBY key=n args=INCRBY,n,5"),
        Arguments.of(mb("EXPIRE", "k", "10"), "FORWARD EXPIRE key=k args=EXPIRE,k,10"),
        Arguments.of(mb("TTL", "k"), "FORWARD TTL key=k args=TTL,k"),
        Arguments.of(mb("FLUSHALL"), "FORWARD FLUSHALL args=FLUSHALL"),
        Arguments.of(mb("CONFIG", "GET", "save"), "FORWARD CONFIG args=CONFIG,GET,save"),
        Arguments.of(mb("PING"), "LOCAL +PONG"),
        Arguments.of(mb("PING", "hi"), "LOCAL $2\r\nhi"),
        Arguments.of(mb("ECHO", "a b"), "LOCAL $3\r\na b"),
        Arguments.of(mb("QUIT"), "QUIT +OK"),
        Arguments.of(mb("SELECT", "0"), "LOCAL +OK"),
        Arguments.of(
            mb("EXPIRE", "k", "10", "NX", "XX"), "FORWARD EXPIRE key=k args=EXPIRE,k,10,NX,XX"),
        Arguments.of(mb("FLUSHALL", "ASYNC", "SYNC"), "FORWARD FLUSHALL args=FLUSHALL,ASYNC,SYNC"));
  }

  @ParameterizedTest
  @MethodSource("wellFormed")
  void decodesEachWellFormedRequestAndKeepsItsWireForm(String input, String expected) {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    harness.feed(bytes(input));
    assertThat(harness.decoded).containsExactly(expected);
    assertThat(harness.buffered()).isZero();

    Request request = new Request();
    int consumed =
        new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER)
            .decode(bytes(input), 0, input.length(), request);
    assertThat(consumed).isEqualTo(input.length());
    if (request.status() == Request.Status.FORWARD) {
      assertThat(Arrays.copyOf(request.bytes(), request.wireLength())).isEqualTo(bytes(input));
    }
  }

  @Test
  void offsetsThatGrowAStringPastTheValueLimitAreRefused() {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    harness.feed(
        bytes(
            mb("SETRANGE", "k", "1023", "x")
                + mb("SETRANGE", "k", "1023", "xy")
                + mb("SETRANGE", "k", "536870000", "")
                + mb("SETRANGE", "k", "-1", "x")
                + mb("SETBIT", "k", "8191", "1")
                + mb("SETBIT", "k", "8192", "1")
                + mb("SETBIT", "k", "x", "1")
                + mb("BITFIELD", "k", "GET", "u8", "99999", "SET", "u8", "8184", "1")
                + mb("BITFIELD", "k", "overflow", "SAT", "incrby", "i8", "8185", "1")
                + mb("BITFIELD", "k", "SET", "u8", "#1023", "1", "SET", "i16", "#512", "1")
                + mb("BITFIELD", "k", "SET", "x8", "99999999", "1")));
    String tooLarge =
        "REJECT -ERR string exceeds maximum allowed size (--max-value-bytes: 1024 bytes)";
    assertThat(harness.decoded)
        .containsExactly(
            "FORWARD SETRANGE key=k args=SETRANGE,k,1023,x",
            tooLarge,
            "FORWARD SETRANGE key=k args=SETRANGE,k,536870000,",
            "FORWARD SETRANGE key=k args=SETRANGE,k,-1,x",
            "FORWARD SETBIT key=k args=SETBIT,k,8191,1",
            tooLarge,
            "FORWARD SETBIT key=k args=SETBIT,k,x,1",
            "FORWARD BITFIELD key=k args=BITFIELD,k,GET,u8,99999,SET,u8,8184,1",
            tooLarge,
            tooLarge,
            "FORWARD BITFIELD key=k args=BITFIELD,k,SET,x8,99999999,1");
  }

  @Test
  void refusesFlushallAndFlushdbUnlessTheyAreAllowed() {
    ParserHarness harness =
        new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER, false));
    harness.feed(bytes(mb("FLUSHALL") + mb("FLUSHDB", "ASYNC") + mb("GET", "k")));
    assertThat(harness.decoded)
        .containsExactly(
            "REJECT -ERR FLUSHALL is not allowed by the middleware: it empties every server for"
                + " every client (--admin-commands true allows it)",
            "REJECT -ERR FLUSHDB is not allowed by the middleware: it empties every server for"
                + " every client (--admin-commands true allows it)",
            "FORWARD GET key=k args=GET,k");
  }

  @Test
  void inlineCommandsAreRewrittenAsMultibulk() {
    RespParser parser = new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER);
    Request request = new Request();
    byte[] line = bytes("  SET\tk  hello \r\n");
    assertThat(parser.decode(line, 0, line.length, request)).isEqualTo(line.length);
    assertThat(request.status()).isEqualTo(Request.Status.FORWARD);
    assertThat(request.respCommand()).isEqualTo(RespCommand.SET);
    assertThat(Arrays.copyOf(request.bytes(), request.wireLength()))
        .isEqualTo(RespReplies.command("SET", "k", "hello"));
    assertThat(ParserHarness.describe(request)).isEqualTo("FORWARD SET key=k args=SET,k,hello");

    byte[] bare = bytes("ping\n");
    assertThat(parser.decode(bare, 0, bare.length, request)).isEqualTo(bare.length);
    assertThat(ParserHarness.describe(request)).isEqualTo("LOCAL +PONG");
  }

  static Stream<Arguments> quotedInline() {
    return Stream.of(
        Arguments.of("SET k \"a b\"\r\n", "FORWARD SET key=k args=SET,k,a b"),
        Arguments.of("SET k 'a \"b\" c'\r\n", "FORWARD SET key=k args=SET,k,a \"b\" c"),
        Arguments.of("SET k \"x\\ny\\t\\x41\\\"z\"\r\n", "FORWARD SET key=k args=SET,k,x\ny\tA\"z"),
        Arguments.of("SET k 'it\\'s'\r\n", "FORWARD SET key=k args=SET,k,it's"),
        Arguments.of("SET k 'a\\nb'\r\n", "FORWARD SET key=k args=SET,k,a\\nb"),
        Arguments.of("SET \"\" \"\"\r\n", "FORWARD SET key= args=SET,,"),
        Arguments.of(
            "SET k\"q r\"s\r\n",
            "REJECT_AND_CLOSE -ERR Protocol error: unbalanced quotes in request"),
        Arguments.of(
            "SET k \"open\r\n",
            "REJECT_AND_CLOSE -ERR Protocol error: unbalanced quotes in request"),
        Arguments.of(
            "SET k 'open\r\n",
            "REJECT_AND_CLOSE -ERR Protocol error: unbalanced quotes in request"));
  }

  /** Inline quoting as redis' sdssplitargs does it, checked against redis-cli's own quoting. */
  @ParameterizedTest
  @MethodSource("quotedInline")
  void quotedInlineArgumentsAreUnquoted(String input, String expected) {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    for (byte b : bytes(input)) {
      harness.feed(new byte[] {b});
    }
    assertThat(harness.decoded).containsExactly(expected);
  }

  @Test
  void emptyInlineLinesAndEmptyArraysAreSkipped() {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    harness.feed(bytes("\r\n\n*0\r\n*-1\r\nPING\r\n"));
    assertThat(harness.decoded).containsExactly("LOCAL +PONG");
  }

  @Test
  void byteByByteAndRandomSplitsGiveTheSameRequests() {
    StringBuilder stream = new StringBuilder();
    List<String> expected = new ArrayList<>();
    wellFormed()
        .filter(a -> !((String) a.get()[1]).startsWith("QUIT"))
        .forEach(
            a -> {
              stream.append((String) a.get()[0]);
              expected.add((String) a.get()[1]);
            });
    stream.append("GET k2\r\n").append("FOO bar\r\n").append(mb("GET"));
    expected.add("FORWARD GET key=k2 args=GET,k2");
    expected.add("REJECT -ERR unknown command 'FOO', with args beginning with: 'bar'");
    expected.add("REJECT -ERR wrong number of arguments for 'get' command");
    byte[] all = bytes(stream.toString());

    ParserHarness oneByOne =
        new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    for (byte b : all) {
      oneByOne.feed(new byte[] {b});
    }
    assertThat(oneByOne.decoded).containsExactlyElementsOf(expected);

    Random random = new Random(12);
    for (int round = 0; round < 200; round++) {
      ParserHarness split = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
      int at = 0;
      while (at < all.length) {
        int n = Math.min(all.length - at, 1 + random.nextInt(40));
        split.feed(Arrays.copyOfRange(all, at, at + n));
        at += n;
      }
      assertThat(split.decoded).containsExactlyElementsOf(expected);
      assertThat(split.buffered()).isZero();
    }
  }

  static Stream<Arguments> rejectedButInFrame() {
    return Stream.of(
        Arguments.of(
            mb("NOPE", "a", "b"),
            "REJECT -ERR unknown command 'NOPE', with args beginning with: 'a' 'b'"),
        Arguments.of(
            mb("GET", "a", "b"), "REJECT -ERR wrong number of arguments for 'get' command"),
        Arguments.of(mb("SET", "k"), "REJECT -ERR wrong number of arguments for 'set' command"),
        Arguments.of(
            mb("MSET", "a", "1", "b"), "REJECT -ERR wrong number of arguments for 'mset' command"),
        Arguments.of(mb("ECHO"), "REJECT -ERR wrong number of arguments for 'echo' command"),
        Arguments.of(
            mb("NO\0PE", "a\0b", "c"),
            "REJECT -ERR unknown command 'NO', with args beginning with: 'a' 'c'"),
        Arguments.of(
            mb("NOPE", "x".repeat(200), "y"),
            "REJECT -ERR unknown command 'NOPE', with args beginning with: '"
                + "x".repeat(128)
                + "'"),
        Arguments.of(
            mb("NOPE", "a".repeat(120), "b".repeat(20), "c"),
            "REJECT -ERR unknown command 'NOPE', with args beginning with: '"
                + "a".repeat(120)
                + "' '"
                + "b".repeat(5)
                + "'"),
        Arguments.of(
            mb("NOPE", "\u00e9\u00ff"), // UTF-8, quoted byte for byte as redis does
            "REJECT -ERR unknown command 'NOPE', with args beginning with: '"
                + new String(bytesUtf8("\u00e9\u00ff"), StandardCharsets.ISO_8859_1)
                + "'"),
        Arguments.of(mb("SELECT", "1"), "REJECT -ERR DB index is out of range"),
        Arguments.of(mb("SELECT", "01"), "REJECT -ERR value is not an integer or out of range"),
        Arguments.of(mb("SELECT"), "REJECT -ERR wrong number of arguments for 'select' command"),
        Arguments.of(
            mb("CONFIG", "SET", "save", ""),
            "REJECT -ERR CONFIG SET is not supported by the middleware (only CONFIG GET, answered"
                + " by the first server)"));
  }

  @ParameterizedTest
  @MethodSource("rejectedButInFrame")
  void unknownOrMalformedCommandsGetAnErrorAndTheStreamGoesOn(String input, String expected) {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    harness.feed(bytes(input + mb("GET", "next")));
    assertThat(harness.decoded).containsExactly(expected, "FORWARD GET key=next args=GET,next");
    assertThat(harness.closed()).isFalse();
  }

  /** Keys on the same servers when they start with the same byte; writes replicated. */
  private static final KeyPlacement BY_FIRST_BYTE =
      new KeyPlacement() {
        @Override
        public boolean sameServers(byte[] bytes, int aStart, int aEnd, int bStart, int bEnd) {
          return bytes[aStart] == bytes[bStart];
        }

        @Override
        public boolean replicatesWrites() {
          return true;
        }
      };

  private static String differentServers(String command) {
    return "REJECT -ERR the keys of '"
        + command
        + "' are on different servers (--routing hash): give it keys that hash to the same"
        + " servers, or one key per command";
  }

  @Test
  void multiKeyWritesAndUnsplitCommandsNeedTheirKeysOnTheSameServers() {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, BY_FIRST_BYTE));
    harness.feed(
        bytes(
            mb("MSET", "a", "1", "b", "2")
                + mb("MSET", "a1", "1", "a2", "2")
                + mb("DEL", "a", "b")
                + mb("DEL", "a")
                + mb("MGET", "a", "b")
                + mb("SINTER", "a1", "b1")
                + mb("SINTER", "a1", "a2")
                + mb("SMOVE", "a1", "b1", "m")
                + mb("SMOVE", "a1", "a2", "bm")
                + mb("ZUNIONSTORE", "d", "2", "da", "xb")
                + mb("ZUNIONSTORE", "d", "2", "da", "db", "WEIGHTS", "1", "2")
                + mb("ZUNIONSTORE", "a", "2", "da", "db")
                + mb("ZINTER", "2", "xa", "xb", "WITHSCORES")
                + mb("SPOP", "s")));
    assertThat(harness.decoded)
        .containsExactly(
            differentServers("mset"),
            "FORWARD MSET key=a1 key=a2 args=MSET,a1,1,a2,2",
            differentServers("del"),
            "FORWARD DEL key=a args=DEL,a",
            "FORWARD MGET key=a key=b args=MGET,a,b",
            differentServers("sinter"),
            "FORWARD SINTER key=a1 args=SINTER,a1,a2",
            differentServers("smove"),
            "FORWARD SMOVE key=a1 args=SMOVE,a1,a2,bm",
            differentServers("zunionstore"),
            "FORWARD ZUNIONSTORE key=d args=ZUNIONSTORE,d,2,da,db,WEIGHTS,1,2",
            differentServers("zunionstore"),
            "FORWARD ZINTER key=xa args=ZINTER,2,xa,xb,WITHSCORES",
            "REJECT -ERR 'spop' picks at random, so replicas given it would differ: not supported"
                + " while writes go to several servers");
  }

  @Test
  void helloAnswersAsRedisSevenAndSwitchesTheConnectionsReplies() {
    RespParser parser = new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER);
    Request request = new Request();
    String hgetall = mb("HGETALL", "h");
    parser.decode(bytes(hgetall), 0, hgetall.length(), request);
    assertThat(request.resp3Shape()).isNull();

    String hello3 = mb("HELLO", "3", "SETNAME", "app");
    parser.decode(bytes(hello3), 0, hello3.length(), request);
    assertThat(request.status()).isEqualTo(Request.Status.LOCAL);
    String reply = new String(request.immediateReply(), StandardCharsets.ISO_8859_1);
    assertThat(reply)
        .startsWith("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n")
        .contains("$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:")
        .endsWith(
            "$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
                + "$7\r\nmodules\r\n*0\r\n");

    parser.decode(bytes(hgetall), 0, hgetall.length(), request);
    assertThat(request.resp3Shape()).isEqualTo(Resp3Shape.MAP);
    String zrange = mb("ZRANGE", "z", "0", "-1");
    parser.decode(bytes(zrange), 0, zrange.length(), request);
    assertThat(request.resp3Shape()).isEqualTo(Resp3Shape.SAME);
    String withScores = mb("ZRANGE", "z", "0", "-1", "withscores");
    parser.decode(bytes(withScores), 0, withScores.length(), request);
    assertThat(request.resp3Shape()).isEqualTo(Resp3Shape.SCORE_PAIRS);
    // an option word in a key's or member's place gives no shape
    for (String[] plain :
        new String[][] {
          {"ZUNION", "2", "z", "WITHSCORES"},
          {"ZDIFF", "2", "WITHSCORES", "z"},
          {"ZINTER", "x", "z", "WITHSCORES"},
          {"LCS", "a", "IDX"}
        }) {
      String command = mb(plain);
      parser.decode(bytes(command), 0, command.length(), request);
      assertThat(request.resp3Shape()).as(command).isEqualTo(Resp3Shape.SAME);
    }
    String keyAndOption = mb("ZUNION", "1", "WITHSCORES", "WITHSCORES");
    parser.decode(bytes(keyAndOption), 0, keyAndOption.length(), request);
    assertThat(request.resp3Shape()).isEqualTo(Resp3Shape.SCORE_PAIRS);

    ParserHarness harness = new ParserHarness(parser);
    harness.feed(
        bytes(
            mb("CLIENT", "GETNAME")
                + mb("HELLO", "4")
                + mb("HELLO", "three")
                + mb("HELLO", "2", "AUTH", "default", "pw")
                + mb("HELLO", "2", "NOSUCH")
                + mb("CLIENT", "SETNAME", "a b")
                + mb("CLIENT", "SETINFO", "LIB-NAME", "redis-py")
                + mb("CLIENT", "KILL", "ID", "1")
                + mb("HELLO", "2")));
    assertThat(harness.decoded.subList(0, 8))
        .containsExactly(
            "LOCAL $3\r\napp",
            "REJECT -NOPROTO unsupported protocol version",
            "REJECT -ERR Protocol version is not an integer or out of range",
            "REJECT -ERR HELLO AUTH is not supported by the middleware (its servers are used"
                + " without a password)",
            "REJECT -ERR Syntax error in HELLO option 'NOSUCH'",
            "REJECT -ERR Client names cannot contain spaces, newlines or special characters.",
            "LOCAL +OK",
            "REJECT -ERR CLIENT KILL is not supported by the middleware (only SETNAME, GETNAME, ID"
                + " and SETINFO, answered for this connection)");
    assertThat(harness.decoded.get(8)).startsWith("LOCAL *14\r\n$6\r\nserver");
    parser.decode(bytes(hgetall), 0, hgetall.length(), request);
    assertThat(request.resp3Shape()).isNull();
  }

  static Stream<Arguments> framingErrors() {
    return Stream.of(
        Arguments.of("*x\r\n", "invalid multibulk length"),
        Arguments.of("*2\r\n$3\r\nGET\r\n:1\r\n", "expected '$', got ':'"),
        Arguments.of("*1\r\n$2000\r\n", "invalid bulk length (expected: 0..1024 bytes"),
        Arguments.of("*1\r\n$3\r\nGETxx", "bulk string not followed by CRLF"),
        Arguments.of("*1\rx", "CR not followed by LF"),
        Arguments.of("*99999999999\r\n", "invalid multibulk length"));
  }

  /** Framing errors redis gives too: the same text (checked against redis-server 7.0). */
  static Stream<Arguments> framingErrorsAsRedis() {
    return Stream.of(
        Arguments.of("*01\r\n$4\r\nPING\r\n", "invalid multibulk length"),
        Arguments.of("*+1\r\n$4\r\nPING\r\n", "invalid multibulk length"),
        Arguments.of("*-0\r\n", "invalid multibulk length"),
        Arguments.of("*\r\n", "invalid multibulk length"),
        Arguments.of("*1\r\n$-2\r\n", "invalid bulk length"),
        Arguments.of("*1\r\n$-1\r\n", "invalid bulk length"),
        Arguments.of("*1\r\n$abc\r\n", "invalid bulk length"),
        Arguments.of("*1\r\n$04\r\nPING\r\n", "invalid bulk length"),
        Arguments.of("*1\r\n$+4\r\nPING\r\n", "invalid bulk length"),
        Arguments.of("*1\r\n$\r\n", "invalid bulk length"),
        Arguments.of("*1\r\n$536870913\r\n", "invalid bulk length"),
        Arguments.of("*1\r\n$99999999999\r\n", "invalid bulk length"));
  }

  @ParameterizedTest
  @MethodSource("framingErrorsAsRedis")
  void framingErrorsRedisAlsoRefusesGetItsExactText(String input, String message) {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    harness.feed(bytes(mb("GET", "before") + input + mb("GET", "after")));
    assertThat(harness.decoded)
        .containsExactly(
            "FORWARD GET key=before args=GET,before",
            "REJECT_AND_CLOSE -ERR Protocol error: " + message);
    assertThat(harness.closed()).isTrue();
  }

  @ParameterizedTest
  @MethodSource("framingErrors")
  void framingErrorsGetAProtocolErrorAndCloseTheConnection(String input, String message) {
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    harness.feed(bytes(mb("GET", "before") + input + mb("GET", "after")));
    assertThat(harness.decoded).hasSize(2);
    assertThat(harness.decoded.get(0)).isEqualTo("FORWARD GET key=before args=GET,before");
    assertThat(harness.decoded.get(1))
        .startsWith("REJECT_AND_CLOSE -ERR Protocol error: " + message);
    assertThat(harness.closed()).isTrue();
  }

  @Test
  void overlongInlineLineAndCountLineAreRefusedWithoutWaitingForTheirEnd() {
    byte[] inline = new byte[RespParser.MAX_INLINE_BYTES + 10];
    Arrays.fill(inline, (byte) 'a');
    ParserHarness harness = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    harness.feed(inline);
    assertThat(harness.decoded)
        .containsExactly("REJECT_AND_CLOSE -ERR Protocol error: too big inline request");

    ByteArrayOutputStream count = new ByteArrayOutputStream();
    count.writeBytes(bytes("*1"));
    count.writeBytes(new byte[RespParser.MAX_INLINE_BYTES + 10]);
    ParserHarness second = new ParserHarness(new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER));
    second.feed(count.toByteArray());
    assertThat(second.decoded)
        .containsExactly("REJECT_AND_CLOSE -ERR Protocol error: too big mbulk count string");
  }

  /**
   * A multibulk request arriving in many small reads is scanned once: each bulk string is decoded
   * once, not once per read (an MGET of 20,000 keys in 7-byte pieces decoded 200 million before).
   */
  @Test
  void aLargeRequestInManySmallReadsIsScannedOnce() {
    int keys = 20_000;
    StringBuilder request = new StringBuilder("*" + (keys + 1) + "\r\n$4\r\nMGET\r\n");
    for (int k = 0; k < keys; k++) {
      request.append("$1\r\nx\r\n");
    }
    byte[] all = bytes(request + mb("GET", "after"));
    RespParser parser = new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER);
    ParserHarness harness = new ParserHarness(parser);
    for (int at = 0; at < all.length; at += 7) {
      harness.feed(Arrays.copyOfRange(all, at, Math.min(all.length, at + 7)));
    }
    assertThat(harness.decoded).hasSize(2);
    assertThat(harness.decoded.get(0)).startsWith("FORWARD MGET key=x key=x");
    assertThat(harness.decoded.get(1)).isEqualTo("FORWARD GET key=after args=GET,after");
    assertThat(parser.argsDecoded()).isEqualTo(keys + 1 + 2);
  }

  /**
   * A request whose next element would not fit in the largest buffer a connection gets is refused
   * once that buffer is full; before, the connection waited for ever for bytes it had no room for
   * (an MGET of 300,000 keys, 2.1 MB, was never answered).
   */
  @Test
  void aRequestThatFillsTheLargestBufferUnfinishedIsRefused() {
    RespParser parser = new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER);
    StringBuilder request = new StringBuilder("*1000000\r\n$4\r\nMGET\r\n");
    while (request.length() < parser.maxRequestBytes()) {
      request.append("$1\r\nx\r\n");
    }
    ParserHarness harness = new ParserHarness(parser);
    harness.feed(Arrays.copyOf(bytes(request.toString()), parser.maxRequestBytes()));
    assertThat(harness.decoded)
        .containsExactly(
            "REJECT_AND_CLOSE -ERR Protocol error: request too large (expected: <= "
                + parser.maxRequestBytes()
                + " bytes)");
  }

  @Test
  void aRequestLargerThanTheBufferLimitIsRefusedBeforeItIsBuffered() {
    RespParser parser = new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER);
    int values = parser.maxRequestBytes() / MAX_VALUE + 2;
    StringBuilder header = new StringBuilder("*" + (values + 1) + "\r\n$4\r\nMSET\r\n");
    String value = "x".repeat(MAX_VALUE - 10);
    StringBuilder body = new StringBuilder();
    for (int i = 0; i < values; i++) {
      body.append("$").append(value.length()).append("\r\n").append(value).append("\r\n");
    }
    ParserHarness harness = new ParserHarness(parser);
    harness.feed(bytes(header.toString() + body));
    assertThat(harness.decoded).hasSize(1);
    assertThat(harness.decoded.get(0))
        .startsWith("REJECT_AND_CLOSE -ERR Protocol error: request too large");
  }

  /**
   * Bounded fuzz: 3,000 streams of valid commands with random bytes flipped, inserted or cut, fed
   * in random splits. The parser never throws, never consumes more than it was given, always makes
   * progress when it returns a request, and after a framing error the stream is given up.
   */
  private static final byte[] FUZZ_BYTES = bytes("*$\r\n0123456789- ");

  @Test
  void mutatedStreamsNeverBreakTheParser() {
    Random random = new Random(2026);
    List<String> seeds = new ArrayList<>();
    wellFormed().forEach(a -> seeds.add((String) a.get()[0]));
    seeds.add("GET k\r\n");
    seeds.add("SET k v EX 10\r\n");
    for (int round = 0; round < 3_000; round++) {
      ByteArrayOutputStream stream = new ByteArrayOutputStream();
      for (int c = 0; c < 1 + random.nextInt(6); c++) {
        stream.writeBytes(bytes(seeds.get(random.nextInt(seeds.size()))));
      }
      byte[] input = stream.toByteArray();
      for (int m = 0; m < 1 + random.nextInt(4); m++) {
        int at = random.nextInt(input.length);
        switch (random.nextInt(3)) {
          case 0 -> input[at] = (byte) random.nextInt(256);
          case 1 -> {
            byte[] longer = new byte[input.length + 1];
            System.arraycopy(input, 0, longer, 0, at);
            longer[at] = FUZZ_BYTES[random.nextInt(FUZZ_BYTES.length)];
            System.arraycopy(input, at, longer, at + 1, input.length - at);
            input = longer;
          }
          default -> input = Arrays.copyOf(input, Math.max(1, at));
        }
      }
      RespParser parser =
          new RespParser(
              MAX_VALUE, random.nextBoolean() ? KeyPlacement.EVERY_SERVER : BY_FIRST_BYTE);
      byte[] buffer = new byte[input.length];
      int end = 0;
      int start = 0;
      boolean closed = false;
      while (end < input.length && !closed) {
        int n = Math.min(input.length - end, 1 + random.nextInt(12));
        System.arraycopy(input, end, buffer, end, n);
        end += n;
        while (start < end && !closed) {
          Request request = new Request();
          int consumed = parser.decode(buffer, start, end, request);
          assertThat(consumed).isBetween(0, end - start);
          if (consumed == 0) {
            break;
          }
          start += consumed;
          if (request.status() == Request.Status.REJECT_AND_CLOSE) {
            assertThat(new String(request.immediateReply(), StandardCharsets.ISO_8859_1))
                .startsWith("-ERR Protocol error: ")
                .endsWith("\r\n");
            closed = true;
          } else if (request.status() == Request.Status.FORWARD) {
            assertThat(request.wireLength()).isPositive();
            assertThat(request.respCommand()).isNotNull();
          }
        }
      }
    }
  }

  @Test
  void opTypesFollowTheCommand() {
    assertThat(parse(mb("GET", "k")).opType()).isEqualTo(OpType.GET);
    assertThat(parse(mb("MGET", "k")).opType()).isEqualTo(OpType.GET);
    assertThat(parse(mb("MGET", "a", "b")).opType()).isEqualTo(OpType.MULTIGET);
    assertThat(parse(mb("SET", "k", "v")).opType()).isEqualTo(OpType.SET);
    assertThat(parse(mb("INCR", "k")).opType()).isEqualTo(OpType.OTHER);
    assertThat(parse(mb("SET", "k", "v")).family()).isEqualTo(Command.Family.STORAGE);
  }

  private static Request parse(String input) {
    Request request = new Request();
    new RespParser(MAX_VALUE, KeyPlacement.EVERY_SERVER)
        .decode(bytes(input), 0, input.length(), request);
    return request;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }
}
