/**
 * The servers as configured at one time: a generation of the server list, each server's shared
 * health (ejection, counts), and the error replies naming them. Below the protocol, so the request
 * can carry the generation it was routed with. Immutable generations read by every thread; health
 * is updated by the workers, event loops and prober.
 */
package dev.cachelab.middleware.servers;
