/**
 * The cachelab middleware: a memcached text-protocol proxy with a net thread, a queue and workers.
 */
package dev.cachelab.middleware;
