package dev.cachelab.loadgen.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ArrivalScheduleTest {
  private static final double SECOND_NANOS = 1e9;

  /** Arrivals counted per second of a 6 s run at 10,000/s with a 2 s ramp. */
  private static long[] perSecond(double rampSeconds) {
    ArrivalSchedule schedule = new ArrivalSchedule(0, SECOND_NANOS / 10_000, rampSeconds * 1e9);
    SplittableRandom random = new SplittableRandom(7);
    long[] counts = new long[6];
    for (long t = schedule.next(exp(random)); t < 6e9; t = schedule.next(exp(random))) {
      counts[(int) (t / SECOND_NANOS)]++;
    }
    return counts;
  }

  private static double exp(SplittableRandom random) {
    return -Math.log(1.0 - random.nextDouble());
  }

  @Test
  void theRateRisesLinearlyOverTheRampThenStaysFull() {
    long[] counts = perSecond(2);
    // a linear rise over 2 s: 1/4 of the full rate's arrivals in the first second, 3/4 in the
    // second; the full rate after (Poisson counts: within 5 standard deviations)
    assertEquals(2_500, counts[0], 5 * Math.sqrt(2_500));
    assertEquals(7_500, counts[1], 5 * Math.sqrt(7_500));
    for (int second = 2; second < 6; second++) {
      assertEquals(10_000, counts[second], 5 * Math.sqrt(10_000), "second " + second);
    }
  }

  @Test
  void withoutARampTheFullRateStartsAtOnce() {
    long[] counts = perSecond(0);
    for (long count : counts) {
      assertEquals(10_000, count, 5 * Math.sqrt(10_000));
    }
  }

  @Test
  void theMappingIsContinuousAndIncreasing() {
    double ramp = 2e9;
    assertEquals(0, ArrivalSchedule.offsetNanos(0, ramp));
    assertEquals(ramp, ArrivalSchedule.offsetNanos(ramp / 2, ramp), 1e-3);
    double previous = -1;
    for (double s = 0; s < 3e9; s += 1e7) {
      double t = ArrivalSchedule.offsetNanos(s, ramp);
      assertTrue(t > previous && t >= s, "at " + s);
      previous = t;
    }
  }

  @Test
  void aNegativeRampIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new ArrivalSchedule(0, 100, -1));
  }
}
