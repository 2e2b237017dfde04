/** Routing, the request queue and the worker threads. */
package dev.cachelab.middleware.dispatch;
