/**
 * Workers' blocking connections to the servers (one set per worker, with the steps every fan-out
 * strategy takes with them), server reply framing and limits, the prober and the watchdog that
 * enforces timeouts.
 */
package dev.cachelab.middleware.backend;
