package dev.cachelab.middleware.it.isolation;

import java.util.List;

/**
 * Where the middleware's replies may differ from the model memcached's, all in one place (the
 * README's Protocol and Bad input sections list them). A reply frame from either side goes through
 * {@link #normalise} before the two are compared; everything not named here must be equal byte for
 * byte. Stateless.
 *
 * <ul>
 *   <li>cas uniques are per-server counters: the middleware's servers have seen every client's
 *       writes, the model one client's. {@code VALUE ... <cas>} and the meta {@code c<cas>} flag
 *       read {@code <cas>}; a {@code cas} request quotes the unique its own connection read.
 *   <li>A number that {@code decr} made shorter: memcached rewrites it in place, space-padded to
 *       its old length, unless a reply still holds the item, when it stores a new one unpadded
 *       (protocol.txt allows both), and a later {@code append} or {@code prepend} keeps the
 *       padding. Which one happens depends on what the connection has not yet been sent. So the
 *       spaces of a value or {@code VA} block are taken out (and its length with them); the
 *       generated values hold no others but in the {@code VALUE x 0 1} some carry.
 *   <li>{@code CLIENT_ERROR} wording: the middleware names the bad value and its range ({@code
 *       CLIENT_ERROR key too long: 251 bytes ...}), memcached often says {@code bad command line
 *       format}. The kind of reply is compared, not its text.
 *   <li>A storage command refused before its data block: memcached reads the block as the next
 *       command, the middleware skips it. The model gets the line alone ({@link ClientPrograms}).
 *   <li>A {@code get} of a key over 250 bytes: memcached 1.6.18 answers {@code CLIENT_ERROR} and
 *       drops the replies to the requests before it that it has not sent yet (so {@code set a 0 0
 *       1\r\nx\r\nget <251 bytes>\r\n} gets no {@code STORED}); the middleware answers every
 *       request. The model gets {@code mg <key> v}, refused alike without that loss.
 *   <li>{@code flush_all} and {@code verbosity} are refused ({@code CLIENT_ERROR ... not allowed},
 *       nothing with {@code noreply}) unless {@code --admin-commands true}: they act on every
 *       server for every client. The model gets a line memcached refuses alike ({@link
 *       #refusedLine}), not the command, which would empty it.
 *   <li>An {@code ms} with {@code C<cas>} is refused ({@code CLIENT_ERROR}, also when quiet) while
 *       writes go to several servers, as they do here: the model gets {@link #refusedLine}.
 *   <li>A line over 2048 bytes (but a {@code get}'s), a bad data length and a data block not
 *       followed by {@code \r\n}: the middleware answers {@code CLIENT_ERROR} and closes, since it
 *       cannot find the next request (memcached closes without a word, or answers and reads the
 *       data as commands). The model for such a request is {@link #CLOSING_REPLY}.
 * </ul>
 */
final class ModelDifferences {
  /** What a request that closes the connection is answered with, normalised. */
  static final List<String> CLOSING_REPLY = List.of("CLIENT_ERROR ...\r\n", ReplyFrames.CLOSED);

  private ModelDifferences() {}

  /**
   * What the model memcached gets for a command the middleware refuses (an admin command, a meta
   * compare-and-swap): a line it answers with {@code CLIENT_ERROR}, or with nothing after {@code
   * noreply}.
   *
   * @param noreply {@code " noreply"} or {@code ""}
   */
  static String refusedLine(String noreply) {
    return "touch ~refused x" + noreply + "\r\n";
  }

  /** The frame with the allowed differences taken out. */
  static String normalise(String frame) {
    if (frame.startsWith("CLIENT_ERROR ")) {
      return "CLIENT_ERROR ...\r\n";
    }
    int lineEnd = frame.indexOf("\r\n");
    if (lineEnd < 0) {
      return frame; // CLOSED
    }
    String[] tokens = frame.substring(0, lineEnd).split(" ", -1);
    String data = frame.substring(lineEnd);
    int lengthToken = tokens[0].equals("VALUE") ? 3 : tokens[0].equals("VA") ? 1 : -1;
    if (lengthToken > 0 && data.indexOf(' ') >= 0) {
      String block = data.substring(2, data.length() - 2).replace(" ", "");
      tokens[lengthToken] = Integer.toString(block.length());
      data = "\r\n" + block + "\r\n";
    }
    if (tokens[0].equals("VALUE") && tokens.length == 5) {
      tokens[4] = "<cas>";
    } else if (isMetaReply(tokens[0])) {
      for (int i = 1; i < tokens.length; i++) {
        if (tokens[i].matches("c[0-9]+")) {
          tokens[i] = "c<cas>";
        }
      }
    }
    return String.join(" ", tokens) + data;
  }

  private static boolean isMetaReply(String code) {
    return switch (code) {
      case "VA", "HD", "EN", "NF", "NS", "EX", "MN" -> true;
      default -> false;
    };
  }
}
