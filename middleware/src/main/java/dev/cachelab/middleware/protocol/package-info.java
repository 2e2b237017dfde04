/**
 * The memcached text protocol on the client side: commands, the incremental request parser and the
 * pooled request object.
 */
package dev.cachelab.middleware.protocol;
