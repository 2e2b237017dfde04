/**
 * Fan-out strategies: how one request is served from its servers (a single read with fallback, a
 * split multi-key read, a replicated write, cas propagation, a pipelined batch) and the repair of
 * replicas that diverge. One instance of each per worker; its thread only.
 */
package dev.cachelab.middleware.fanout;
