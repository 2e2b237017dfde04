/**
 * Routers (hash with a ketama ring, round-robin, one per event loop) and the server set that pairs
 * each server generation with its router. Routing is done by the net threads; the server set is
 * changed by the thread that reloads the servers file.
 */
package dev.cachelab.middleware.routing;
