/** The net thread: selector loop, client connections and in-order reply writing. */
package dev.cachelab.middleware.net;
