package dev.cachelab.loadgen.workload;

import dev.cachelab.loadgen.config.IntRange;
import java.util.SplittableRandom;

/**
 * Value bytes for SETs: one pre-filled buffer per client, sliced per request so nothing is
 * allocated per request. With {@code --random-data} the buffer holds random printable bytes and
 * each SET starts at a random offset; otherwise it is a constant fill. Used by one client's thread
 * only.
 */
public final class ValueSource {
  private static final int OFFSET_SPREAD = 4096;

  private final byte[] bytes;
  private final IntRange sizes;
  private final boolean randomData;
  private final SplittableRandom random;

  public ValueSource(IntRange sizes, boolean randomData, SplittableRandom random) {
    this.sizes = sizes;
    this.randomData = randomData;
    this.random = random;
    this.bytes = new byte[sizes.max() + (randomData ? OFFSET_SPREAD : 0)];
    if (randomData) {
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = (byte) ('!' + random.nextInt(94));
      }
    } else {
      java.util.Arrays.fill(bytes, (byte) 'x');
    }
  }

  /** The backing bytes; a value is {@code bytes()[offset() .. offset() + size)}. */
  public byte[] bytes() {
    return bytes;
  }

  /** Size of the next value, uniform over the configured range. */
  public int nextSize() {
    return sizes.min() == sizes.max()
        ? sizes.min()
        : sizes.min() + random.nextInt(sizes.max() - sizes.min() + 1);
  }

  /** Start offset of the next value. */
  public int nextOffset() {
    return randomData ? random.nextInt(OFFSET_SPREAD) : 0;
  }

  /** Largest value size this source produces. */
  public int maxSize() {
    return sizes.max();
  }
}
