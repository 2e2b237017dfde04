package dev.cachelab.middleware.protocol;

/**
 * Decodes the base64 key of a meta command with the {@code b} flag as memcached 1.6 decodes it
 * ({@code base64.c}): bytes outside the alphabet are skipped, the rest must come in groups of four,
 * and padding ends the key. No allocation; stateless, any thread.
 */
public final class Base64Key {
  /** Largest decoded key: a key of {@link RequestParser#MAX_KEY_BYTES} base64 characters. */
  public static final int MAX_DECODED_BYTES = RequestParser.MAX_KEY_BYTES / 4 * 3;

  private static final byte SKIPPED = -1;
  private static final byte[] VALUES = new byte[256];

  static {
    java.util.Arrays.fill(VALUES, SKIPPED);
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < alphabet.length(); i++) {
      VALUES[alphabet.charAt(i)] = (byte) i;
    }
    VALUES['='] = 0;
  }

  private Base64Key() {}

  /**
   * Decodes {@code key[from, to)} into {@code out} (at least {@link #MAX_DECODED_BYTES} long for a
   * key memcached accepts).
   *
   * @return the decoded length, or -1 where memcached fails to decode it (it answers {@code
   *     CLIENT_ERROR error decoding key}) or {@code out} is too short
   */
  public static int decode(byte[] key, int from, int to, byte[] out) {
    int symbols = 0;
    for (int i = from; i < to; i++) {
      if (VALUES[key[i] & 0xff] != SKIPPED) {
        symbols++;
      }
    }
    if (symbols == 0 || symbols % 4 != 0 || symbols / 4 * 3 > out.length) {
      return -1;
    }
    int length = 0;
    int inBlock = 0;
    int block = 0;
    int padding = 0;
    for (int i = from; i < to; i++) {
      byte value = VALUES[key[i] & 0xff];
      if (value == SKIPPED) {
        continue;
      }
      padding += key[i] == '=' ? 1 : 0;
      block = block << 6 | value;
      if (++inBlock == 4) {
        out[length++] = (byte) (block >> 16);
        out[length++] = (byte) (block >> 8);
        out[length++] = (byte) block;
        inBlock = 0;
        block = 0;
        if (padding > 0) {
          return padding <= 2 ? length - padding : -1;
        }
      }
    }
    return length;
  }
}
