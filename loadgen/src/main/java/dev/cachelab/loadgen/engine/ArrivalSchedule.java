package dev.cachelab.loadgen.engine;

/**
 * The intended send times of one open-loop connection: a Poisson process whose rate rises linearly
 * from 0 to the connection's full rate over the ramp, then stays there.
 *
 * <p>Arrivals are drawn as a unit-rate process in "full-rate time" (the time they would have at the
 * full rate from the start) and mapped through the inverse of the ramp's cumulative intensity: with
 * the full rate r and ramp T, Λ(t) = r t² / (2T) for t &lt; T and r (t - T/2) after, so a full-rate
 * time s is sent at sqrt(2 T s) while s &lt; T/2 and at s + T/2 from then on. A ramp keeps
 * processes that are still cold from start-up (JIT compilation, first connections) from building a
 * backlog that lasts into the measured seconds. Owned and called by the connection's event-loop
 * thread only.
 */
final class ArrivalSchedule {
  private final long startNanos;
  private final double meanInterArrivalNanos;
  private final double rampNanos;
  private double fullRateNanos; // the last arrival's time had the rate been full from the start

  /**
   * @param startNanos the run's start
   * @param meanInterArrivalNanos the mean gap between arrivals at the full rate
   * @param rampNanos how long the rate takes to rise from 0 to full (0: full from the start)
   */
  ArrivalSchedule(long startNanos, double meanInterArrivalNanos, double rampNanos) {
    if (!(meanInterArrivalNanos > 0) || !(rampNanos >= 0)) {
      throw new IllegalArgumentException(
          "mean gap must be > 0 and ramp >= 0: " + meanInterArrivalNanos + ", " + rampNanos);
    }
    this.startNanos = startNanos;
    this.meanInterArrivalNanos = meanInterArrivalNanos;
    this.rampNanos = rampNanos;
  }

  /**
   * The next arrival's intended send time.
   *
   * @param unitExponential a draw of the exponential distribution with mean 1
   */
  long next(double unitExponential) {
    fullRateNanos += unitExponential * meanInterArrivalNanos;
    return startNanos + (long) offsetNanos(fullRateNanos, rampNanos);
  }

  /** When an arrival at full-rate time {@code fullRateNanos} is sent under the ramp. */
  static double offsetNanos(double fullRateNanos, double rampNanos) {
    if (fullRateNanos >= rampNanos / 2) {
      return fullRateNanos + rampNanos / 2;
    }
    return Math.sqrt(2 * rampNanos * fullRateNanos);
  }
}
