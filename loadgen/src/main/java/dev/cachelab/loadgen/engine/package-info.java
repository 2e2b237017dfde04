/** The event loops: one NIO selector thread per {@code --threads}, driving its clients. */
package dev.cachelab.loadgen.engine;
