/** The cachelab load generator: memtier-compatible options and output. */
package dev.cachelab.loadgen;
