/** Latency histograms and counters: per-thread recording, per-second sampling, run results. */
package dev.cachelab.loadgen.stats;
