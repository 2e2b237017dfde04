package dev.cachelab.middleware.stats;

/** The three per-request times the middleware records, in microseconds. */
public enum Metric {
  /** Reply written minus request received: the middleware's response time. */
  RESPONSE_TIME("response_time"),
  /** Dequeued minus enqueued: time waiting in the request queue. */
  QUEUE_TIME("queue_time"),
  /** Replied minus sent: time at the server(s), network included. */
  SERVICE_TIME("service_time"),
  /**
   * Published minus enqueued: the part of the queue time a request spends staged by the net thread
   * until the end of its selector round (0 for requests queued by a worker).
   */
  STAGING_TIME("staging_time");

  private final String label;

  Metric(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
