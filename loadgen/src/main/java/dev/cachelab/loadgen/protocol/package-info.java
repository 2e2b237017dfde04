/** Wire encoders and incremental reply parsers for the memcached text protocol and RESP2. */
package dev.cachelab.loadgen.protocol;
