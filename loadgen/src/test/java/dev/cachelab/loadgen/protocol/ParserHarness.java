package dev.cachelab.loadgen.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Feeds a parser a byte stream in chunks of a given size, as a connection would. */
final class ParserHarness {
  /** One parsed reply: hits and whether it was an error. */
  record Reply(int hits, boolean error) {}

  private ParserHarness() {}

  static List<Reply> feed(ReplyParser parser, int[] expectedKeys, String wire, int chunk)
      throws ProtocolException {
    byte[] bytes = wire.getBytes(StandardCharsets.ISO_8859_1);
    ByteBuffer in = ByteBuffer.allocate(256);
    List<Reply> replies = new ArrayList<>();
    int next = 0;
    boolean armed = false;
    int fed = 0;
    while (fed < bytes.length) {
      int n = Math.min(chunk, Math.min(bytes.length - fed, in.remaining()));
      in.put(bytes, fed, n);
      fed += n;
      in.flip();
      while (in.hasRemaining() && next < expectedKeys.length) {
        if (!armed) {
          parser.expect(expectedKeys[next]);
          armed = true;
        }
        if (!parser.parse(in)) {
          break;
        }
        replies.add(new Reply(parser.hits(), parser.errorReply()));
        armed = false;
        next++;
      }
      in.compact();
    }
    return replies;
  }

  /** Asserts that {@code wire} parses to {@code replies} when fed in chunks of every size. */
  static void assertParsesInAnySplit(
      WireProtocol protocol, int[] expectedKeys, String wire, Reply... replies)
      throws ProtocolException {
    for (int chunk = 1; chunk <= wire.length(); chunk++) {
      assertThat(feed(protocol.newParser(), expectedKeys, wire, chunk))
          .as("chunk %d", chunk)
          .containsExactly(replies);
    }
  }

  static String encode(java.util.function.Consumer<ByteBuffer> encoder) {
    ByteBuffer out = ByteBuffer.allocate(4096);
    encoder.accept(out);
    out.flip();
    byte[] bytes = new byte[out.remaining()];
    out.get(bytes);
    return new String(bytes, StandardCharsets.ISO_8859_1);
  }
}
