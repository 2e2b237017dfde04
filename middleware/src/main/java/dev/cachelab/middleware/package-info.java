/**
 * The cachelab middleware, a memcached and redis proxy with net threads, a queue and workers: its
 * entry point and the wiring of its parts, each made by a small factory, with its metrics
 * registered in one place.
 */
package dev.cachelab.middleware;
