/**
 * The global budget for bytes buffered on behalf of clients, shared by the net threads (client
 * buffers) and the threads that read server replies (workers, event loops).
 */
package dev.cachelab.middleware.memory;
