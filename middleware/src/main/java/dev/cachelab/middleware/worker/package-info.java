/**
 * The request queue between the net threads and the workers, and the worker threads that take
 * requests from it and serve them over blocking server connections. The queue is filled by the net
 * threads and drained by the workers; a worker's state is its thread's only.
 */
package dev.cachelab.middleware.worker;
