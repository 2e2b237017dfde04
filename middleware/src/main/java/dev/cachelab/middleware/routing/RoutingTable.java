package dev.cachelab.middleware.routing;

import dev.cachelab.middleware.servers.ServerGeneration;

/**
 * A {@link ServerGeneration} with the router that maps requests onto its positions. The net thread
 * (each event loop) routes a decoded request with the table current then and stamps the request
 * with its generation, which serves it from there on. Immutable; the router is used by the net
 * threads only (with several event loops, each routes with a router of its own).
 */
public record RoutingTable(ServerGeneration generation, Router router) {}
