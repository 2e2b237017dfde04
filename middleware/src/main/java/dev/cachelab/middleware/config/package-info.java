/** Command line flags to a validated, immutable configuration (main thread). */
package dev.cachelab.middleware.config;
