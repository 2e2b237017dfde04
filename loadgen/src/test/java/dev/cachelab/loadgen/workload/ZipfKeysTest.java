package dev.cachelab.loadgen.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cachelab.loadgen.config.KeyPattern;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Z pattern against the Zipf law P(n) proportional to n^-exp (memtier's documented {@code
 * --key-zipf-exp}): Pearson's chi-square goodness of fit with a fixed seed, so the outcome is the
 * same on every run.
 */
class ZipfKeysTest {
  private static final int SAMPLES = 400_000;
  private static final long FIRST = 1;
  private static final long LAST = 1_000;

  /** Draw counts per key number, index 0 = key {@code first}. */
  static long[] draw(ZipfKeys zipf, int samples, long seed) {
    long[] counts = new long[(int) (zipf.last() - zipf.first() + 1)];
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < samples; i++) {
      long k = zipf.next(random);
      assertThat(k).isBetween(zipf.first(), zipf.last());
      counts[(int) (k - zipf.first())]++;
    }
    return counts;
  }

  @ParameterizedTest
  @ValueSource(doubles = {0.5, 0.99, 1.0, 2.0})
  void keyFrequenciesFitTheZipfLaw(double exponent) {
    long[] counts = draw(new ZipfKeys(FIRST, LAST, exponent), SAMPLES, 42);
    double[] fit = ZipfLaw.chiSquare(counts, ZipfLaw.probabilities(FIRST, LAST, exponent));
    assertThat(fit[1]).as("degrees of freedom").isGreaterThan(20);
    assertThat(fit[0]).as("chi-square, df %s", fit[1]).isLessThan(ZipfLaw.critical999(fit[1]));
    // Key 1 is the hottest and key 2 is drawn 2^exp times less often.
    assertThat((double) counts[0] / counts[1]).isCloseTo(Math.pow(2, exponent), within(exponent));
  }

  private static org.assertj.core.data.Offset<Double> within(double exponent) {
    return org.assertj.core.data.Offset.offset(0.05 * Math.pow(2, exponent));
  }

  @Test
  void theFitRejectsANeighbouringExponent() {
    // The test has the power to fail: draws with 1.0 do not pass as 1.05, nor as 0.95.
    long[] counts = draw(new ZipfKeys(FIRST, LAST, 1.0), SAMPLES, 42);
    for (double wrong : new double[] {0.95, 1.05}) {
      double[] fit = ZipfLaw.chiSquare(counts, ZipfLaw.probabilities(FIRST, LAST, wrong));
      assertThat(fit[0])
          .as("chi-square against %s", wrong)
          .isGreaterThan(ZipfLaw.critical999(fit[1]));
    }
  }

  @Test
  void aRangeThatStartsHigherFollowsTheLawOfItsKeyNumbers() {
    // memtier's law is over key numbers, not ranks: keys 101..600 weigh n^-exp.
    long[] counts = draw(new ZipfKeys(101, 600, 1.5), SAMPLES, 7);
    double[] fit = ZipfLaw.chiSquare(counts, ZipfLaw.probabilities(101, 600, 1.5));
    assertThat(fit[0]).isLessThan(ZipfLaw.critical999(fit[1]));
  }

  @Test
  void keyMinimumZeroDrawsFromKeyOneAsMemtierDoes() {
    ZipfKeys zipf = ZipfKeys.forKeyRange(0, 50, 1.0);
    assertThat(zipf.first()).isEqualTo(1);
    assertThat(zipf.last()).isEqualTo(50);
    KeySequence s = new KeySequence(KeyPattern.ZIPF, 0, 50, 25, 8, 1.0, new SplittableRandom(3));
    long zeros = 0;
    for (int i = 0; i < 10_000; i++) {
      long k = s.next();
      assertThat(k).isBetween(1L, 50L);
      zeros += k == 0 ? 1 : 0;
    }
    assertThat(zeros).isZero();
    assertThat(ZipfKeys.forKeyRange(7, 7, 3.0).next(new SplittableRandom(1))).isEqualTo(7);
  }

  @Test
  void aHugeRangeNeedsNoTable() {
    ZipfKeys zipf = new ZipfKeys(1, 100_000_000, 0.99);
    SplittableRandom random = new SplittableRandom(11);
    long ones = 0;
    for (int i = 0; i < 100_000; i++) {
      long k = zipf.next(random);
      assertThat(k).isBetween(1L, 100_000_000L);
      ones += k == 1 ? 1 : 0;
    }
    // P(1) = 1 / H(10^8, 0.99), about 0.0497
    double harmonic = 0;
    for (int n = 1; n <= 1_000_000; n++) {
      harmonic += Math.pow(n, -0.99);
    }
    // tail 10^6..10^8 by the integral of x^-0.99
    harmonic += (Math.pow(1e8, 0.01) - Math.pow(1e6, 0.01)) / 0.01;
    assertThat(ones / 100_000.0)
        .isCloseTo(1 / harmonic, org.assertj.core.data.Offset.offset(0.003));
  }

  @Test
  void sameSeedSameKeys() {
    ZipfKeys zipf = new ZipfKeys(1, 10_000, 1.2);
    assertThat(draw(zipf, 1000, 5)).isEqualTo(draw(zipf, 1000, 5));
  }

  @Test
  void rejectsBadParameters() {
    assertThatThrownBy(() -> new ZipfKeys(0, 10, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("zipf key range: 0-10 (expected 1 <= first <= last)");
    assertThatThrownBy(() -> new ZipfKeys(1, 10, 0))
        .hasMessage("zipf exponent: must be > 0, got 0.0");
    assertThatThrownBy(() -> new ZipfKeys(1, 10, Double.NaN))
        .hasMessage("zipf exponent: must be > 0, got NaN");
  }
}
