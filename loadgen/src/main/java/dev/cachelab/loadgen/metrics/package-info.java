/** Prometheus {@code /metrics} for {@code --metrics-port}. */
package dev.cachelab.loadgen.metrics;
