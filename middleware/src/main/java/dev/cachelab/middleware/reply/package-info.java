/**
 * Building a request's reply from the servers' replies or the error replies standing in for them,
 * and handing it to the client connection. One builder and finisher per thread that serves requests
 * (a worker or an event loop); that thread only.
 */
package dev.cachelab.middleware.reply;
