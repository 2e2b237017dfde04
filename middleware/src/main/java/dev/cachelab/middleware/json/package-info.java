/** JSON text written by hand: the middleware's files and exports need only strings and arrays. */
package dev.cachelab.middleware.json;
