package dev.cachelab.middleware.routing;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;

/**
 * A ketama-style consistent-hash ring: each server owns 160 points, four per MD5 digest of {@code
 * "<host:port>-<i>"}; a key belongs to the first point clockwise of the first four bytes
 * (little-endian) of its MD5. Replicas are the next distinct servers clockwise. Built once; {@link
 * #replicas} is for one thread at a time (it reuses a digest), the net thread.
 */
public final class KetamaRing {
  static final int POINTS_PER_SERVER = 160;

  private final long[] pointHashes;
  private final int[] pointServers;
  private final int serverCount;
  private final MessageDigest md5;
  private final byte[] digest = new byte[16];

  public KetamaRing(List<String> servers) {
    this.serverCount = servers.size();
    this.md5 = newMd5();
    int points = POINTS_PER_SERVER * serverCount;
    long[] packed = new long[points];
    int p = 0;
    for (int server = 0; server < serverCount; server++) {
      for (int i = 0; i < POINTS_PER_SERVER / 4; i++) {
        byte[] d = md5.digest((servers.get(server) + "-" + i).getBytes(StandardCharsets.UTF_8));
        for (int h = 0; h < 4; h++) {
          long hash = littleEndian(d, h * 4);
          // hash in the high 32 bits, server in the low bits: sorting orders by hash, then server.
          packed[p++] = (hash << 16) | server;
        }
      }
    }
    Arrays.sort(packed);
    pointHashes = new long[points];
    pointServers = new int[points];
    for (int i = 0; i < points; i++) {
      pointHashes[i] = packed[i] >>> 16;
      pointServers[i] = (int) (packed[i] & 0xFFFF);
    }
  }

  /**
   * Writes the key's {@code count} distinct replicas, primary first, into {@code out}.
   *
   * @return the number written ({@code min(count, servers)})
   */
  public int replicas(byte[] key, int from, int to, int count, int[] out) {
    md5.update(key, from, to - from);
    try {
      md5.digest(digest, 0, 16);
    } catch (java.security.DigestException e) {
      throw new IllegalStateException(e);
    }
    long hash = littleEndian(digest, 0);
    int index = Arrays.binarySearch(pointHashes, hash);
    if (index < 0) {
      index = -index - 1;
    }
    int wanted = Math.min(count, serverCount);
    int found = 0;
    for (int step = 0; step < pointHashes.length && found < wanted; step++) {
      int server = pointServers[(index + step) % pointHashes.length];
      boolean seen = false;
      for (int i = 0; i < found; i++) {
        if (out[i] == server) {
          seen = true;
          break;
        }
      }
      if (!seen) {
        out[found++] = server;
      }
    }
    return found;
  }

  /** The key's primary server. */
  public int primary(byte[] key, int from, int to, int[] scratch) {
    replicas(key, from, to, 1, scratch);
    return scratch[0];
  }

  private static long littleEndian(byte[] b, int offset) {
    return (b[offset] & 0xFFL)
        | (b[offset + 1] & 0xFFL) << 8
        | (b[offset + 2] & 0xFFL) << 16
        | (b[offset + 3] & 0xFFL) << 24;
  }

  private static MessageDigest newMd5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("MD5 is required by every Java platform", e);
    }
  }
}
