/** Validated run settings: memtier's options and the loadgen extensions, as immutable values. */
package dev.cachelab.loadgen.config;
