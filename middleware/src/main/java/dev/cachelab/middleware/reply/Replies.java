package dev.cachelab.middleware.reply;

import dev.cachelab.middleware.protocol.Command;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Server reply lines named after their wire tokens, and what counts as success. Stateless. */
public final class Replies {
  static final byte[] STORED = ascii("STORED\r\n");
  static final byte[] DELETED = ascii("DELETED\r\n");
  static final byte[] TOUCHED = ascii("TOUCHED\r\n");
  static final byte[] OK = ascii("OK\r\n");

  private Replies() {}

  /** Whether {@code reply[0, length)} is the success reply of {@code command}. */
  public static boolean isSuccess(Command command, byte[] reply, int length) {
    return switch (command) {
      case SET, ADD, REPLACE, APPEND, PREPEND, CAS -> equals(reply, length, STORED);
      case DELETE -> equals(reply, length, DELETED);
      case TOUCH -> equals(reply, length, TOUCHED);
      case INCR, DECR -> length > 2 && reply[0] >= '0' && reply[0] <= '9';
      case FLUSH_ALL, VERBOSITY -> equals(reply, length, OK);
      case MS, MD -> startsWith(reply, length, 'H', 'D');
      case MA -> startsWith(reply, length, 'H', 'D') || startsWith(reply, length, 'V', 'A');
      default -> true;
    };
  }

  /**
   * Whether a meta-command reply may be left out for the {@code q} flag, as memcached 1.6 does: a
   * miss ({@code EN}) of {@code mg}, a success ({@code HD}) of {@code ms md}, and a success of
   * {@code ma}, with its value ({@code VA}) or without ({@code HD}). ({@code me} has no {@code q}.)
   */
  static boolean quietSuppressed(Command command, byte[] reply, int length) {
    return switch (command) {
      case MG -> startsWith(reply, length, 'E', 'N');
      case MS, MD -> startsWith(reply, length, 'H', 'D');
      case MA -> startsWith(reply, length, 'H', 'D') || startsWith(reply, length, 'V', 'A');
      default -> false;
    };
  }

  private static boolean startsWith(byte[] reply, int length, char first, char second) {
    return length >= 2 && reply[0] == first && reply[1] == second;
  }

  private static boolean equals(byte[] reply, int length, byte[] expected) {
    return Arrays.equals(reply, 0, length, expected, 0, expected.length);
  }

  private static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }
}
