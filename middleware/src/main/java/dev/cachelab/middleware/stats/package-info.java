/**
 * Per-thread recording, statistics windows, window logs, the run summary and the Prometheus
 * endpoint.
 */
package dev.cachelab.middleware.stats;
