/**
 * Event-loop serving: the net thread itself sends requests to the servers over non-blocking
 * connections and writes their replies, with no queue and no worker. Each event loop's net thread
 * only.
 */
package dev.cachelab.middleware.loop;
