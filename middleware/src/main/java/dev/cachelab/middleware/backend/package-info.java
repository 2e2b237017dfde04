/**
 * Workers' blocking connections to the memcached servers and the watchdog that enforces timeouts.
 */
package dev.cachelab.middleware.backend;
